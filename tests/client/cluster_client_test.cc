// The routing client (client/cluster_client.h) against a real sharded
// cluster on loopback: a table built by roost-load build --shards 3, one
// roost-server per replica with --shard I (tests/client/cluster_fixture.h).
// Every key through the router, misses, request order, replicas killed, all of
// a shard down, a stale layout, hedging, batches over the servers' --max-batch.

#include "client/cluster_client.h"

#include <csignal>
#include <span>
#include <thread>

#include "storage/partition.h"
#include "tests/client/cluster_fixture.h"

namespace roost::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int kShards = 3;

KeyValues Data(int n) {
  KeyValues kvs;
  for (const std::string& key : Keys(n)) kvs[key] = "value of " + key;
  return kvs;
}

std::vector<std::string> KeysOf(const KeyValues& kvs) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : kvs) keys.push_back(key);
  return keys;
}

std::unique_ptr<ClusterClient> Connect(ClusterLayout layout,
                                       ClusterClientOptions options = {}) {
  auto client = ClusterClient::Create(std::move(layout), options);
  EXPECT_OK(client);
  return client.ok() ? *std::move(client) : nullptr;
}

// One cluster for the suites that only read: shards 0 and 1 with two
// replicas, shard 2 with one.
class ClusterClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir;
    cluster_ = new LoopbackCluster(*scratch_, {2, 2, 1});
    kvs_ = new KeyValues(Data(400));
    ASSERT_NE(BuildTable(cluster_->data_dir(0), "t", *kvs_, "cuckoo",
                         {"--shards", StrCat(kShards)}),
              "");
    ASSERT_NE(BuildTable(cluster_->data_dir(0), "b", *kvs_, "block",
                         {"--shards", StrCat(kShards)}),
              "");
    ASSERT_TRUE(cluster_->Start());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete kvs_;
    delete scratch_;
  }

  static ScratchDir* scratch_;
  static LoopbackCluster* cluster_;
  static KeyValues* kvs_;
};
ScratchDir* ClusterClientTest::scratch_ = nullptr;
LoopbackCluster* ClusterClientTest::cluster_ = nullptr;
KeyValues* ClusterClientTest::kvs_ = nullptr;

TEST_F(ClusterClientTest, EveryKeyThroughTheRouter) {
  auto client = Connect(cluster_->layout());
  ASSERT_NE(client, nullptr);
  const std::vector<std::string> keys = KeysOf(*kvs_);
  for (const char* table : {"t", "b"}) {
    SCOPED_TRACE(table);
    absl::StatusOr<MultiGetResult> r = client->MultiGet(table, keys);
    ASSERT_OK(r);
    EXPECT_EQ(r->version, "v000001");
    ASSERT_EQ(r->results.size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      EXPECT_TRUE(r->results[i].found) << keys[i];
      EXPECT_EQ(r->results[i].value, kvs_->at(keys[i]));
    }
  }
  // Get, on keys of every shard.
  std::vector<int> per_shard(kShards);
  for (const std::string& key : keys) {
    if (per_shard[client->ShardOf(key)]++ >= 3) continue;
    absl::StatusOr<GetResult> r = client->Get("t", key);
    ASSERT_OK(r);
    EXPECT_EQ(r->version, "v000001");
    EXPECT_TRUE(r->found);
    EXPECT_EQ(r->value, kvs_->at(key));
  }
  for (int count : per_shard) EXPECT_GT(count, 0);
}

TEST_F(ClusterClientTest, MissesAreMisses) {
  auto client = Connect(cluster_->layout());
  ASSERT_NE(client, nullptr);
  std::vector<std::string> keys = {"missing-1", "", "missing-2",
                                   std::string("\0\xff", 2)};
  // Misses of every shard, around a hit.
  for (int i = 0; i < 30; ++i) keys.push_back(StrCat("absent-", i));
  keys.push_back(kvs_->begin()->first);
  absl::StatusOr<MultiGetResult> r = client->MultiGet("t", keys);
  ASSERT_OK(r);
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    EXPECT_FALSE(r->results[i].found) << i;
    EXPECT_EQ(r->results[i].value, "");
  }
  EXPECT_TRUE(r->results.back().found);
  absl::StatusOr<GetResult> get = client->Get("t", "missing-1");
  ASSERT_OK(get);
  EXPECT_FALSE(get->found);
}

