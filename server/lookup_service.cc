#include "server/lookup_service.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "storage/str_cat.h"

namespace roost {
namespace {

using Clock = std::chrono::steady_clock;

grpc::Status ToGrpc(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

std::string KeyName(int64_t index) {
  return index < 0 ? std::string("key") : StrCat("key ", index);
}

// Finishes `reactor` with `status` and records the RPC.
void Finish(grpc::ServerUnaryReactor* reactor, RpcMetrics* metrics,
            Method method, Clock::time_point start,
            const grpc::Status& status) {
  metrics->Handled(method, status.error_code(), Clock::now() - start);
  reactor->Finish(status);
}

bool DeadlinePassed(const grpc::CallbackServerContext* context) {
  return context->deadline() <= std::chrono::system_clock::now();
}

const grpc::Status kDeadlinePassed(
    grpc::StatusCode::DEADLINE_EXCEEDED,
    "deadline passed before the request was worked on");

// Scratch space a handler thread reuses across requests, so that a batch
// allocates nothing but its response.
struct Scratch {
  std::vector<std::string_view> keys;
  std::vector<LookupResult> results;
};
Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

}  // namespace

grpc::Status LookupService::Resolve(const std::string& table,
                                    TableEntry** entry, Pin* pin) const {
  if (table.empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "table name is empty");
  }
  TableEntry* e = registry_->Find(table);
  if (e == nullptr || !e->present.load(std::memory_order_relaxed)) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        StrCat("no table \"", table, "\""));
  }
  *pin = e->slots.Acquire();
  if (!*pin) {
    return grpc::Status(
        grpc::StatusCode::UNAVAILABLE,
        StrCat("table \"", table, "\" has no servable version"));
  }
  *entry = e;
  return grpc::Status::OK;
}

grpc::Status LookupService::CheckKey(const std::string& key, int64_t index,
                                     const std::string& table,
                                     const ServingVersion& version) const {
  const size_t n = key.size();
  if (n > options_.max_key_size) [[unlikely]] {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        StrCat(KeyName(index), " is ", n, " bytes, more than --max-key-size ",
               options_.max_key_size));
  }
  if (version.key_width != 0 && n != version.key_width) [[unlikely]] {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        StrCat(KeyName(index), " is ", n, " bytes; table \"", table,
               "\" holds keys of exactly ", version.key_width, " bytes"));
  }
  if (n > version.max_key_length) [[unlikely]] {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        StrCat(KeyName(index), " is ", n, " bytes; table \"", table,
               "\" holds keys of at most ", version.max_key_length, " bytes"));
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* LookupService::Get(
    grpc::CallbackServerContext* context, const roost::v1::GetRequest* request,
    roost::v1::GetResponse* response) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(Method::kGet);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Finish(reactor, metrics_, Method::kGet, start,
         DoGet(context, *request, response));
  return reactor;
}

grpc::Status LookupService::DoGet(grpc::CallbackServerContext* context,
                                  const roost::v1::GetRequest& request,
                                  roost::v1::GetResponse* response) {
  if (DeadlinePassed(context)) return kDeadlinePassed;
  TableEntry* entry;
  Pin version;
  if (grpc::Status s = Resolve(request.table(), &entry, &version); !s.ok()) {
    return s;
  }
  const std::string& key = request.key();
  if (grpc::Status s = CheckKey(key, -1, request.table(), *version); !s.ok()) {
    return s;
  }
  metrics_->RequestKeys(Method::kGet, 1);
  LookupTally tally;
  if (const CuckooTable* cuckoo = version->file->cuckoo()) {
    std::string_view value;
    int blocks = 0;
    const bool found = cuckoo->Get(key, &value, &blocks);
    tally.Add(found, blocks);
    tally.has_probes = true;
    if (found) {
      response->set_found(true);
      response->set_value(value.data(), value.size());
    }
  } else {
    BlockTable::Value value;
    absl::StatusOr<bool> found = version->file->block()->Get(key, &value);
    if (!found.ok()) return ToGrpc(found.status());
    tally.Add(*found, 0);
    if (*found) {
      response->set_found(true);
      response->set_value(value.view().data(), value.view().size());
    }
  }
  entry->lookups.Add(tally);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* LookupService::MultiGet(
    grpc::CallbackServerContext* context,
    const roost::v1::MultiGetRequest* request,
    roost::v1::MultiGetResponse* response) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(Method::kMultiGet);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Finish(reactor, metrics_, Method::kMultiGet, start,
         DoMultiGet(context, *request, response, Method::kMultiGet));
  return reactor;
}

