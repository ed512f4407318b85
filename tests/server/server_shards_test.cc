// roost-server end to end with sharded table versions (roost-load build
// --shards N): refused without --shard, never served in part; with
// --shard I, shard I's file of every sharded version, and unsharded tables
// as always. See tests/harness/server_harness.h.

#include <filesystem>

#include "storage/partition.h"
#include "tests/harness/server_harness.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;

class ShardedServerTest : public ServerFixture,
                          public ::testing::WithParamInterface<std::string> {
 protected:
  KeyValues Data(int n) {
    KeyValues kvs;
    for (const std::string& key : Keys(n)) kvs[key] = "value of " + key;
    return kvs;
  }
  ServerFlags FlagsForShard(int shard) const {
    ServerFlags flags = Flags();
    flags.extra = {"--shard", std::to_string(shard)};
    return flags;
  }
};

TEST_P(ShardedServerTest, WithoutShardASharedVersionIsRefused) {
  const KeyValues kvs = Data(200);
  ASSERT_NE(BuildTable(data_, "t", kvs, GetParam(), {"--shards", "3"}), "");
  ASSERT_NE(BuildTable(data_, "plain", kvs, GetParam()), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  // Not ready: a table with no version that loads holds readiness back.
  ASSERT_TRUE(server.WaitListening());
  ASSERT_TRUE(WaitFor([&] {
    return server.CountLogLines("is a sharded version of 3 shards") > 0;
  })) << server.Log();
  EXPECT_EQ(server.ServingVersion("t"), "");
  v1::GetResponse response;
  EXPECT_FALSE(server.Get("t", kvs.begin()->first, &response).ok());
  // Other tables are served as always.
  ASSERT_TRUE(server.Get("plain", kvs.begin()->first, &response).ok());
  EXPECT_TRUE(response.found());
  const Metrics metrics = server.ScrapeMetrics();
  EXPECT_GE(MetricOr(metrics,
                     "roost_table_load_failures_total{reason="
                     "\"unsupported\",table=\"t\"}"),
            1);
}

TEST_P(ShardedServerTest, EachShardServesItsKeys) {
  constexpr uint32_t kShards = 3;
  const KeyValues kvs = Data(300);
  ASSERT_NE(
      BuildTable(data_, "t", kvs, GetParam(), {"--shards", StrCat(kShards)}),
      "");
  ASSERT_NE(BuildTable(data_, "plain", kvs, GetParam()), "");
  for (uint32_t shard = 0; shard < kShards; ++shard) {
    SCOPED_TRACE(StrCat("shard ", shard));
    ServerProcess server(FlagsForShard(static_cast<int>(shard)),
                         LogFile(StrCat("server", shard)));
    ASSERT_TRUE(server.WaitReady());
    ASSERT_TRUE(WaitFor([&] {
      return server.ServingVersion("t") == "v000001";
    })) << server.Log();
    EXPECT_EQ(server.CountLogLines(StrCat("shard ", shard, " of 3")), 1)
        << server.Log();
    int mine = 0;
    for (const auto& [key, value] : kvs) {
      v1::GetResponse response;
      const grpc::Status status = server.Get("t", key, &response);
      if (PartitionOf(key, kShards) == shard) {
        ASSERT_TRUE(status.ok()) << status.error_message();
        EXPECT_TRUE(response.found()) << key;
        EXPECT_EQ(response.value(), value);
        ++mine;
      } else {
        // Not this server's key: the client's layout is stale.
        EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
            << key;
        EXPECT_EQ(status.error_message(),
                  StrCat("key belongs to shard ", PartitionOf(key, kShards),
                         " of 3; this server serves shard ", shard));
      }
      // The unsharded table serves every key, whatever --shard says.
      ASSERT_TRUE(server.Get("plain", key, &response).ok());
      EXPECT_TRUE(response.found());
    }
    EXPECT_GT(mine, 0);
    // A batch with one key of another shard is refused whole, naming it.
    std::vector<std::string> batch;
    std::string stranger;
    for (const auto& [key, value] : kvs) {
      if (PartitionOf(key, kShards) == shard) {
        batch.push_back(key);
      } else if (stranger.empty()) {
        stranger = key;
      }
    }
    v1::MultiGetResponse multi;
    ASSERT_TRUE(server.MultiGet("t", batch, &multi).ok());
    ASSERT_EQ(multi.results_size(), static_cast<int>(batch.size()));
    for (const auto& result : multi.results()) EXPECT_TRUE(result.found());
    batch.insert(batch.begin() + 2, stranger);
    const grpc::Status refused = server.MultiGet("t", batch, &multi);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(refused.error_message(),
              StrCat("key 2 belongs to shard ", PartitionOf(stranger, kShards),
                     " of 3; this server serves shard ", shard));
  }
}

TEST_P(ShardedServerTest, AShardTheVersionLacksIsRefused) {
  ASSERT_NE(BuildTable(data_, "t", Data(50), GetParam(), {"--shards", "2"}),
            "");
  ServerProcess server(FlagsForShard(5), LogFile());
  // Not ready: a table with no version that loads holds readiness back.
  ASSERT_TRUE(server.WaitListening());
  ASSERT_TRUE(WaitFor([&] {
    return server.CountLogLines("has 2 shards, 0 to 1; there is no shard 5") >
           0;
  })) << server.Log();
  EXPECT_EQ(server.ServingVersion("t"), "");
}

// Each server checks the shard it serves: a corrupt shard file is refused
// by its shard's server, which keeps serving the version before, and served
// around by the others.
TEST_P(ShardedServerTest, ACorruptShardIsRefusedByItsServerOnly) {
  const KeyValues kvs = Data(200);
  ASSERT_NE(BuildTable(data_, "t", kvs, GetParam(), {"--shards", "2"}), "");
  const std::string v2 =
      BuildTable(data_, "t", kvs, GetParam(), {"--shards", "2"});
  ASSERT_NE(v2, "");
  const std::string path = v2 + "/" + ShardFileName(1, 2);
  fs::permissions(v2, fs::perms::owner_all, fs::perm_options::add);
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  std::string bytes = ReadFile(path);
  bytes[bytes.size() / 2] ^= 0x5a;
  WriteFile(path, bytes);

  ServerProcess one(FlagsForShard(1), LogFile("one"));
  ASSERT_TRUE(one.WaitReady());
  ASSERT_TRUE(one.WaitForLog("roost-server: cannot load t v000002: "));
  EXPECT_NE(one.Log().find(ShardFileName(1, 2)), std::string::npos)
      << one.Log();
  EXPECT_EQ(one.ServingVersion("t"), "v000001");
  ServerProcess zero(FlagsForShard(0), LogFile("zero"));
  ASSERT_TRUE(zero.WaitReady());
  ASSERT_TRUE(WaitFor([&] { return zero.ServingVersion("t") == "v000002"; }))
      << zero.Log();
}

// A sharded version copied in MANIFEST-first is tried again when its shard
// file arrives (the registry watches shard files too).
TEST_P(ShardedServerTest, AShardFileArrivingLateIsPickedUp) {
  const KeyValues kvs = Data(100);
  const std::string elsewhere = scratch_.File("elsewhere");
  const std::string built =
      BuildTable(elsewhere, "t", kvs, GetParam(), {"--shards", "2"});
  ASSERT_NE(built, "");
  const std::string dest = TableDir() + "/v000001";
  fs::create_directories(dest);
  fs::copy_file(built + "/MANIFEST", dest + "/MANIFEST");
  ServerProcess server(FlagsForShard(1), LogFile());
  ASSERT_TRUE(server.WaitListening());
  ASSERT_TRUE(server.WaitForLog(
      "roost-server: cannot load t v000001: incomplete version: "));
  fs::copy_file(built + "/" + ShardFileName(1, 2),
                dest + "/" + ShardFileName(1, 2));
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000001"));
  for (const auto& [key, value] : kvs) {
    if (PartitionOf(key, 2) != 1) continue;
    v1::GetResponse response;
    ASSERT_TRUE(server.Get("t", key, &response).ok());
    EXPECT_EQ(response.value(), value);
  }
}

INSTANTIATE_TEST_SUITE_P(BothFormats, ShardedServerTest,
                         ::testing::Values("cuckoo", "block"));

TEST(ShardFlagTest, BadValuesAreUsageErrors) {
  ScratchDir scratch;
  for (const std::string value : {"-1", "1024", "x"}) {
    const ProcessResult r =
        RunProcess({RoostServerBinary(), "--data-dir", scratch.path().string(),
                    "--shard", value});
    EXPECT_EQ(r.exit_code, 64) << value << ": " << r.err;
    EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace roost::testing
