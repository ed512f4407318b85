// LookupService: roost.v1.Lookup (Get, MultiGet, StreamMultiGet,
// ListTables, Scan) on gRPC's callback API. (roost.v1.Admin is
// admin_service.h.)
//
// Every method takes its request as raw bytes, so that a request that does
// not parse is answered INVALID_ARGUMENT, counted and logged (at a bounded
// rate) instead of gRPC's silent UNIMPLEMENTED. Get and MultiGet parse their
// requests in place (request_codec.h) and write their responses straight
// into the buffer gRPC sends (response_buffer.h).
//
// Lookup handlers (and each message of a StreamMultiGet) run to completion on
// the thread gRPC calls them on: they pin the table's serving version, or
// the one the request names (PinVersion; no lock), look the keys up in the
// mapped file, size the response and refuse it (RESOURCE_EXHAUSTED) if it
// would pass --max-message-size, the response memory budget or its client's
// share of it (the client is the CallContext's, on a server that has them),
// then copy each value once into it, tally hits, misses and probes locally,
// and add the tallies to per-thread counters once. Every response ends with the
// bytes naming its version, encoded once per version. Scan (scan_reactor.cc)
// pins its version for the whole stream and writes one bounded message at a
// time. Nothing on that path waits.
//
// Example:
//   LookupService lookup(&registry, &metrics, &memory, &streams, options);
//   builder.RegisterService(&lookup);
#ifndef ROOST_SERVER_LOOKUP_SERVICE_H_
#define ROOST_SERVER_LOOKUP_SERVICE_H_

#include <chrono>
#include <span>
#include <string>

#include "roost/v1/lookup.grpc.pb.h"
#include "server/access_policy.h"
#include "server/call_gate.h"
#include "server/client_limits.h"
#include "server/metrics.h"
#include "server/request_codec.h"
#include "server/response_buffer.h"
#include "server/server_options.h"
#include "server/stream_watch.h"
#include "server/table_registry.h"
#include "storage/table.h"

namespace roost {

// The version of `entry` a request asked for (`wanted`; 0: the serving
// one), pinned into *pin: the serving version, or the one it replaced while
// --version-grace holds it. FAILED_PRECONDITION naming the versions there
// are when neither is `wanted`; UNAVAILABLE when none is served.
grpc::Status PinVersion(const TableEntry& entry, uint64_t wanted,
                        VersionSlots<ServingVersion>::Pin* pin);

using RawLookupService = roost::v1::Lookup::WithRawCallbackMethod_Get<
    roost::v1::Lookup::WithRawCallbackMethod_MultiGet<
        roost::v1::Lookup::WithRawCallbackMethod_StreamMultiGet<
            roost::v1::Lookup::WithRawCallbackMethod_ListTables<
                roost::v1::Lookup::WithRawCallbackMethod_Scan<
                    roost::v1::Lookup::Service>>>>>;

class LookupService final : public RawLookupService {
 public:
  // `access` may be null: every caller may read every table.
  LookupService(TableRegistry* registry, RpcMetrics* metrics,
                ResponseMemory* memory, StreamWatch* streams, CallGate* calls,
                const ServerOptions& options, AccessControl* access = nullptr)
      : registry_(registry),
        metrics_(metrics),
        memory_(memory),
        streams_(streams),
        calls_(calls),
        options_(options),
        access_(access) {}

  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* context,
                                const grpc::ByteBuffer* request,
                                grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* MultiGet(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StreamMultiGet(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListTables(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  // scan_reactor.cc.
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Scan(
      grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request) override;

  // Cancels the Scans whose client has taken no message for `timeout` (it
  // stopped reading); returns how many. Call it once a second or so.
  int CancelStalledScans(std::chrono::steady_clock::duration timeout) {
    return scans_.CancelStalled(timeout);
  }
  // Scans cancelled so far.
  uint64_t scans_cancelled() const { return scans_.cancelled(); }

 private:
  class StreamReactor;
  class ScanReactor;
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer& request,
                                  grpc::ByteBuffer* response, Method method);
  // Takes a call slot in calls_ and in `client`'s share (null: none), or
  // says which is full (RESOURCE_EXHAUSTED).
  grpc::Status EnterCall(ClientLimits::Share* client);
  void LeaveCall(ClientLimits::Share* client);
  // Answers one Get or MultiGet request into *response, its bytes counted
  // against `client`'s share (null: none). With `slot` (a unary call's,
  // from EnterCall) and an OK status, the slots pass to the response's
  // bytes and are left when gRPC frees them; on any other status the caller
  // still holds them.
  grpc::Status DoLookup(grpc::CallbackServerContext* context,
                        const grpc::ByteBuffer& request,
                        grpc::ByteBuffer* response, Method method,
                        ClientLimits::Share* client, CallGate* slot);
  // What no table could accept: an empty table name, a caller the access
  // policy refuses, more keys than --max-batch, a key over --max-key-size.
  grpc::Status CheckRequest(const grpc::CallbackServerContext& context,
                            const LookupRequest& request, bool batch) const;
  // Writes `results` of `version` into *response in `encoding`
  // (lookup_service.cc), then `trailer` (a MultiGetResponse's scores and
  // top, already encoded), refused before a value is copied when over the
  // limits; on OK as DoLookup's.
  template <typename Encoding>
  grpc::Status Respond(Encoding encoding, const ServingVersion& version,
                       std::span<const LookupResult> results,
                       std::string_view trailer, ClientLimits::Share* client,
                       CallGate* slot, grpc::ByteBuffer* response) const;

  TableRegistry* registry_;
  RpcMetrics* metrics_;
  ResponseMemory* memory_;
  StreamWatch* streams_;
  CallGate* calls_;
  const ServerOptions options_;
  AccessControl* const access_;
  // Open Scans, watched for clients that stop reading (not limited by
  // --max-streams: a Scan counts against --max-in-flight).
  StreamWatch scans_;
};

}  // namespace roost

#endif  // ROOST_SERVER_LOOKUP_SERVICE_H_