TEST_F(ClusterClientTest, RequestOrderDuplicatesAndEmptyBatches) {
  auto client = Connect(cluster_->layout());
  ASSERT_NE(client, nullptr);
  absl::StatusOr<MultiGetResult> empty = client->MultiGet("t", {});
  ASSERT_OK(empty);
  EXPECT_TRUE(empty->results.empty());

  // Keys of every shard interleaved, each several times, misses between.
  std::vector<std::string> keys;
  const std::vector<std::string> all = KeysOf(*kvs_);
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < 60; ++i) {
      keys.push_back(all[(i * 7 + round) % all.size()]);
      if (i % 5 == 0) keys.push_back(StrCat("nope-", i));
      if (i % 9 == 0) keys.push_back(keys.front());
    }
  }
  absl::StatusOr<MultiGetResult> r = client->MultiGet("t", keys);
  ASSERT_OK(r);
  ASSERT_EQ(r->results.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto it = kvs_->find(keys[i]);
    EXPECT_EQ(r->results[i].found, it != kvs_->end()) << i;
    if (it != kvs_->end()) {
      EXPECT_EQ(r->results[i].value, it->second) << i;
    }
  }
}

TEST_F(ClusterClientTest, UnknownTableIsNotFound) {
  auto client = Connect(cluster_->layout());
  ASSERT_NE(client, nullptr);
  EXPECT_THAT(client->MultiGet("nope", KeysOf(*kvs_)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("nope")));
}

TEST_F(ClusterClientTest, AStaleLayoutIsAnErrorNamingTheShard) {
  // The shards listed in the wrong order.
  ClusterLayout layout = cluster_->layout();
  std::swap(layout.shards[0], layout.shards[2]);
  auto client = Connect(layout);
  ASSERT_NE(client, nullptr);
  // A key of (true) shard 0, sent to shard 2's server.
  std::string key;
  for (const auto& [k, v] : *kvs_) {
    if (PartitionOf(k, kShards) == 0) {
      key = k;
      break;
    }
  }
  EXPECT_THAT(
      client->Get("t", key),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr(StrCat("stale cluster layout: shard 0 (",
                                layout.shards[0][0],
                                "): key 0 belongs to shard 0 of 3; this "
                                "server serves shard 2"))));
  EXPECT_THAT(client->MultiGet("t", KeysOf(*kvs_)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("stale cluster layout: shard ")));

  // Too few shards listed.
  ClusterLayout two = cluster_->layout();
  two.shards.pop_back();
  auto short_client = Connect(two);
  ASSERT_NE(short_client, nullptr);
  EXPECT_THAT(short_client->MultiGet("t", KeysOf(*kvs_)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("of 3; this server serves shard")));
}

TEST_F(ClusterClientTest, HedgedCallsAnswerTheSame) {
  ClusterClientOptions options;
  options.hedge_delay_seconds = 0.0001;  // a hedge for nearly every part
  auto client = Connect(cluster_->layout(), options);
  ASSERT_NE(client, nullptr);
  const std::vector<std::string> keys = KeysOf(*kvs_);
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<MultiGetResult> r = client->MultiGet("t", keys);
    ASSERT_OK(r);
    for (size_t j = 0; j < keys.size(); ++j) {
      ASSERT_EQ(r->results[j].value, kvs_->at(keys[j]));
    }
  }
}

TEST_F(ClusterClientTest, ManyThreadsShareOneClient) {
  auto client = Connect(cluster_->layout());
  ASSERT_NE(client, nullptr);
  const std::vector<std::string> keys = KeysOf(*kvs_);
  Problems problems;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::span<const std::string> batch(
            keys.data() + (t * 37 + i) % 300, 50);
        absl::StatusOr<MultiGetResult> r = client->MultiGet("t", batch);
        if (!r.ok()) {
          problems.Add(std::string(r.status().message()));
          continue;
        }
        for (size_t j = 0; j < batch.size(); ++j) {
          if (r->results[j].value != kvs_->at(batch[j])) {
            problems.Add("wrong value of " + batch[j]);
          }
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(problems.count(), 0) << problems.Describe();
}

// Servers killed: a cluster of its own.
class ClusterFailoverTest : public ServerFixture {};

TEST_F(ClusterFailoverTest, AKilledReplicaIsRetriedOnTheOther) {
  LoopbackCluster cluster(scratch_, {2, 2, 2});
  const KeyValues kvs = Data(300);
  ASSERT_NE(BuildTable(cluster.data_dir(0), "t", kvs, "cuckoo",
                       {"--shards", StrCat(kShards)}),
            "");
  ASSERT_TRUE(cluster.Start());
  auto client = Connect(cluster.layout());
  ASSERT_NE(client, nullptr);
  const std::vector<std::string> keys = KeysOf(kvs);
  ASSERT_OK(client->MultiGet("t", keys));  // every channel connected

  // One replica of each of shards 0 and 1 gone: every call still answers.
  cluster.server(0, 0).SendSignal(SIGKILL);
  cluster.server(1, 1).SendSignal(SIGKILL);
  ASSERT_EQ(cluster.server(0, 0).WaitExit(), 128 + SIGKILL);
  ASSERT_EQ(cluster.server(1, 1).WaitExit(), 128 + SIGKILL);
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<MultiGetResult> r = client->MultiGet("t", keys);
    ASSERT_OK(r) << "call " << i;
    for (size_t j = 0; j < keys.size(); ++j) {
      ASSERT_EQ(r->results[j].value, kvs.at(keys[j]));
    }
    ASSERT_OK(client->Get("t", keys[i]));
  }

  // Both replicas of shard 2 gone: UNAVAILABLE naming it, within the
  // deadline (not DEADLINE_EXCEEDED), while a batch without its keys
  // still answers.
  cluster.server(2, 0).SendSignal(SIGKILL);
  cluster.server(2, 1).SendSignal(SIGKILL);
  ASSERT_EQ(cluster.server(2, 0).WaitExit(), 128 + SIGKILL);
  ASSERT_EQ(cluster.server(2, 1).WaitExit(), 128 + SIGKILL);
  CallOptions call;
  call.timeout_seconds = 3;
  EXPECT_THAT(client->MultiGet("t", keys, call),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("shard 2 (")));
  std::vector<std::string> others;
  for (const std::string& key : keys) {
    if (client->ShardOf(key) != 2) others.push_back(key);
  }
  ASSERT_OK(client->MultiGet("t", others, call));
}

