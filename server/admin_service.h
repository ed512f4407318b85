// AdminService: roost.v1.Admin (Rollback, Unpin; ../proto/roost/v1/
// admin.proto) on gRPC's callback API, on the admin port only.
//
// Each method takes its request as raw bytes, as LookupService's do, so that
// a request that does not parse is answered INVALID_ARGUMENT, counted and
// logged instead of gRPC's silent UNIMPLEMENTED. Under an access policy the
// caller must be an admin (PERMISSION_DENIED otherwise). The work is the
// registry's (TableRegistry::Rollback, Unpin): a handler hands it to the
// registry's thread and returns at once; the call finishes when the registry
// is done, so no gRPC thread waits on a load.
//
// Thread-safe: gRPC calls the handlers on any thread.
//
// Example:
//   AdminService admin(&registry, &metrics, options.data_dir, access.get());
//   builder.RegisterService(&admin);
#ifndef ROOST_SERVER_ADMIN_SERVICE_H_
#define ROOST_SERVER_ADMIN_SERVICE_H_

#include <string>

#include "roost/v1/admin.grpc.pb.h"
#include "server/access_policy.h"
#include "server/metrics.h"
#include "server/table_registry.h"

namespace roost {

using RawAdminService = roost::v1::Admin::WithRawCallbackMethod_Rollback<
    roost::v1::Admin::WithRawCallbackMethod_Unpin<roost::v1::Admin::Service>>;

class AdminService final : public RawAdminService {
 public:
  // `access` may be null: every caller who reaches the port may use it.
  // Errors shown to clients name paths relative to `data_dir`.
  AdminService(TableRegistry* registry, RpcMetrics* metrics,
               std::string data_dir, AccessControl* access = nullptr)
      : registry_(registry),
        metrics_(metrics),
        data_dir_(std::move(data_dir)),
        access_(access) {}

  grpc::ServerUnaryReactor* Rollback(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Unpin(grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer* request,
                                  grpc::ByteBuffer* response) override;

 private:
  TableRegistry* registry_;
  RpcMetrics* metrics_;
  const std::string data_dir_;
  AccessControl* const access_;
};

}  // namespace roost

#endif  // ROOST_SERVER_ADMIN_SERVICE_H_
