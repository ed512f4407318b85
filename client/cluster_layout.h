// The cluster layout a routing client reads: per shard of a sharded table,
// the gRPC targets of its replicas, and how to speak TLS to them. The same
// JSON file serves the C++ client (ClusterClient, roost-get --cluster,
// roost-admin wait) and the Python package:
//
//   {"shards": [["127.0.0.1:7001", "127.0.0.1:7002"],
//               ["127.0.0.1:7003", "dns:///roost-1.roost.svc:7000"]],
//    "tls": {"ca": "ca.pem", "cert": "client.pem", "key": "client.key",
//            "server_name": "roost.internal"}}
//
// "shards"[i] lists shard i's replicas, in the order of the partition
// function's shard numbers (storage/partition.h). An entry is "host:port" or
// any gRPC target URI; "dns:///NAME:PORT" (a Kubernetes headless Service)
// stands for every address NAME resolves to. "tls" is optional (absent:
// plaintext); every field of it is optional, and an empty object means TLS
// with the system's CAs. Relative file names in "tls" are read from the
// layout file's directory. Any other member, in the file or in "tls", is
// refused: a misspelt "tls" ignored would quietly mean plaintext.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(ClusterLayout layout,
//                          ReadClusterLayout("cluster.json"));
//   layout.security.token = token;  // not in the file: a secret
#ifndef ROOST_CLIENT_CLUSTER_LAYOUT_H_
#define ROOST_CLIENT_CLUSTER_LAYOUT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "client/rpc_util.h"

namespace roost {

struct ClusterLayout {
  // shards[i]: the targets of shard i's replicas; at least one each.
  std::vector<std::vector<std::string>> shards;
  // TLS (from "tls") and the bearer token (never in the file).
  ChannelSecurity security;
};

// The most shards and replicas per shard a layout may list (kMaxShards of
// storage/partition.h; replicas: a sanity bound on a hand-written file).
inline constexpr size_t kMaxLayoutShards = 1024;
inline constexpr size_t kMaxLayoutReplicas = 1024;

// Checks a layout given directly: at least one shard, none empty, no empty
// target, at most kMaxLayoutShards shards. InvalidArgument naming what.
absl::Status CheckClusterLayout(const ClusterLayout& layout);

// Parses the layout file's text; `base_dir` is where relative TLS file
// names are taken from ("" for the working directory). InvalidArgument
// naming the member that is wrong ("shards[1][0] is not a string").
absl::StatusOr<ClusterLayout> ParseClusterLayout(std::string_view text,
                                                 const std::string& base_dir);

// Reads and parses the layout file at `path`. Errors start with the path.
absl::StatusOr<ClusterLayout> ReadClusterLayout(const std::string& path);

}  // namespace roost

#endif  // ROOST_CLIENT_CLUSTER_LAYOUT_H_
