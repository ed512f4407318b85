// The routing client's versions and Scan against a real sharded cluster on
// loopback (tests/client/cluster_fixture.h): results name the version that
// answered; a batch never mixes versions while a new version reaches one
// shard before the others (the servers answer the version they replaced
// for --version-grace); Scan merges the shards' streams in key order;
// roost-get --scan end to end.

#include <csignal>

#include "client/cluster_client.h"
#include "client/rpc_util.h"
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
