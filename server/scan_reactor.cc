// roost.v1.Lookup/Scan: a block table's entries in key order, over a
// server stream.
//
// The call is checked as a Get is (admission by --max-in-flight and its
// client's share of it, deadline, the request parsed in place by
// request_codec, table name, access policy, key sizes), and its limit
// against --max-scan-keys. It pins the version it
// reads (the serving one, or the one it names: PinVersion) for the whole
// stream, by a reference of its own, so that neither a swap nor the end of a
// grace period changes what a scan reads half way. Then one message at a
// time: entries are copied from the table's iterator straight into a
// response buffer of kMessageBytes (or one entry's size, if larger), the
// message is written, and only once gRPC has taken it (OnWriteDone) is the
// next one filled; so a slow client holds at most one message, and one
// that stops reading is cancelled after --send-timeout (StreamWatch). The
// last message says whether the limit stopped the scan with keys left in
// its range (`more`). Every message names the version. A scan whose file a
// writer asks for (its lease breaks) ends UNAVAILABLE at its next message,
// so that the writer is not held off.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "server/call_context.h"
#include "server/call_helpers.h"
#include "server/lookup_service.h"
#include "storage/table.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {
namespace {

using Clock = std::chrono::steady_clock;

// A message's size, short of one entry larger than that alone: well under
// any --max-message-size, and small enough that many scans in flight hold
// little of --max-response-memory.
constexpr size_t kMessageBytes = 256 << 10;

}  // namespace

