#include "server/lookup_service.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "server/call_context.h"
#include "server/call_helpers.h"
#include "server/log.h"
#include "server/row_requests.h"
#include "storage/table.h"
#include "storage/version/data_dir.h"
#include "util/escape.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

using Clock = std::chrono::steady_clock;

std::string KeyName(size_t index, bool batch) {
  return batch ? StrCat("key ", index) : std::string("key");
}

// Scratch space a handler thread reuses across requests, so that a batch
// allocates nothing but its response.
struct Scratch {
  LookupRequest request;
  std::vector<LookupResult> results;
  ValuePins pins;  // the decompressed blocks results point into
  RowAnswer rows;  // a request's fields and score, on a table of rows
};
Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Looks up every key of `keys` in `version`'s table, filling scratch.results
// (views valid while the version and scratch.pins live) and `tally`.
absl::Status LookUp(const ServingVersion& version,
                    std::span<const std::string_view> keys, Scratch& s,
                    LookupTally* tally) {
  s.results.resize(keys.size());
  s.pins.Clear();
  ROOST_RETURN_IF_ERROR(version.MultiGet(keys, s.results, &s.pins));
  tally->has_probes = version.table().counts_blocks_touched();
  for (const LookupResult& r : s.results) tally->Add(r.found, r.blocks_touched);
  return absl::OkStatus();
}

// The three encodings of a Get's or MultiGet's response, each in two
// passes over the results: Size() first, so that a response over the
// limits is refused before a byte of any value is copied, then Write() into
// exactly that much room (request_codec.h). Plain types, chosen once per
// request by LookupService::Respond's template argument: nothing virtual,
// no allocation per key. The version field, encoded once per version,
// follows what Write() wrote.

EncodedResult Encoded(const LookupResult& result) {
  return {result.found, result.value};
}

// A GetResponse: the one result.
struct GetEncoding {
  static const std::string& VersionField(const ServingVersion& version) {
    return version.get_version_field;
  }
  static constexpr int kWithdrawnField = 4;  // GetResponse.withdrawn_through
  size_t Size(std::span<const LookupResult> results, size_t /*max*/) const {
    return GetResponseSize(Encoded(results[0]));
  }
  char* Write(std::span<const LookupResult> results, char* out) const {
    return WriteGetResponse(Encoded(results[0]), out);
  }
};

// A MultiGetResponse of one GetResponse entry per key, in request order.
struct EntriesEncoding {
  static const std::string& VersionField(const ServingVersion& version) {
    return version.batch_version_field;
  }
  static constexpr int kWithdrawnField = 9;  // MultiGetResponse's
  // Stops counting once past `max`: the response is refused whatever the
  // rest adds.
  size_t Size(std::span<const LookupResult> results, size_t max) const {
    size_t size = 0;
    for (const LookupResult& result : results) {
      size += MultiGetEntrySize(Encoded(result));
      if (size > max) break;
    }
    return size;
  }
  char* Write(std::span<const LookupResult> results, char* out) const {
    for (const LookupResult& result : results) {
      out = WriteMultiGetEntry(Encoded(result), out);
    }
    return out;
  }
};

// A MultiGetResponse in the packed form (MultiGetRequest.packed): the
// values end to end, their sizes (or one width) and the missing keys'
// indexes.
class PackedEncoding {
 public:
  static const std::string& VersionField(const ServingVersion& version) {
    return version.batch_version_field;
  }
  static constexpr int kWithdrawnField = 9;  // MultiGetResponse's
  size_t Size(std::span<const LookupResult> results, size_t /*max*/) {
    for (const LookupResult& result : results) packed_.Count(Encoded(result));
    return packed_.size();
  }
  char* Write(std::span<const LookupResult> results, char* out) {
    packed_.Start(out);
    for (const LookupResult& result : results) packed_.Write(Encoded(result));
    return packed_.end();
  }

 private:
  PackedMultiGet packed_;
};

}  // namespace

