// The routing client's versions and Scan against a real sharded cluster on
// loopback (tests/client/cluster_fixture.h): results name the version that
// answered; a batch never mixes versions while a new version reaches one
// shard before the others (the servers answer the version they replaced
// for --version-grace); Scan merges the shards' streams in key order;
// roost-get --scan end to end.

#include <csignal>

#include "client/cluster_client.h"
#include "client/monotonic_reads.h"
#include "client/rpc_util.h"
#include "client/version_consensus.h"
#include "storage/partition.h"
#include "tests/client/cluster_fixture.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kShards = 3;

std::vector<std::string> KeysOf(const KeyValues& kvs) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : kvs) keys.push_back(key);
  return keys;
}

std::unique_ptr<ClusterClient> Connect(const ClusterLayout& layout) {
  auto client = ClusterClient::Create(layout);
  EXPECT_OK(client);
  return client.ok() ? *std::move(client) : nullptr;
}

// Every value of `r` is `version`'s ("VERSION:KEY", versioned_tables.h).
::testing::AssertionResult AllFrom(const MultiGetResult& r,
                                   const std::vector<std::string>& keys,
                                   int version) {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (VersionOf(r.results[i].value, keys[i]) != version) {
      return ::testing::AssertionFailure()
             << keys[i] << " = \"" << r.results[i].value << "\", want v"
             << version << " (the batch named " << r.version << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

class ClusterVersionsTest : public ServerFixture {
 protected:
  // Waits until every server of `shard` serves `version` of "t".
  ::testing::AssertionResult WaitServes(LoopbackCluster& cluster, int shard,
                                        int replicas,
                                        const std::string& version) {
    for (int r = 0; r < replicas; ++r) {
      ServerProcess& server = cluster.server(shard, r);
      if (!WaitFor([&] { return server.ServingVersion("t") == version; })) {
        return ::testing::AssertionFailure()
               << "shard " << shard << " serves " << server.ServingVersion("t")
               << ", not " << version << "\n"
               << server.Log();
      }
    }
    return ::testing::AssertionSuccess();
  }
};

TEST_F(ClusterVersionsTest, ResultsNameTheVersion) {
  LoopbackCluster cluster(scratch_, {1, 1, 1});
  const KeyValues kvs = Versioned(1, Keys(100));
  ASSERT_NE(BuildTable(cluster.data_dir(0), "t", kvs, "cuckoo",
                       {"--shards", StrCat(kShards)}),
            "");
  ASSERT_TRUE(cluster.Start());
  auto client = Connect(cluster.layout());
  ASSERT_NE(client, nullptr);
  absl::StatusOr<MultiGetResult> r = client->MultiGet("t", KeysOf(kvs));
  ASSERT_OK(r);
  EXPECT_EQ(r->version, "v000001");
  absl::StatusOr<GetResult> get = client->Get("t", kvs.begin()->first);
  ASSERT_OK(get);
  EXPECT_EQ(get->version, "v000001");
  // A version named by the caller: read from it, or refused.
  CallOptions pinned;
  pinned.version = "1";
  ASSERT_OK(client->MultiGet("t", KeysOf(kvs), pinned));
  pinned.version = "v000009";
  EXPECT_THAT(client->MultiGet("t", KeysOf(kvs), pinned),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// A new version published to one shard's data directory only: every
// batch still reads one version (the old one, which that shard's server
// keeps for --version-grace), until every shard serves the new one.
TEST_F(ClusterVersionsTest, ABatchNeverMixesVersions) {
  LoopbackCluster cluster(scratch_, {1, 2, 1}, {"--version-grace", "600"},
                          /*shared_data=*/false);
  const std::vector<std::string> keys = Keys(300);
  for (int s = 0; s < kShards; ++s) {
    ASSERT_NE(BuildTable(cluster.data_dir(s), "t", Versioned(1, keys), "block",
                         {"--shards", StrCat(kShards)}),
              "");
  }
  ASSERT_TRUE(cluster.Start());
  auto client = Connect(cluster.layout());
  ASSERT_NE(client, nullptr);

  ASSERT_NE(BuildTable(cluster.data_dir(1), "t", Versioned(2, keys), "block",
                       {"--shards", StrCat(kShards)}),
            "");
  ASSERT_TRUE(WaitServes(cluster, 1, 2, "v000002"));
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<MultiGetResult> r = client->MultiGet("t", keys);
    ASSERT_OK(r);
    EXPECT_EQ(r->version, "v000001");
    EXPECT_TRUE(AllFrom(*r, keys, 1));
  }
  absl::StatusOr<ScanResult> scan = client->Scan("t", {});
  ASSERT_OK(scan);
  EXPECT_EQ(scan->version, "v000001");
  ASSERT_EQ(scan->entries.size(), keys.size());
  for (const ScanEntry& e : scan->entries) {
    EXPECT_EQ(VersionOf(e.value, e.key), 1) << e.key;
  }

  for (int s : {0, 2}) {
    ASSERT_NE(BuildTable(cluster.data_dir(s), "t", Versioned(2, keys), "block",
                         {"--shards", StrCat(kShards)}),
              "");
    ASSERT_TRUE(WaitServes(cluster, s, 1, "v000002"));
  }
  absl::StatusOr<MultiGetResult> r = client->MultiGet("t", keys);
  ASSERT_OK(r);
  EXPECT_EQ(r->version, "v000002");
  EXPECT_TRUE(AllFrom(*r, keys, 2));
}

// Without a grace period the shard that moved on cannot answer the old
// version, and the others do not have the new one yet: the batch fails
// ABORTED naming both, never mixes them; once every shard has the new
// version, it is read.
TEST_F(ClusterVersionsTest, NoCommonVersionIsAbortedNotMixed) {
  LoopbackCluster cluster(scratch_, {1, 1, 1}, {"--version-grace", "0"},
                          /*shared_data=*/false);
  const std::vector<std::string> keys = Keys(200);
  for (int s = 0; s < kShards; ++s) {
    ASSERT_NE(BuildTable(cluster.data_dir(s), "t", Versioned(1, keys), "cuckoo",
                         {"--shards", StrCat(kShards)}),
              "");
  }
  ASSERT_TRUE(cluster.Start());
  auto client = Connect(cluster.layout());
  ASSERT_NE(client, nullptr);
  ASSERT_NE(BuildTable(cluster.data_dir(1), "t", Versioned(2, keys), "cuckoo",
                       {"--shards", StrCat(kShards)}),
            "");
  ASSERT_TRUE(WaitServes(cluster, 1, 1, "v000002"));
  CallOptions call;
  call.timeout_seconds = 1;
  EXPECT_THAT(client->MultiGet("t", keys, call),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("versions seen: v000001, v000002")));
  for (int s : {0, 2}) {
    ASSERT_NE(BuildTable(cluster.data_dir(s), "t", Versioned(2, keys), "cuckoo",
                         {"--shards", StrCat(kShards)}),
              "");
    ASSERT_TRUE(WaitServes(cluster, s, 1, "v000002"));
  }
  absl::StatusOr<MultiGetResult> r = client->MultiGet("t", keys);
  ASSERT_OK(r);
  EXPECT_EQ(r->version, "v000002");
  EXPECT_TRUE(AllFrom(*r, keys, 2));
}

// MonotonicReads' rules alone (client/README.md, "Monotonic reads").
TEST(MonotonicReadsTest, TheTargetWaitsForEveryShardHeardFrom) {
  MonotonicReads m;
  EXPECT_EQ(m.Target("t"), 0u);
  m.Answered("t", 0, "v000001", "");
  m.Answered("t", 1, "v000002", "");
  EXPECT_EQ(m.Target("t"), 1u);  // shard 0 has not shown v2
  m.Settled("t", 1);
  m.Answered("t", 0, "2", "");
  EXPECT_EQ(m.Target("t"), 2u);
  m.Settled("t", 2);
  // An older answer never takes the floor back by itself.
  m.Answered("t", 0, "v000001", "");
  EXPECT_EQ(m.Target("t"), 2u);
  EXPECT_EQ(m.Floor("t"), 2u);
  // Tables are apart; a version that is no number changes nothing.
  m.Answered("u", 0, "", "");
  EXPECT_EQ(m.Target("u"), 0u);
}

TEST(MonotonicReadsTest, AWithdrawnRangeTakesTheFloorBack) {
  MonotonicReads m;
  m.Answered("t", 0, "v000003", "");
  m.Answered("t", 1, "v000003", "");
  m.Settled("t", 3);
  // Shard 1 rolled back to v2 from v3.
  m.Answered("t", 1, "v000002", "v000003");
  EXPECT_EQ(m.Floor("t"), 2u);
  EXPECT_EQ(m.Target("t"), 2u);
  EXPECT_FALSE(m.Readable("t", 3));
  EXPECT_TRUE(m.Readable("t", 2));
  // Shard 0 has not rolled back yet: its v3 counts for nothing.
  m.Answered("t", 0, "v000003", "");
  EXPECT_EQ(m.Target("t"), 2u);
  // A version published after the rollback is read again.
  m.Answered("t", 0, "v000004", "");
  m.Answered("t", 1, "v000004", "");
  EXPECT_TRUE(m.Readable("t", 4));
  EXPECT_EQ(m.Target("t"), 4u);
}

TEST(MonotonicReadsTest, ARollbackBelowNothingReadKeepsItsOwnVersion) {
  // A client that never read past v1 hears of v2 standing in for v3: v2
  // itself is not withdrawn, nor is the floor moved.
  MonotonicReads m;
  m.Answered("t", 0, "v000001", "");
  m.Settled("t", 1);
  m.Answered("t", 0, "v000002", "v000003");
  EXPECT_TRUE(m.Readable("t", 2));
  EXPECT_FALSE(m.Readable("t", 3));
  EXPECT_EQ(m.Floor("t"), 1u);
  EXPECT_EQ(m.Target("t"), 2u);
}

// Monotonic reads (client/README.md): a version one shard has is read only
// once every shard heard from has shown it, by batches and single Gets
// (coalesced or not) alike; and a rollback, which the servers sign with
// withdrawn_through, takes the floor back.
TEST_F(ClusterVersionsTest, MonotonicReadsSwitchOnceAndFollowARollback) {
  LoopbackCluster cluster(scratch_, {1, 1, 1}, {"--version-grace", "600"},
                          /*shared_data=*/false);
  const std::vector<std::string> keys = Keys(300);
  for (int s = 0; s < kShards; ++s) {
    ASSERT_NE(BuildTable(cluster.data_dir(s), "t", Versioned(1, keys), "block",
                         {"--shards", StrCat(kShards)}),
              "");
  }
  cluster.WithAdmin();
  ASSERT_TRUE(cluster.Start());
  ClusterClientOptions options;
  options.monotonic = true;
  options.timeout_seconds = 5;
  auto client = ClusterClient::Create(cluster.layout(), options);
  ASSERT_OK(client);
  options.coalesce_gets = true;
  auto coalescing = ClusterClient::Create(cluster.layout(), options);
  ASSERT_OK(coalescing);
  // A key of each shard.
  std::vector<std::string> key_of(kShards);
  for (const std::string& k : keys) {
    key_of[PartitionOf(k, kShards)] = k;
  }
  auto get_version = [&](ClusterClient& c, int shard) {
    absl::StatusOr<GetResult> g = c.Get("t", key_of[shard]);
    if (!g.ok()) return std::string(g.status().message());
    if (static_cast<uint64_t>(VersionOf(g->value, key_of[shard])) !=
        *VersionNumber(g->version)) {
      return StrCat("value ", g->value, " is not of ", g->version);
    }
    return g->version;
  };
  for (ClusterClient* c : {client->get(), coalescing->get()}) {
    absl::StatusOr<MultiGetResult> r = c->MultiGet("t", keys);
    ASSERT_OK(r);
    EXPECT_EQ(r->version, "v000001");
  }

  // v2 on shard 1 only: its keys are still read at v1, since shards 0 and
  // 2 were heard from at v1.
  ASSERT_NE(BuildTable(cluster.data_dir(1), "t", Versioned(2, keys), "block",
                       {"--shards", StrCat(kShards)}),
            "");
  ASSERT_TRUE(WaitServes(cluster, 1, 1, "v000002"));
  for (ClusterClient* c : {client->get(), coalescing->get()}) {
    for (int i = 0; i < 3; ++i) EXPECT_EQ(get_version(*c, 1), "v000001");
    absl::StatusOr<MultiGetResult> r = c->MultiGet("t", keys);
    ASSERT_OK(r);
    EXPECT_EQ(r->version, "v000001");
    EXPECT_TRUE(AllFrom(*r, keys, 1));
  }
  // Every shard at v2: one switch, for every kind of call.
  for (int s : {0, 2}) {
    ASSERT_NE(BuildTable(cluster.data_dir(s), "t", Versioned(2, keys), "block",
                         {"--shards", StrCat(kShards)}),
              "");
    ASSERT_TRUE(WaitServes(cluster, s, 1, "v000002"));
  }
  for (ClusterClient* c : {client->get(), coalescing->get()}) {
    // Shard 1's keys first: shards 0 and 2 are heard from at v2 only by
    // the batch after.
    absl::StatusOr<MultiGetResult> r = c->MultiGet("t", keys);
    ASSERT_OK(r);
    EXPECT_EQ(r->version, "v000002");
    EXPECT_TRUE(AllFrom(*r, keys, 2));
    for (int s = 0; s < kShards; ++s) EXPECT_EQ(get_version(*c, s), "v000002");
    absl::StatusOr<ScanResult> scan = c->Scan("t", {});
    ASSERT_OK(scan);
    EXPECT_EQ(scan->version, "v000002");
  }

  // Shard 0's server rolled back alone: v1 there names v2 withdrawn, and
  // the client follows (the floor goes back) instead of waiting for v2.
  v1::RollbackResponse rolled;
  ASSERT_OK(cluster.server(0, 0).Rollback("t", "1", &rolled));
  EXPECT_EQ(cluster.server(0, 0).Table("t")->withdrawn_through(), "v000002");
  for (ClusterClient* c : {client->get(), coalescing->get()}) {
    EXPECT_EQ(get_version(*c, 0), "v000001");
    absl::StatusOr<MultiGetResult> r = c->MultiGet("t", keys);
    ASSERT_OK(r);
    EXPECT_EQ(r->version, "v000001");
    EXPECT_TRUE(AllFrom(*r, keys, 1));
    // Shards 1 and 2 still serve v2, withdrawn: never read again.
    EXPECT_EQ(get_version(*c, 2), "v000001");
  }
  // Naming a version is outside monotonic reads.
  CallOptions pinned;
  pinned.version = "2";
  absl::StatusOr<GetResult> g = (*client)->Get("t", key_of[1], pinned);
  ASSERT_OK(g);
  EXPECT_EQ(g->version, "v000002");
}

// roost-admin wait counts a replica only when it serves the version as the
// shard the layout lists it as (TableInfo.shard and shard_count).
TEST_F(ClusterVersionsTest, WaitChecksTheShardEachReplicaServes) {
  LoopbackCluster cluster(scratch_, {1, 1, 1});
  ASSERT_NE(BuildTable(cluster.data_dir(0), "t", Versioned(1, Keys(50)),
                       "cuckoo", {"--shards", StrCat(kShards)}),
            "");
  ASSERT_TRUE(cluster.Start());
  auto client = Connect(cluster.layout());
  ASSERT_NE(client, nullptr);
  ClusterLayout layout = cluster.layout();
  const std::string path = scratch_.File("swapped.json");
  WriteFile(path, StrCat("{\"shards\": [[\"", layout.shards[1][0], "\"], [\"",
                         layout.shards[0][0], "\"], [\"", layout.shards[2][0],
                         "\"]]}"));
  const ProcessResult r =
      RunProcess({RoostAdminBinary(), "wait", "--cluster", path, "--table", "t",
                  "--version", "v000001", "--timeout", "0"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err,
              HasSubstr(StrCat("roost-admin: shard 0 ", layout.shards[1][0],
                               ": serves shard 1 of 3, listed as "
                               "shard 0 of 3\n")));
  EXPECT_THAT(r.err, HasSubstr("2 of 3 replicas do not serve t v000001\n"));
  const ProcessResult ok = RunProcess(
      {RoostAdminBinary(), "wait", "--cluster", cluster.WriteLayout(),
       "--table", "t", "--version", "v000001", "--timeout", "10"});
  EXPECT_EQ(ok.exit_code, kExitOk) << ok.err;
}

class ClusterScanTest : public ServerFixture {
 protected:
  void SetUp() override {
    for (const std::string& key : Keys(500)) kvs_[key] = "v-" + key;
    ASSERT_NE(BuildTable(cluster_.data_dir(0), "b", kvs_, "block",
                         {"--shards", StrCat(kShards)}),
              "");
    ASSERT_NE(BuildTable(cluster_.data_dir(0), "c", kvs_, "cuckoo",
                         {"--shards", StrCat(kShards)}),
              "");
    ASSERT_TRUE(cluster_.Start());
    client_ = Connect(cluster_.layout());
    ASSERT_NE(client_, nullptr);
  }

  // The entries of kvs_ in [start, end) with `prefix`, in key order.
  std::vector<std::pair<std::string, std::string>> Expected(
      const std::string& start, const std::string& end,
      const std::string& prefix) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [key, value] : kvs_) {
      if (key < start || (!end.empty() && key >= end)) continue;
      if (!key.starts_with(prefix)) continue;
      out.emplace_back(key, value);
    }
    return out;
  }
  static std::vector<std::pair<std::string, std::string>> Entries(
      const ScanResult& r) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const ScanEntry& e : r.entries) out.emplace_back(e.key, e.value);
    return out;
  }

  KeyValues kvs_;
  LoopbackCluster cluster_{scratch_, {2, 1, 1}};
  std::unique_ptr<ClusterClient> client_;
};

