// The loopback cluster of issue 14, whole: a real MinIO holding a table
// repository, 3 shards x 2 replicas of the real roost-server pulling from
// it (six processes, each with its own data directory), versions published
// by the real roost-load, and both routing clients (the C++ ClusterClient
// here, the Python package through clients/python/tests/check_cluster.py)
// reading every key. Then, under load: a replica SIGKILLed and restarted, a
// new version published, a rollback by pointer, a corrupt object.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "client/cluster_client.h"
#include "repository/repository.h"
#include "storage/partition.h"
#include "tests/harness/repository_server_fixture.h"
#include "tests/harness/test_util.h"
#include "tests/harness/versioned_tables.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

constexpr uint32_t kShards = 3;
constexpr int kReplicas = 2;
constexpr int kKeys = 3000;

class ClusterRepositoryTest : public RepositoryServerTest {
 protected:
  // Starts replica `r` of shard `s` (on `port`, or a free one), pulling
  // into a data directory of its own, and waits until it is ready.
  ::testing::AssertionResult StartReplica(uint32_t s, int r, int port = 0) {
    ServerFlags flags = PullFlags(s, {"--version-grace", "120"});
    flags.data_dir = scratch_.File(StrCat("data-", s, "-", r));
    std::filesystem::create_directories(flags.data_dir);
    flags.admin_listen = "";
    if (port != 0) flags.listen = StrCat("127.0.0.1:", port);
    auto& slot = servers_[s * kReplicas + r];
    slot.reset();  // a killed one's process is reaped first
    slot = std::make_unique<ServerProcess>(
        flags,
        scratch_.File(StrCat("server-", s, "-", r, "-", ++starts_, ".log")));
    if (!slot->WaitReady()) {
      return ::testing::AssertionFailure() << slot->Log();
    }
    return ::testing::AssertionSuccess();
  }

  ::testing::AssertionResult StartCluster() {
    servers_.resize(kShards * kReplicas);
    for (uint32_t s = 0; s < kShards; ++s) {
      for (int r = 0; r < kReplicas; ++r) {
        auto started = StartReplica(s, r);
        if (!started) return started;
      }
    }
    return ::testing::AssertionSuccess();
  }

  ServerProcess& Replica(uint32_t s, int r) {
    return *servers_[s * kReplicas + r];
  }

  ClusterLayout Layout() {
    ClusterLayout layout;
    layout.shards.resize(kShards);
    for (uint32_t s = 0; s < kShards; ++s) {
      for (int r = 0; r < kReplicas; ++r) {
        layout.shards[s].push_back(Replica(s, r).lookup_address());
      }
    }
    return layout;
  }

  std::unique_ptr<ClusterClient> Client() {
    ClusterClientOptions options;
    options.timeout_seconds = 20;
    auto client = ClusterClient::Create(Layout(), options);
    EXPECT_OK(client);
    return client.ok() ? *std::move(client) : nullptr;
  }

  // Waits until every replica serves `version` of "t".
  ::testing::AssertionResult AllServe(const std::string& version) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      std::string lagging;
      for (auto& server : servers_) {
        const std::string v = server->ServingVersion("t");
        if (v != version) {
          lagging += StrCat(" ", server->lookup_address(), " serves '", v, "'");
        }
      }
      if (lagging.empty()) return ::testing::AssertionSuccess();
      if (std::chrono::steady_clock::now() > deadline) {
        return ::testing::AssertionFailure()
               << "not every replica serves " << version << ":" << lagging;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // Every key through the C++ client, in batches, answering `version`.
  ::testing::AssertionResult EveryKey(ClusterClient& client, int version) {
    const std::vector<std::string> keys = Keys(kKeys);
    for (size_t i = 0; i < keys.size(); i += 500) {
      std::vector<std::string> batch(
          keys.begin() + i, keys.begin() + std::min(keys.size(), i + 500));
      auto r = client.MultiGet("t", batch);
      if (!r.ok()) return ::testing::AssertionFailure() << r.status();
      if (r->version != VersionName(version)) {
        return ::testing::AssertionFailure()
               << "batch at " << i << " answered " << r->version;
      }
      for (size_t j = 0; j < batch.size(); ++j) {
        if (!r->results[j].found ||
            VersionOf(r->results[j].value, batch[j]) != version) {
          return ::testing::AssertionFailure()
                 << "key " << batch[j] << ": found=" << r->results[j].found
                 << " value '" << r->results[j].value << "'";
        }
      }
    }
    return ::testing::AssertionSuccess();
  }

  static std::string VersionName(int v) {
    char name[16];
    std::snprintf(name, sizeof(name), "v%06d", v);
    return name;
  }

  std::vector<std::unique_ptr<ServerProcess>> servers_;
  int starts_ = 0;
};

// Load from a few threads: random batches of 100 keys, every answer
// checked; each batch must name one version and hold only its values.
class Load {
 public:
  explicit Load(ClusterClient* client) : client_(client) {
    for (int t = 0; t < 3; ++t) threads_.emplace_back([this, t] { Run(t); });
  }
  ~Load() { Stop(); }