// A replica that hangs (SIGSTOP: its connections stay open, nothing
// answers): without hedging, a call whose part goes to it runs into its
// deadline; with hedging, the other replica answers it.
TEST_F(ClusterFailoverTest, HedgingAnswersAroundAHungReplica) {
  LoopbackCluster cluster(scratch_, {2});
  const KeyValues kvs = Data(50);
  ASSERT_NE(BuildTable(cluster.data_dir(0), "t", kvs), "");
  ASSERT_TRUE(cluster.Start());
  ClusterClientOptions hedged;
  hedged.hedge_delay_seconds = 0.05;
  auto client = Connect(cluster.layout(), hedged);
  auto plain = Connect(cluster.layout());
  ASSERT_NE(client, nullptr);
  ASSERT_NE(plain, nullptr);
  const std::vector<std::string> keys = KeysOf(kvs);
  ASSERT_OK(client->MultiGet("t", keys));  // both connect to both
  ASSERT_OK(client->MultiGet("t", keys));
  ASSERT_OK(plain->MultiGet("t", keys));
  ASSERT_OK(plain->MultiGet("t", keys));

  ASSERT_TRUE(cluster.server(0, 0).Stop());
  CallOptions call;
  call.timeout_seconds = 10;
  for (int i = 0; i < 6; ++i) {  // round robin: half go to the hung one
    absl::StatusOr<MultiGetResult> r = client->MultiGet("t", keys, call);
    ASSERT_OK(r) << "call " << i;
    EXPECT_EQ(r->results[0].value, kvs.at(keys[0]));
  }
  call.timeout_seconds = 0.5;
  int hung = 0;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<MultiGetResult> r = plain->MultiGet("t", keys, call);
    if (!r.ok()) {
      EXPECT_THAT(r, StatusIs(absl::StatusCode::kDeadlineExceeded,
                              HasSubstr("shard 0 (")));
      ++hung;
    }
  }
  EXPECT_EQ(hung, 1);
  cluster.server(0, 0).SendSignal(SIGCONT);
}

TEST_F(ClusterFailoverTest, AReplicaThatNeverRanIsSkipped) {
  // A listed replica nobody listens on (a port just closed).
  LoopbackCluster cluster(scratch_, {1});
  const KeyValues kvs = Data(50);
  ASSERT_NE(BuildTable(cluster.data_dir(0), "t", kvs), "");
  ASSERT_TRUE(cluster.Start());
  ClusterLayout layout = cluster.layout();
  layout.shards[0].insert(layout.shards[0].begin(), "127.0.0.1:1");
  auto client = Connect(layout);
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 6; ++i) {
    absl::StatusOr<GetResult> r = client->Get("t", kvs.begin()->first);
    ASSERT_OK(r);
    EXPECT_EQ(r->value, kvs.begin()->second);
  }
}