TEST_F(ClusterScanTest, MergedAcrossShardsEqualsTheSortedInput) {
  absl::StatusOr<ScanResult> all = client_->Scan("b", {});
  ASSERT_OK(all);
  EXPECT_EQ(Entries(*all), Expected("", "", ""));
  EXPECT_FALSE(all->more);
  EXPECT_EQ(all->version, "v000001");

  ScanOptions range;
  range.start = "key-12";
  range.end = "key-3";
  absl::StatusOr<ScanResult> r = client_->Scan("b", range);
  ASSERT_OK(r);
  EXPECT_EQ(Entries(*r), Expected("key-12", "key-3", ""));
  EXPECT_FALSE(r->more);

  ScanOptions prefix;
  prefix.prefix = "key-4";
  r = client_->Scan("b", prefix);
  ASSERT_OK(r);
  EXPECT_EQ(Entries(*r), Expected("", "", "key-4"));
  EXPECT_GT(r->entries.size(), 10u);
}

TEST_F(ClusterScanTest, LimitAppliesToTheMergedResult) {
  const auto expected = Expected("", "", "");
  for (uint32_t limit : {1u, 7u, 100u, 499u, 500u, 501u}) {
    SCOPED_TRACE(limit);
    ScanOptions scan;
    scan.limit = limit;
    absl::StatusOr<ScanResult> r = client_->Scan("b", scan);
    ASSERT_OK(r);
    const size_t want = std::min<size_t>(limit, expected.size());
    EXPECT_EQ(Entries(*r),
              decltype(expected)(expected.begin(), expected.begin() + want));
    EXPECT_EQ(r->more, limit < expected.size());
  }
  // Resuming after the last key reads the rest, page by page.
  std::vector<std::pair<std::string, std::string>> paged;
  ScanOptions page;
  page.limit = 64;
  while (true) {
    absl::StatusOr<ScanResult> r = client_->Scan("b", page);
    ASSERT_OK(r);
    for (const ScanEntry& e : r->entries) paged.emplace_back(e.key, e.value);
    if (!r->more) break;
    page.start = r->entries.back().key + std::string(1, '\0');
  }
  EXPECT_EQ(paged, expected);
}