  void Stop() {
    stop_ = true;
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  uint64_t calls() const { return calls_; }
  uint64_t failures() const { return failures_; }
  std::string first_failure() {
    std::lock_guard<std::mutex> lock(mu_);
    return first_failure_;
  }
  std::set<std::string> versions() {
    std::lock_guard<std::mutex> lock(mu_);
    return versions_;
  }

 private:
  void Run(int seed) {
    const std::vector<std::string> keys = Keys(kKeys);
    std::mt19937 rng(seed);
    std::vector<std::string> batch(100);
    while (!stop_) {
      for (auto& k : batch) k = keys[rng() % keys.size()];
      auto r = client_->MultiGet("t", batch);
      ++calls_;
      if (!r.ok()) {
        Fail(r.status().ToString());
        continue;
      }
      const int version = std::atoi(r->version.c_str() + 1);
      for (size_t j = 0; j < batch.size(); ++j) {
        if (!r->results[j].found ||
            VersionOf(r->results[j].value, batch[j]) != version) {
          Fail(StrCat("a batch named ", r->version, " but key ", batch[j],
                      " answered '", r->results[j].value, "'"));
          break;
        }
      }
      std::lock_guard<std::mutex> lock(mu_);
      versions_.insert(r->version);
    }
  }
  void Fail(std::string what) {
    ++failures_;
    std::lock_guard<std::mutex> lock(mu_);
    if (first_failure_.empty()) first_failure_ = std::move(what);
  }

  ClusterClient* client_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> calls_{0};
  std::atomic<uint64_t> failures_{0};
  std::mutex mu_;
  std::string first_failure_;
  std::set<std::string> versions_;
  std::vector<std::thread> threads_;
};

void RunFor(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

TEST_F(ClusterRepositoryTest, BothClientsReadEveryKeyOfEveryShard) {
  ASSERT_EQ(Publish(1, Keys(kKeys), kShards), 1u);
  ASSERT_TRUE(StartCluster());
  ASSERT_TRUE(AllServe("v000001"));
  auto client = Client();
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(EveryKey(*client, 1));
  // Each server holds only its own shard's file.
  for (uint32_t s = 0; s < kShards; ++s) {
    auto info = Replica(s, 1).Table("t");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->shard(), s);
    EXPECT_EQ(info->shard_count(), kShards);
    EXPECT_EQ(info->repository_version(), "v000001");
    EXPECT_EQ(info->key_count(), ShardKeys(kKeys, s, kShards).size());
  }

  // The Python package, from the same layout file, over the same keys.
  std::string layout = "{\"shards\": [";
  for (uint32_t s = 0; s < kShards; ++s) {
    layout += StrCat(s == 0 ? "" : ", ", "[\"", Replica(s, 0).lookup_address(),
                     "\", \"", Replica(s, 1).lookup_address(), "\"]");
  }
  layout += "]}\n";
  WriteFile(scratch_.File("cluster.json"), layout);
  std::string expected;
  for (const auto& [key, value] : Versioned(1, Keys(kKeys))) {
    expected += StrCat(absl::BytesToHexString(key), "\t",
                       absl::BytesToHexString(value), "\n");
  }
  WriteFile(scratch_.File("expected.tsv"), expected);
  const std::string command = StrCat(
      ROOST_PYTHON_CLIENT_PYTHON, " ", ROOST_SOURCE_DIR,
      "/clients/python/tests/check_cluster.py ", scratch_.File("cluster.json"),
      " t ", scratch_.File("expected.tsv"), " v000001 > ",
      scratch_.File("python.out"), " 2>&1");
  const int rc = std::system(command.c_str());
  EXPECT_EQ(rc, 0) << ReadFile(scratch_.File("python.out"));
  EXPECT_NE(ReadFile(scratch_.File("python.out"))
                .find(StrCat("checked ", kKeys, " keys")),
            std::string::npos)
      << ReadFile(scratch_.File("python.out"));
}

TEST_F(ClusterRepositoryTest, AKilledReplicaCostsNoCall) {
  ASSERT_EQ(Publish(1, Keys(kKeys), kShards), 1u);
  ASSERT_TRUE(StartCluster());
  auto client = Client();
  ASSERT_NE(client, nullptr);
  Load load(client.get());
  RunFor(std::chrono::milliseconds(500));
  const int port = Replica(1, 0).lookup_port();
  Replica(1, 0).SendSignal(SIGKILL);
  Replica(1, 0).WaitExit();
  RunFor(std::chrono::milliseconds(1500));
  const uint64_t calls_while_down = load.calls();
  ASSERT_TRUE(StartReplica(1, 0, port));
  RunFor(std::chrono::milliseconds(1500));
  load.Stop();
  EXPECT_EQ(load.failures(), 0u) << load.first_failure();
  EXPECT_GT(calls_while_down, 0u);
  EXPECT_GT(load.calls(), calls_while_down);
  EXPECT_EQ(load.versions(), std::set<std::string>{"v000001"});
  // The restarted replica answers again, from its own data directory.
  EXPECT_TRUE(ServesVersion(Replica(1, 0), ShardKeys(kKeys, 1, kShards), 1));
}

TEST_F(ClusterRepositoryTest, APublishUnderLoadNeverMixesVersionsInABatch) {
  ASSERT_EQ(Publish(1, Keys(kKeys), kShards), 1u);
  ASSERT_TRUE(StartCluster());
  auto client = Client();
  ASSERT_NE(client, nullptr);
  Load load(client.get());
  RunFor(std::chrono::milliseconds(500));
  ASSERT_EQ(Publish(2, Keys(kKeys), kShards), 2u);
  EXPECT_TRUE(AllServe("v000002"));
  RunFor(std::chrono::milliseconds(500));
  load.Stop();
  EXPECT_EQ(load.failures(), 0u) << load.first_failure();
  EXPECT_EQ(load.versions(), (std::set<std::string>{"v000001", "v000002"}));
  EXPECT_TRUE(EveryKey(*client, 2));
}

TEST_F(ClusterRepositoryTest, ARollbackByPointerServesTheOldVersionAgain) {
  ASSERT_EQ(Publish(1, Keys(kKeys), kShards), 1u);
  ASSERT_EQ(Publish(2, Keys(kKeys), kShards), 2u);
  ASSERT_TRUE(StartCluster());
  ASSERT_TRUE(AllServe("v000002"));
  auto client = Client();
  ASSERT_NE(client, nullptr);
  TableRepository repository(store_.get());
  ASSERT_OK(repository.MovePointer("t", 1));
  EXPECT_TRUE(AllServe("v000001"));
  EXPECT_TRUE(EveryKey(*client, 1));
}

TEST_F(ClusterRepositoryTest, ACorruptObjectIsRefusedAndTheOldVersionServes) {
  ASSERT_EQ(Publish(1, Keys(kKeys), kShards), 1u);
  ASSERT_TRUE(StartCluster());
  ASSERT_TRUE(AllServe("v000001"));
  ASSERT_EQ(Publish(2, Keys(kKeys), kShards, "t", /*point=*/false), 2u);
  // Shard 1's file of v2, changed by hand in the bucket (same size).
  const std::string object =
      TableRepository::VersionKey("t", 2, ShardFileName(1, kShards));
  auto bytes = store_->Get(object);
  ASSERT_OK(bytes);
  std::string damaged = *bytes;
  damaged[damaged.size() / 2] ^= 0x5a;
  ASSERT_OK(store_->Put(object, damaged));
  auto client = Client();
  ASSERT_NE(client, nullptr);
  TableRepository repository(store_.get());
  ASSERT_OK(repository.MovePointer("t", 2));

  // Shards 0 and 2 move to v2; shard 1 refuses it and keeps v1.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    bool done = Replica(0, 0).ServingVersion("t") == "v000002" &&
                Replica(2, 1).ServingVersion("t") == "v000002";
    for (int r = 0; r < kReplicas; ++r) {
      done = done && Failures(Replica(1, r).ScrapeMetrics(), "corrupt") > 0;
    }
    if (done) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << Replica(1, 0).Log();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (int r = 0; r < kReplicas; ++r) {
    EXPECT_EQ(Replica(1, r).ServingVersion("t"), "v000001");
    EXPECT_TRUE(ServesVersion(Replica(1, r), ShardKeys(kKeys, 1, kShards), 1));
  }
  // A batch over every shard still reads one version: v1, which shards 0
  // and 2 keep for --version-grace.
  EXPECT_TRUE(EveryKey(*client, 1));
}

}  // namespace
}  // namespace roost::testing