grpc::Status PinVersion(const TableEntry& entry, uint64_t wanted,
                        VersionSlots<ServingVersion>::Pin* pin) {
  *pin = entry.slots.Acquire();
  if (wanted == 0 || (*pin && (*pin)->version == wanted)) {
    if (*pin) return grpc::Status::OK;
    return grpc::Status(
        grpc::StatusCode::UNAVAILABLE,
        StrCat("table \"", entry.name, "\" has no servable version"));
  }
  auto previous = entry.previous.Acquire();
  if (previous && previous->version == wanted) {
    *pin = std::move(previous);
    return grpc::Status::OK;
  }
  // A swap since the first look may have made it the serving one.
  if (auto again = entry.slots.Acquire(); again && again->version == wanted) {
    *pin = std::move(again);
    return grpc::Status::OK;
  }
  const std::string held =
      previous ? StrCat(" and still answers ", previous->version_name,
                        " (--version-grace)")
               : std::string();
  return grpc::Status(
      grpc::StatusCode::FAILED_PRECONDITION,
      StrCat("table \"", entry.name, "\" has no version ",
             VersionDirName(wanted), " to answer from: it serves ",
             *pin ? (*pin)->version_name : std::string("no version"), held));
}

grpc::Status LookupService::CheckRequest(
    const grpc::CallbackServerContext& context, const LookupRequest& r,
    bool batch) const {
  if (r.table.empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "table name is empty");
  }
  if (grpc::Status s = Authorize(access_, context, &r.table); !s.ok()) {
    return s;
  }
  if (r.total_keys > options_.max_batch) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        StrCat("MultiGet of ", r.total_keys, " keys exceeds --max-batch ",
               options_.max_batch));
  }
  // Only what no table could hold is an error; a key longer than any in
  // this table, or of another width, is a miss.
  for (size_t i = 0; i < r.keys.size(); ++i) {
    if (r.keys[i].size() > options_.max_key_size) [[unlikely]] {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          StrCat(KeyName(i, batch), " is ", r.keys[i].size(),
                 " bytes, more than --max-key-size ", options_.max_key_size));
    }
  }
  return grpc::Status::OK;
}

template <typename Encoding>
grpc::Status LookupService::Respond(Encoding encoding,
                                    const ServingVersion& version,
                                    std::span<const LookupResult> results,
                                    std::string_view trailer,
                                    ClientLimits::Share* client, CallGate* slot,
                                    grpc::ByteBuffer* response) const {
  const std::string& version_field = Encoding::VersionField(version);
  const std::string withdrawn =
      version.WithdrawnField(Encoding::kWithdrawnField);
  // The size first: a response over the limits is refused before a byte of
  // any value is copied.
  const size_t size = encoding.Size(results, options_.max_message_size) +
                      trailer.size() + version_field.size() + withdrawn.size();
  auto buffer =
      ResponseBuffer::Create(memory_, client, size, options_.max_message_size);
  if (!buffer.ok()) return ToClient(buffer.status(), options_.data_dir);
  char* out = encoding.Write(results, buffer->data());
  if (!trailer.empty()) {  // memcpy takes no null pointer, even for 0 bytes
    std::memcpy(out, trailer.data(), trailer.size());
    out += trailer.size();
  }
  std::memcpy(out, version_field.data(), version_field.size());
  out += version_field.size();
  if (!withdrawn.empty()) std::memcpy(out, withdrawn.data(), withdrawn.size());
  *response = std::move(*buffer).Release(slot);
  return grpc::Status::OK;
}