// A replica down: its shard's stream is opened on the other one.
TEST_F(ClusterScanTest, AStreamIsRetriedOnAnotherReplica) {
  cluster_.server(0, 0).SendSignal(SIGKILL);
  ASSERT_EQ(cluster_.server(0, 0).WaitExit(), 128 + SIGKILL);
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<ScanResult> r = client_->Scan("b", {});
    ASSERT_OK(r);
    EXPECT_EQ(Entries(*r), Expected("", "", ""));
  }
}

TEST_F(ClusterScanTest, ACuckooTableHasNoOrder) {
  EXPECT_THAT(client_->Scan("c", {}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(client_->Scan("nope", {}), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ClusterScanTest, RoostGetScan) {
  const std::string layout = cluster_.WriteLayout();
  const ProcessResult r =
      RunProcess({RoostGetBinary(), "--cluster", layout, "--scan", "--prefix",
                  "key-4", "--limit", "5", "b"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  std::string want;
  const auto expected = Expected("", "", "key-4");
  for (size_t i = 0; i < 5; ++i) {
    want += expected[i].first + "\t" + expected[i].second + "\n";
  }
  EXPECT_EQ(r.out, want);
  EXPECT_EQ(r.err,
            "roost-get: more entries follow (resume after the last key)\n");

  // Keys printed in --key-encoding, as --start takes them.
  const ProcessResult hex = RunProcess(
      {RoostGetBinary(), "--cluster", layout, "--scan", "--key-encoding", "hex",
       "--start", "6b65792d3939", "--show-version", "b"});  // key-99
  EXPECT_EQ(hex.exit_code, kExitOk) << hex.err;
  EXPECT_EQ(hex.err, "roost-get: version v000001\n");
  // The first line: key-99xxxxxxxx, in hex.
  EXPECT_TRUE(
      hex.out.starts_with("6b65792d39397878787878787878\tv-key-99xxxxxxxx\n"))
      << hex.out;

  const ProcessResult cuckoo =
      RunProcess({RoostGetBinary(), "--cluster", layout, "--scan", "c"});
  EXPECT_EQ(cuckoo.exit_code, kExitRpcFailed);
  EXPECT_THAT(cuckoo.err, HasSubstr("roost-get: FAILED_PRECONDITION: shard "));
  const ProcessResult keys = RunProcess(
      {RoostGetBinary(), "--cluster", layout, "--scan", "b", "key-1"});
  EXPECT_EQ(keys.exit_code, kExitUsage);
  EXPECT_THAT(keys.err, HasSubstr("--scan takes a TABLE and no KEY"));
}

}  // namespace
}  // namespace roost::testing
