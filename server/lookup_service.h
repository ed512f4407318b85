// The gRPC services: roost.v1.Lookup (Get, MultiGet, ListTables) and
// roost.v1.Admin (Rollback, Unpin), on the callback API.
//
// Lookup handlers (and each message of a StreamMultiGet) run to completion on
// the thread gRPC calls them on: they pin the table's serving version (no
// lock), look the keys up in the mapped file, copy each value once into the
// response, tally hits, misses and probes locally, and add the tallies to
// per-thread counters once. Nothing on that path waits. Admin handlers hand
// their work to the registry's thread and finish when it is done.
//
// Example:
//   LookupService lookup(&registry, &metrics, options);
//   builder.RegisterService(&lookup);
#ifndef ROOST_SERVER_LOOKUP_SERVICE_H_
#define ROOST_SERVER_LOOKUP_SERVICE_H_

#include "roost/v1/admin.grpc.pb.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "server/arena_allocator.h"
#include "server/metrics.h"
#include "server/server_options.h"
#include "server/table_registry.h"

namespace roost {

class LookupService final : public roost::v1::Lookup::CallbackService {
 public:
  LookupService(TableRegistry* registry, RpcMetrics* metrics,
                const ServerOptions& options)
      : registry_(registry), metrics_(metrics), options_(options) {
    SetMessageAllocatorFor_Get(&get_allocator_);
    SetMessageAllocatorFor_MultiGet(&multi_get_allocator_);
  }

  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* context,
                                const roost::v1::GetRequest* request,
                                roost::v1::GetResponse* response) override;
  grpc::ServerUnaryReactor* MultiGet(
      grpc::CallbackServerContext* context,
      const roost::v1::MultiGetRequest* request,
      roost::v1::MultiGetResponse* response) override;
  grpc::ServerBidiReactor<roost::v1::MultiGetRequest,
                          roost::v1::MultiGetResponse>*
  StreamMultiGet(grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListTables(
      grpc::CallbackServerContext* context,
      const roost::v1::ListTablesRequest* request,
      roost::v1::ListTablesResponse* response) override;

 private:
  class StreamReactor;
  using Pin = VersionSlots<ServingVersion>::Pin;
  grpc::Status DoGet(grpc::CallbackServerContext* context,
                     const roost::v1::GetRequest& request,
                     roost::v1::GetResponse* response);
  grpc::Status DoMultiGet(grpc::CallbackServerContext* context,
                          const roost::v1::MultiGetRequest& request,
                          roost::v1::MultiGetResponse* response, Method method);
  // The table's entry and a pin on its serving version, or the error.
  grpc::Status Resolve(const std::string& table, TableEntry** entry,
                       Pin* pin) const;
  // INVALID_ARGUMENT when `key` cannot be in the table; `index` is the
  // key's place in a batch, or -1 for Get.
  grpc::Status CheckKey(const std::string& key, int64_t index,
                        const std::string& table,
                        const ServingVersion& version) const;

  TableRegistry* registry_;
  RpcMetrics* metrics_;
  const ServerOptions options_;
  ArenaMessageAllocator<roost::v1::GetRequest, roost::v1::GetResponse>
      get_allocator_;
  ArenaMessageAllocator<roost::v1::MultiGetRequest, roost::v1::MultiGetResponse>
      multi_get_allocator_;
};

class AdminService final : public roost::v1::Admin::CallbackService {
 public:
  AdminService(TableRegistry* registry, RpcMetrics* metrics)
      : registry_(registry), metrics_(metrics) {}

  grpc::ServerUnaryReactor* Rollback(
      grpc::CallbackServerContext* context,
      const roost::v1::RollbackRequest* request,
      roost::v1::RollbackResponse* response) override;
  grpc::ServerUnaryReactor* Unpin(grpc::CallbackServerContext* context,
                                  const roost::v1::UnpinRequest* request,
                                  roost::v1::UnpinResponse* response) override;

 private:
  TableRegistry* registry_;
  RpcMetrics* metrics_;
};

}  // namespace roost

#endif  // ROOST_SERVER_LOOKUP_SERVICE_H_