grpc::Status LookupService::DoMultiGet(
    grpc::CallbackServerContext* context,
    const roost::v1::MultiGetRequest& request,
    roost::v1::MultiGetResponse* response, Method method) {
  if (DeadlinePassed(context)) return kDeadlinePassed;
  const auto& keys = request.keys();
  const size_t n = static_cast<size_t>(keys.size());
  if (request.table().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "table name is empty");
  }
  if (n > options_.max_batch) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        StrCat("MultiGet of ", n, " keys exceeds --max-batch ",
                               options_.max_batch));
  }
  TableEntry* entry;
  Pin version;
  if (grpc::Status s = Resolve(request.table(), &entry, &version); !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < n; ++i) {
    grpc::Status s =
        CheckKey(keys[i], static_cast<int64_t>(i), request.table(), *version);
    if (!s.ok()) return s;
  }
  metrics_->RequestKeys(method, n);
  auto* results = response->mutable_results();
  results->Reserve(static_cast<int>(n));
  LookupTally tally;
  if (const CuckooTable* cuckoo = version->file->cuckoo()) {
    Scratch& scratch = ThreadScratch();
    scratch.keys.assign(keys.begin(), keys.end());
    scratch.results.resize(n);
    cuckoo->MultiGet(scratch.keys, scratch.results);
    tally.has_probes = true;
    for (const LookupResult& r : scratch.results) {
      tally.Add(r.found, r.blocks_touched);
      roost::v1::GetResponse* out = results->Add();
      if (r.found) {
        out->set_found(true);
        out->set_value(r.value.data(), r.value.size());
      }
    }
  } else {
    const BlockTable* block = version->file->block();
    BlockTable::Value value;
    for (const std::string& key : keys) {
      absl::StatusOr<bool> found = block->Get(key, &value);
      if (!found.ok()) return ToGrpc(found.status());
      tally.Add(*found, 0);
      roost::v1::GetResponse* out = results->Add();
      if (*found) {
        out->set_found(true);
        out->set_value(value.view().data(), value.view().size());
      }
    }
  }
  entry->lookups.Add(tally);
  return grpc::Status::OK;
}

// One StreamMultiGet: reads a request, answers it, writes the answer, and
// only then reads the next (gRPC's flow control buffers what the client
// sends meanwhile). Deletes itself when gRPC is done with it.
class LookupService::StreamReactor final
    : public grpc::ServerBidiReactor<roost::v1::MultiGetRequest,
                                     roost::v1::MultiGetResponse> {
 public:
  StreamReactor(LookupService* service, grpc::CallbackServerContext* context)
      : service_(service), context_(context), start_(Clock::now()) {
    service_->metrics_->Started(Method::kStreamMultiGet);
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client finished sending, or the call was cancelled
      End(grpc::Status::OK);
      return;
    }
    response_.Clear();
    grpc::Status s = service_->DoMultiGet(context_, request_, &response_,
                                          Method::kStreamMultiGet);
    if (!s.ok()) {
      End(grpc::Status(s.error_code(),
                       StrCat("request ", requests_, ": ", s.error_message())));
      return;
    }
    ++requests_;
    StartWrite(&response_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      End(grpc::Status(grpc::StatusCode::CANCELLED, "the stream was closed"));
      return;
    }
    request_.Clear();
    StartRead(&request_);
  }

  void OnDone() override { delete this; }

 private:
  void End(const grpc::Status& status) {
    service_->metrics_->Handled(Method::kStreamMultiGet, status.error_code(),
                                Clock::now() - start_);
    Finish(status);
  }

  LookupService* service_;
  grpc::CallbackServerContext* context_;
  const Clock::time_point start_;
  roost::v1::MultiGetRequest request_;
  roost::v1::MultiGetResponse response_;
  uint64_t requests_ = 0;
};

grpc::ServerBidiReactor<roost::v1::MultiGetRequest,
                        roost::v1::MultiGetResponse>*
LookupService::StreamMultiGet(grpc::CallbackServerContext* context) {
  return new StreamReactor(this, context);
}

grpc::ServerUnaryReactor* LookupService::ListTables(
    grpc::CallbackServerContext* context,
    const roost::v1::ListTablesRequest* /*request*/,
    roost::v1::ListTablesResponse* response) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(Method::kListTables);
  for (const TableStatus& t : registry_->List()) {
    roost::v1::TableInfo* info = response->add_tables();
    info->set_name(t.name);
    info->set_format(t.format);
    info->set_serving_version(t.serving_version);
    info->set_key_count(t.keys);
    info->set_file_size(t.file_size);
    for (const std::string& v : t.versions_on_disk) {
      info->add_versions_on_disk(v);
    }
    info->set_max_key_length(t.max_key_length);
    info->set_key_width(t.key_width);
    info->set_pinned(t.pinned);
    for (const std::string& v : t.rolled_back) {
      info->add_rolled_back_versions(v);
    }
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Finish(reactor, metrics_, Method::kListTables, start, grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::Rollback(
    grpc::CallbackServerContext* context,
    const roost::v1::RollbackRequest* request,
    roost::v1::RollbackResponse* response) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(Method::kRollback);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  registry_->Rollback(
      request->table(), request->version(),
      [reactor, response, start, metrics = metrics_](
          absl::StatusOr<std::pair<std::string, std::string>> result) {
        if (result.ok()) {
          response->set_serving_version(result->first);
          response->set_previous_version(result->second);
        }
        Finish(reactor, metrics, Method::kRollback, start,
               ToGrpc(result.status()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::Unpin(
    grpc::CallbackServerContext* context,
    const roost::v1::UnpinRequest* request,
    roost::v1::UnpinResponse* response) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(Method::kUnpin);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  registry_->Unpin(request->table(), [reactor, response, start,
                                      metrics = metrics_](
                                         absl::StatusOr<std::string> result) {
    if (result.ok()) response->set_serving_version(*result);
    Finish(reactor, metrics, Method::kUnpin, start, ToGrpc(result.status()));
  });
  return reactor;
}

}  // namespace roost