grpc::Status LookupService::DoLookup(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer& request,
                                     grpc::ByteBuffer* response, Method method,
                                     ClientLimits::Share* client,
                                     CallGate* slot) {
  if (DeadlinePassed(context)) return DeadlinePassedError();
  const bool batch = method != Method::kGet;
  Scratch& s = ThreadScratch();
  grpc::Slice holder;
  const std::string_view bytes = RequestBytes(request, &holder);
  const absl::Status parsed =
      batch ? ParseMultiGetRequest(bytes, options_.max_batch, &s.request)
            : ParseGetRequest(bytes, &s.request);
  if (!parsed.ok()) {
    return Malformed(parsed, context, batch ? "MultiGet" : "Get");
  }
  const LookupRequest& r = s.request;
  if (grpc::Status st = CheckRequest(*context, r, batch); !st.ok()) return st;
  // Declared in this order so that the version is released before the
  // table entry may be freed.
  const auto tables = registry_->Tables();
  TableEntry* entry = tables.Find(r.table);
  if (entry == nullptr) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        StrCat("no table ", PrintableKey(r.table, 128)));
  }
  VersionSlots<ServingVersion>::Pin version;
  if (grpc::Status st = PinVersion(*entry, r.version, &version); !st.ok()) {
    return st;
  }
  // A key of another shard: the client's layout is stale.
  if (const auto other = version->FirstKeyOfAnotherShard(r.keys)) {
    return grpc::Status(
        grpc::StatusCode::FAILED_PRECONDITION,
        StrCat(KeyName(other->index, batch), " belongs to shard ", other->shard,
               " of ", version->opened.manifest.shards,
               "; this server serves shard ", *version->opened.shard));
  }
  metrics_->RequestKeys(method, r.keys.size());
  LookupTally tally;
  if (absl::Status st = LookUp(*version, r.keys, s, &tally); !st.ok()) {
    return ToClient(st, options_.data_dir);
  }
  std::string_view trailer;
  if (RowAnswer::Asks(r)) {
    if (absl::Status st =
            s.rows.Apply(r, version->opened.manifest.schema, &s.results);
        !st.ok()) {
      return ToClient(st, options_.data_dir);
    }
    trailer = s.rows.trailer();
  }
  // The encoding is chosen once per request, not per key.
  const grpc::Status written =
      !batch     ? Respond(GetEncoding(), *version, s.results, trailer, client,
                           slot, response)
      : r.packed ? Respond(PackedEncoding(), *version, s.results, trailer,
                           client, slot, response)
                 : Respond(EntriesEncoding(), *version, s.results, trailer,
                           client, slot, response);
  if (!written.ok()) return written;
  // Let go of decompressed blocks now, not at this thread's next request.
  s.pins.Clear();
  entry->lookups.Add(tally);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* LookupService::Unary(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer& request,
    grpc::ByteBuffer* response, Method method) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(method);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  CallContext* call = CallContext::Of(context);
  ClientLimits::Share* client = call != nullptr ? call->client() : nullptr;
  if (grpc::Status s = EnterCall(client); !s.ok()) {
    Finish(reactor, metrics_, method, start, s);
    return reactor;
  }
  // The call's slots are left when gRPC frees the response's bytes (sent,
  // or the call dropped), not in a reactor's OnDone: gRPC 1.51 runs the
  // OnDone of any reactor but its own default one on its executor, a
  // thread hop for every call.
  const grpc::Status status =
      DoLookup(context, request, response, method, client, calls_);
  if (!status.ok()) LeaveCall(client);
  // From here the response waits for its client; one that does not take it
  // within --send-timeout gets the call cancelled (CallContexts).
  if (call != nullptr) call->SendStarted();
  Finish(reactor, metrics_, method, start, status);
  return reactor;
}

grpc::Status LookupService::EnterCall(ClientLimits::Share* client) {
  if (!calls_->Enter()) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        StrCat("too many calls in flight (--max-in-flight ",
                               calls_->max(), "); retry later"));
  }
  if (client != nullptr && !client->Enter()) {
    calls_->Leave();
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        StrCat("this client has too many calls in flight "
                               "(--max-client-in-flight ",
                               client->options().calls, "); retry later"));
  }
  return grpc::Status::OK;
}

void LookupService::LeaveCall(ClientLimits::Share* client) {
  calls_->Leave();
  if (client != nullptr) client->Leave();
}

grpc::ServerUnaryReactor* LookupService::Get(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return Unary(context, *request, response, Method::kGet);
}

grpc::ServerUnaryReactor* LookupService::MultiGet(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return Unary(context, *request, response, Method::kMultiGet);
}