// A shard whose replicas are all gone is UNAVAILABLE even when the deadline
// ends the last attempt: on a busy machine the attempt that the last
// backoff leaves time for can still be connecting when the deadline comes
// (ClusterFailoverTest.AKilledReplicaIsRetriedOnTheOther once failed so,
// with DEADLINE_EXCEEDED). Here that is made certain: the first replica
// refuses at once, the second never answers, and no retry fits.
TEST_F(ClusterFailoverTest, AShardThatRefusedIsUnavailableWhenTheDeadlineEnds) {
  LoopbackCluster cluster(scratch_, {1});
  const KeyValues kvs = Data(50);
  ASSERT_NE(BuildTable(cluster.data_dir(0), "t", kvs), "");
  ASSERT_TRUE(cluster.Start());
  ClusterLayout layout = cluster.layout();
  // A fresh client's first call goes to the shard's first replica.
  layout.shards[0].insert(layout.shards[0].begin(), "127.0.0.1:1");
  auto client = Connect(layout);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(cluster.server(0, 0).Stop());
  CallOptions call;
  call.timeout_seconds = 0.5;
  EXPECT_THAT(client->MultiGet("t", KeysOf(kvs), call),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("shard 0 (127.0.0.1:1)"),
                             HasSubstr("last of 2 attempts; no replica "
                                       "answered before the deadline"))));
  cluster.server(0, 0).SendSignal(SIGCONT);

  // A replica that only hangs is still DEADLINE_EXCEEDED: nothing refused.
  ClusterLayout hung = cluster.layout();
  auto plain = Connect(hung);
  ASSERT_NE(plain, nullptr);
  ASSERT_OK(plain->MultiGet("t", KeysOf(kvs)));
  ASSERT_TRUE(cluster.server(0, 0).Stop());
  EXPECT_THAT(
      plain->MultiGet("t", KeysOf(kvs), call),
      StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("shard 0 (")));
  cluster.server(0, 0).SendSignal(SIGCONT);
}

// A batch with more keys for a shard than the servers' --max-batch goes
// as several calls (ClusterClientOptions::max_batch), answered in request
// order from one version; with the default max_batch, above the servers'
// limit here, the same batch is refused. With partial answers the parts go
// out at once: a live shard's parts answer while a dead shard's retry
// until the deadline.
TEST_F(ClusterFailoverTest, ABatchOverMaxBatchGoesInParts) {
  LoopbackCluster cluster(scratch_, {1, 1}, {"--max-batch", "70"});
  const KeyValues kvs = Data(1000);
  ASSERT_NE(
      BuildTable(cluster.data_dir(0), "t", kvs, "cuckoo", {"--shards", "2"}),
      "");
  ASSERT_TRUE(cluster.Start());
  ClusterClientOptions options;
  options.max_batch = 70;
  auto client = Connect(cluster.layout(), options);
  ASSERT_NE(client, nullptr);
  std::vector<std::string> keys = KeysOf(kvs);
  keys.push_back("no such key");
  keys.push_back(keys[3]);
  absl::StatusOr<MultiGetResult> r = client->MultiGet("t", keys);
  ASSERT_OK(r);
  ASSERT_EQ(r->results.size(), keys.size());
  for (size_t j = 0; j < keys.size(); ++j) {
    const auto it = kvs.find(keys[j]);
    EXPECT_EQ(r->results[j].found, it != kvs.end()) << keys[j];
    if (it != kvs.end()) {
      EXPECT_EQ(r->results[j].value, it->second);
    }
  }
  EXPECT_EQ(r->version, "v000001");
  auto plain = Connect(cluster.layout());
  ASSERT_NE(plain, nullptr);
  EXPECT_THAT(plain->MultiGet("t", keys),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("exceeds --max-batch 70")));
  options.max_batch = 0;
  EXPECT_THAT(
      ClusterClient::Create(cluster.layout(), options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_batch")));

  options.max_batch = 70;
  options.partial_answers = true;
  options.timeout_seconds = 3;
  auto partial = Connect(cluster.layout(), options);
  ASSERT_NE(partial, nullptr);
  cluster.server(0, 0).SendSignal(SIGKILL);
  ASSERT_EQ(cluster.server(0, 0).WaitExit(), 128 + SIGKILL);
  r = partial->MultiGet("t", keys);
  ASSERT_OK(r);
  size_t marked = 0;
  for (size_t j = 0; j < keys.size(); ++j) {
    const LookupResult& got = r->results[j];
    if (partial->ShardOf(keys[j]) == 0) {
      ++marked;
      EXPECT_THAT(got.error, StatusIs(absl::StatusCode::kUnavailable,
                                      HasSubstr("shard 0 (")));
      EXPECT_FALSE(got.found);
      continue;
    }
    ASSERT_OK(got.error) << keys[j];
    const auto it = kvs.find(keys[j]);
    EXPECT_EQ(got.found, it != kvs.end()) << keys[j];
    if (it != kvs.end()) {
      EXPECT_EQ(got.value, it->second);
    }
  }
  EXPECT_EQ(r->failed_keys, marked);
  EXPECT_GT(marked, 70u);
  EXPECT_LT(marked, keys.size() - 70);
  EXPECT_EQ(r->version, "v000001");
}

}  // namespace
}  // namespace roost::testing
