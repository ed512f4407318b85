// A sharded roost cluster on loopback for the routing-client suites: one
// real roost-server per replica, started with --shard I over a data
// directory per shard (a table built by the real `roost-load build
// --shards N` into each), and the layout that lists them, as a
// ClusterLayout and as a layout file.
//
// Example:
//   LoopbackCluster cluster(scratch, {2, 1, 1}, {"--version-grace", "60"});
//   ASSERT_NE(BuildTable(cluster.data_dir(0), "t", kvs, "cuckoo",
//                        {"--shards", "3"}), "");
//   ASSERT_TRUE(cluster.Start());
//   auto client = ClusterClient::Create(cluster.layout());
#ifndef ROOST_TESTS_CLIENT_CLUSTER_FIXTURE_H_
#define ROOST_TESTS_CLIENT_CLUSTER_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "client/cluster_layout.h"
#include "tests/harness/server_harness.h"
#include "util/str_cat.h"

namespace roost::testing {

class LoopbackCluster {
 public:
  // replicas[i]: how many servers shard i has. With `shared_data`, every
  // shard reads data_dir(0) (one build serves them all); otherwise shard i
  // reads data_dir(i).
  LoopbackCluster(const ScratchDir& scratch, std::vector<int> replicas,
                  std::vector<std::string> extra_flags = {},
                  bool shared_data = true)
      : scratch_(scratch),
        replicas_(std::move(replicas)),
        extra_(std::move(extra_flags)),
        shared_(shared_data) {}

  // The data directory of shard `shard`'s servers.
  std::string data_dir(size_t shard) const {
    return scratch_.File(StrCat("data", shared_ ? 0 : shard));
  }
  size_t shards() const { return replicas_.size(); }

  // The servers Start() starts listen for the admin service too (for a
  // rollback, say); by default they do not.
  void WithAdmin() { admin_ = true; }

  // Starts every server and waits until each is ready.
  ::testing::AssertionResult Start() {
    for (size_t s = 0; s < replicas_.size(); ++s) {
      for (int r = 0; r < replicas_[s]; ++r) {
        ServerFlags flags;
        flags.data_dir = data_dir(s);
        if (!admin_) flags.admin_listen = "";
        flags.extra = {"--shard", StrCat(s)};
        flags.extra.insert(flags.extra.end(), extra_.begin(), extra_.end());
        servers_.push_back(std::make_unique<ServerProcess>(
            flags, scratch_.File(StrCat("server-", s, "-", r, ".log"))));
        shard_of_.push_back(s);
      }
    }
    for (auto& server : servers_) {
      if (!server->WaitReady()) {
        return ::testing::AssertionFailure() << server->Log();
      }
    }
    return ::testing::AssertionSuccess();
  }

  // Server `replica` of shard `shard`.
  ServerProcess& server(size_t shard, int replica) {
    for (size_t i = 0; i < servers_.size(); ++i) {
      if (shard_of_[i] == shard && replica-- == 0) return *servers_[i];
    }
    std::abort();
  }

  // Every server's address, listed per shard in shard order.
  ClusterLayout layout() const {
    ClusterLayout layout;
    layout.shards.resize(replicas_.size());
    for (size_t i = 0; i < servers_.size(); ++i) {
      layout.shards[shard_of_[i]].push_back(servers_[i]->lookup_address());
    }
    return layout;
  }

  // layout() as a layout file in the scratch directory; its path.
  std::string WriteLayout(const std::string& name = "cluster.json") const {
    std::string text = "{\"shards\": [";
    const ClusterLayout l = layout();
    for (size_t s = 0; s < l.shards.size(); ++s) {
      text += s == 0 ? "[" : ", [";
      for (size_t r = 0; r < l.shards[s].size(); ++r) {
        text += StrCat(r == 0 ? "" : ", ", "\"", l.shards[s][r], "\"");
      }
      text += "]";
    }
    text += "]}\n";
    const std::string path = scratch_.File(name);
    WriteFile(path, text);
    return path;
  }

 private:
  const ScratchDir& scratch_;
  std::vector<int> replicas_;
  std::vector<std::string> extra_;
  bool shared_;
  bool admin_ = false;
  std::vector<std::unique_ptr<ServerProcess>> servers_;
  std::vector<size_t> shard_of_;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_CLIENT_CLUSTER_FIXTURE_H_
