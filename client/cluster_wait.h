// `roost-admin wait`: whether every replica of every shard of a cluster
// serves a version of a table, asked of each replica's ListTables. A
// "dns:///NAME:PORT" target stands for every address NAME resolves to
// (getaddrinfo, again at each round, so that pods that come during a
// rollout are asked too); each address is asked on its own.
//
// Thread-compatible: one per wait.
//
// Example:
//   ClusterWaiter waiter(layout);
//   std::vector<ReplicaState> states = waiter.Poll("users", "v000007", 5);
//   bool done = std::all_of(..., [](auto& s) { return s.ready; });
#ifndef ROOST_CLIENT_CLUSTER_WAIT_H_
#define ROOST_CLIENT_CLUSTER_WAIT_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/cluster_layout.h"

namespace roost {

// One address to ask: a listed target, or one address of a dns: target.
struct ReplicaAddress {
  uint32_t shard = 0;
  std::string target;   // as the layout lists it
  std::string address;  // what is dialled ("10.0.0.7:7000"), or target
  // For TLS: the name the certificate must hold when `address` is an
  // address resolved from a name (the name), else empty.
  std::string server_name;
};

// The host and port of a "dns:[//AUTHORITY/]HOST[:PORT]" target (port 443
// when none, as gRPC takes it; IPv6 literals in brackets).
// InvalidArgument for one without a host.
absl::StatusOr<std::pair<std::string, std::string>> SplitDnsTarget(
    const std::string& target);

// Every address to ask: targets as they are, dns: targets resolved. A name
// that does not resolve is an error naming it.
absl::StatusOr<std::vector<ReplicaAddress>> ExpandReplicas(
    const ClusterLayout& layout);

// What one replica serves.
struct ReplicaState {
  ReplicaAddress replica;
  bool ready = false;  // serves the version asked for, as the shard listed
  std::string what;    // otherwise: "serves v000006", "UNAVAILABLE: ..."
};

class ClusterWaiter {
 public:
  explicit ClusterWaiter(ClusterLayout layout) : layout_(std::move(layout)) {}

  // Asks every replica once (each call with a deadline of
  // `call_timeout_seconds`) whether it serves `version` of `table`. A name
  // that no longer resolves is one not-ready state naming it.
  std::vector<ReplicaState> Poll(const std::string& table,
                                 const std::string& version,
                                 double call_timeout_seconds);

 private:
  ReplicaState Ask(const ReplicaAddress& replica, const std::string& table,
                   const std::string& version, double call_timeout_seconds);

  ClusterLayout layout_;
  // Channels by address, kept between rounds.
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;
};

}  // namespace roost

#endif  // ROOST_CLIENT_CLUSTER_WAIT_H_