class LookupService::ScanReactor final
    : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  ScanReactor(LookupService* service, grpc::CallbackServerContext* context,
              const grpc::ByteBuffer& request)
      : service_(service),
        context_(context),
        start_(Clock::now()),
        watched_(context) {
    service_->metrics_->Started(Method::kScan);
    service_->metrics_->MessageReceived(Method::kScan);
    if (CallContext* call = CallContext::Of(context)) client_ = call->client();
    if (grpc::Status s = service_->EnterCall(client_); !s.ok()) {
      End(s);
      return;
    }
    entered_ = true;
    if (grpc::Status s = Begin(request); !s.ok()) {
      End(s);
      return;
    }
    service_->scans_.Add(&watched_);
    watching_ = true;
    SendNext();
  }

  void OnWriteDone(bool ok) override {
    watched_.WriteDone();
    response_.Clear();  // the message's memory goes back now
    if (!ok) {
      End(grpc::Status(grpc::StatusCode::CANCELLED,
                       "the stream was closed or cancelled (a client that "
                       "does not read is cut off after --send-timeout)"));
      return;
    }
    service_->metrics_->MessageSent(Method::kScan);
    if (last_) {
      End(grpc::Status::OK);
      return;
    }
    SendNext();
  }

  void OnDone() override {
    if (watching_) service_->scans_.Remove(&watched_);
    if (entered_) service_->LeaveCall(client_);
    delete this;
  }

 private:
  // Checks the request, pins the version and places the iterator.
  grpc::Status Begin(const grpc::ByteBuffer& request) {
    if (DeadlinePassed(context_)) return DeadlinePassedError();
    const std::string_view bytes = RequestBytes(request, &holder_);
    if (absl::Status s = ParseScanRequest(bytes, &query_); !s.ok()) {
      return Malformed(s, context_, "Scan");
    }
    const ServerOptions& options = service_->options_;
    if (query_.table.empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "table name is empty");
    }
    if (grpc::Status s = Authorize(service_->access_, *context_, &query_.table);
        !s.ok()) {
      return s;
    }
    if (query_.limit > options.max_scan_keys) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          StrCat("Scan limit of ", query_.limit,
                 " entries exceeds --max-scan-keys ", options.max_scan_keys));
    }
    limit_ = query_.limit == 0 ? options.max_scan_keys : query_.limit;
    for (const auto& [name, bound] :
         {std::pair{"start", query_.start}, std::pair{"end", query_.end},
          std::pair{"prefix", query_.prefix}}) {
      if (bound.size() > options.max_key_size) {
        return grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT,
            StrCat(name, " is ", bound.size(), " bytes, more than ",
                   "--max-key-size ", options.max_key_size));
      }
    }
    {
      const auto tables = service_->registry_->Tables();
      TableEntry* entry = tables.Find(query_.table);
      if (entry == nullptr) {
        return grpc::Status(
            grpc::StatusCode::NOT_FOUND,
            StrCat("no table ", PrintableKey(query_.table, 128)));
      }
      VersionSlots<ServingVersion>::Pin pin;
      if (grpc::Status s = PinVersion(*entry, query_.version, &pin); !s.ok()) {
        return s;
      }
      // A reference of the scan's own: the slot and the table entry are
      // let go of now, the version when the scan ends.
      version_ = pin.Share();
    }
    if (version_->table().format() != TableFormat::kBlock) {
      return grpc::Status(
          grpc::StatusCode::FAILED_PRECONDITION,
          StrCat("table \"", query_.table, "\" ", version_->version_name,
                 " is a ", TableFormatName(version_->table().format()),
                 " table, which keeps no key order: only block tables can "
                 "be scanned"));
    }
    iterator_ = version_->table().NewIterator();
    iterator_->Seek(std::max(query_.start, query_.prefix));
    return grpc::Status::OK;
  }

  // Whether the iterator is on an entry the scan returns (limit aside).
  bool InRange() const {
    if (!iterator_->Valid()) return false;
    const std::string_view key = iterator_->key();
    return (query_.end.empty() || key < query_.end) &&
           key.starts_with(query_.prefix);
  }

  // Fills the next message and starts writing it; the last one ends the
  // scan when it has been taken.
  void SendNext() {
    const ServerOptions& options = service_->options_;
    // A writer waits for the file (its lease) until the scan lets go of
    // the version: end the scan rather than hold the writer, or be cut off
    // by the kernel (lease-break-time) and read pages the writer took.
    if (version_->lease && !version_->lease->Held()) [[unlikely]] {
      End(grpc::Status(
          grpc::StatusCode::UNAVAILABLE,
          StrCat("table \"", query_.table, "\" ", version_->version_name,
                 " is being modified on the server; scan again "
                 "(from after the last key read)")));
      return;
    }
    const std::string& version_field = version_->batch_version_field;
    // ScanResponse.withdrawn_through, in every message.
    const std::string withdrawn = version_->WithdrawnField(4);
    const size_t tail = version_field.size() + withdrawn.size() + kScanMoreSize;
    size_t room = std::min<size_t>(kMessageBytes, options.max_message_size);
    bool in_range = sent_ < limit_ && InRange();
    if (in_range) {
      room = std::max(
          room, ScanEntrySize(iterator_->key(), iterator_->value()) + tail);
    } else {
      room = tail;
    }
    auto buffer = ResponseBuffer::Create(service_->memory_, client_, room,
                                         options.max_message_size);
    if (!buffer.ok()) {
      End(ToClient(buffer.status(), options.data_dir));
      return;
    }
    char* const begin = buffer->data();
    char* out = begin;
    while (in_range) {
      const std::string_view key = iterator_->key();
      const std::string_view value = iterator_->value();
      if (static_cast<size_t>(out - begin) + ScanEntrySize(key, value) + tail >
          room) {
        break;
      }
      out = WriteScanEntry(key, value, out);
      ++sent_;
      iterator_->Next();
      in_range = sent_ < limit_ && InRange();
    }
    if (!iterator_->Valid() && !iterator_->status().ok()) {
      End(ToClient(iterator_->status(), options.data_dir));
      return;
    }
    last_ = !in_range;
    std::memcpy(out, version_field.data(), version_field.size());
    out += version_field.size();
    if (!withdrawn.empty()) {
      std::memcpy(out, withdrawn.data(), withdrawn.size());
      out += withdrawn.size();
    }
    // Stopped by the limit with keys left in range: the client may go on.
    if (last_ && sent_ == limit_ && InRange()) out = WriteScanMore(out);
    buffer->Shrink(static_cast<size_t>(out - begin));
    response_ = std::move(*buffer).Release();
    watched_.WriteStarted();
    StartWrite(&response_);
  }

  void End(const grpc::Status& status) {
    service_->metrics_->Handled(Method::kScan, status.error_code(),
                                Clock::now() - start_);
    Finish(status);
  }

  LookupService* service_;
  grpc::CallbackServerContext* context_;
  // Whose share its call and messages count against; held by the context.
  ClientLimits::Share* client_ = nullptr;
  const Clock::time_point start_;
  StreamWatch::Stream watched_;
  grpc::Slice holder_;  // the request's bytes, which query_ points into
  ScanQuery query_;
  uint32_t limit_ = 0;
  // Declared before the iterator, so destroyed after it.
  std::shared_ptr<const ServingVersion> version_;
  std::unique_ptr<TableIterator> iterator_;
  grpc::ByteBuffer response_;
  uint32_t sent_ = 0;
  bool last_ = false;
  bool entered_ = false;
  bool watching_ = false;
};

grpc::ServerWriteReactor<grpc::ByteBuffer>* LookupService::Scan(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return new ScanReactor(this, context, *request);
}

}  // namespace roost