// One StreamMultiGet: reads a request, answers it, writes the answer, and
// only then reads the next (gRPC's flow control buffers what the client
// sends meanwhile). A write the client does not take within --send-timeout
// gets the stream cancelled (StreamWatch). Deletes itself when gRPC is done
// with it.
class LookupService::StreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  StreamReactor(LookupService* service, grpc::CallbackServerContext* context)
      : service_(service),
        context_(context),
        start_(Clock::now()),
        watched_(context) {
    service_->metrics_->Started(Method::kStreamMultiGet);
    if (CallContext* call = CallContext::Of(context)) client_ = call->client();
    watching_ = service_->streams_->Add(&watched_);
    if (!watching_) {
      End(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          StrCat("too many StreamMultiGet calls open (--max-streams ",
                 service_->options_.max_streams, "); retry later")));
      return;
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client finished sending, or the call was cancelled
      End(grpc::Status::OK);
      return;
    }
    service_->metrics_->MessageReceived(Method::kStreamMultiGet);
    grpc::Status s =
        service_->DoLookup(context_, request_, &response_,
                           Method::kStreamMultiGet, client_, nullptr);
    request_.Clear();
    if (!s.ok()) {
      End(grpc::Status(s.error_code(),
                       StrCat("request ", requests_, ": ", s.error_message())));
      return;
    }
    ++requests_;
    watched_.WriteStarted();
    StartWrite(&response_);
  }

  void OnWriteDone(bool ok) override {
    watched_.WriteDone();
    response_.Clear();  // the response's memory goes back now
    if (!ok) {
      End(grpc::Status(grpc::StatusCode::CANCELLED,
                       "the stream was closed or cancelled (a client that "
                       "does not read is cut off after --send-timeout)"));
      return;
    }
    service_->metrics_->MessageSent(Method::kStreamMultiGet);
    StartRead(&request_);
  }

  void OnDone() override {
    if (watching_) service_->streams_->Remove(&watched_);
    delete this;
  }

 private:
  void End(const grpc::Status& status) {
    service_->metrics_->Handled(Method::kStreamMultiGet, status.error_code(),
                                Clock::now() - start_);
    Finish(status);
  }

  LookupService* service_;
  grpc::CallbackServerContext* context_;
  // Whose share its responses count against; held by the context.
  ClientLimits::Share* client_ = nullptr;
  const Clock::time_point start_;
  StreamWatch::Stream watched_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  uint64_t requests_ = 0;
  bool watching_ = false;
};

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
LookupService::StreamMultiGet(grpc::CallbackServerContext* context) {
  return new StreamReactor(this, context);
}

grpc::ServerUnaryReactor* LookupService::ListTables(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(Method::kListTables);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  roost::v1::ListTablesRequest parsed;
  grpc::Status status = ParseMessage(*request, context, "ListTables", &parsed);
  // Under an access policy a caller sees only the tables it may read.
  std::optional<Caller> caller;
  std::shared_ptr<const AccessPolicy> policy;
  if (status.ok() && access_ != nullptr) {
    absl::StatusOr<Caller> c = CallerOf(*context);
    policy = access_->policy();
    if (!c.ok()) {
      access_->Refused(AccessControl::Refusal::kBadCredentials);
      status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                            std::string(c.status().message()));
    } else if (policy->ForTable(*c, "") ==
               AccessPolicy::Verdict::kUnknownToken) {
      access_->Refused(AccessControl::Refusal::kUnknownToken);
      status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                            "the bearer token is not in the access policy");
    } else {
      caller = std::move(*c);
    }
  }
  if (status.ok()) {
    roost::v1::ListTablesResponse out;
    for (const TableStatus& t : registry_->List()) {
      if (caller && policy->ForTable(*caller, t.name) !=
                        AccessPolicy::Verdict::kAllowed) {
        continue;
      }
      roost::v1::TableInfo* info = out.add_tables();
      info->set_name(t.name);
      info->set_format(t.format);
      info->set_serving_version(t.serving_version);
      info->set_key_count(t.keys);
      info->set_file_size(t.file_size);
      for (const std::string& v : t.versions_on_disk) {
        info->add_versions_on_disk(v);
      }
      info->set_max_key_length(t.max_key_length);
      info->set_shard(t.shard);
      info->set_shard_count(t.shard_count);
      info->set_previous_version(t.previous_version);
      info->set_withdrawn_through(t.withdrawn_through);
      info->set_key_width(t.key_width);
      info->set_pinned(t.pinned);
      for (const std::string& v : t.rolled_back) {
        info->add_rolled_back_versions(v);
      }
      info->set_repository_version(t.repository_version);
      info->set_schema_json(t.schema_json);
    }
    *response = Serialize(out);
  }
  if (CallContext* call = CallContext::Of(context)) call->SendStarted();
  Finish(reactor, metrics_, Method::kListTables, start, status);
  return reactor;
}

}  // namespace roost
