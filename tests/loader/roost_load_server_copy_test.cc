// roost-load inspect, verify and get on the copy a real roost-server keeps:
// a server run with --shard 1 pulls a version of 3 shards from a table
// repository (the MANIFEST and shard 1's file alone), and the runbook's
// check of a version (one rolled back from, say) runs on that server's data
// directory. Copies made by hand, and every way they are refused, are
// roost_load_shards_test.cc's. And a server serving a version whose shards
// were built apart (roost-load claim, build --shard, publish: issue 32).

#include <string>
#include <vector>

#include "storage/partition.h"
#include "tests/harness/child_process.h"
#include "tests/harness/repository_server_fixture.h"
#include "tests/harness/roost_binaries.h"

namespace roost::testing {
namespace {

class ServerCopyTest : public RepositoryServerTest {
 protected:
  static ProcessResult RoostLoad(std::vector<std::string> args) {
    args.insert(args.begin(), RoostLoadBinary());
    return RunProcess(args);
  }
};

// Issue 30: verify, inspect and get refused such a copy as an "incomplete
// version" (its other shards' files are not there).
TEST_F(ServerCopyTest, RoostLoadReadsTheOneShardCopyAServerPulled) {
  constexpr uint32_t kShards = 3;
  const std::vector<std::string> keys = Keys(300);
  ASSERT_EQ(Publish(1, keys, kShards), 1u);
  ServerProcess server(PullFlags(1), LogFile());
  ASSERT_TRUE(server.WaitReady()) << server.Log();
  const std::string v = TableDir() + "/v000001";
  const std::vector<std::string> mine = ShardKeys(300, 1, kShards);
  const std::vector<std::string> other = ShardKeys(300, 2, kShards);

  ProcessResult r = RoostLoad({"verify", v});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      StrCat(v, "/", ShardFileName(1, kShards), ": ok (shard 1, cuckoo table, ",
             mine.size(), " keys)\n", v,
             ": ok (a copy of shard 1 of 3, as a server keeps "
             "it: the other shards' files are not here; cuckoo "
             "table, ",
             mine.size(), " of the version's 300 keys, MANIFEST agrees)\n"));
  r = RoostLoad({"verify", "--shard", "1", TableDir()});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  r = RoostLoad({"inspect", TableDir()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(StrCat(ShardFileName(1, kShards), ": ", mine.size(),
                              " keys, ")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(ShardFileName(0, kShards) + ": not here ("),
            std::string::npos)
      << r.out;

  const KeyValues values = Versioned(1, keys);
  r = RoostLoad({"get", v, mine[0], mine[1]});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, mine[0] + "\t" + values.at(mine[0]) + "\n" + mine[1] + "\t" +
                       values.at(mine[1]) + "\n");
  r = RoostLoad({"get", v, other[0]});
  EXPECT_EQ(r.exit_code, 65) << r.err;
  EXPECT_NE(r.err.find(StrCat("\"", other[0],
                              "\": in shard 2 of 3, whose file is not in ", v,
                              " (it holds shard 1)")),
            std::string::npos)
      << r.err;
}

// Issue 32: a version whose shards were built apart (roost-load claim,
// build --shard I for each shard, publish) is what a server pulls
// and serves, as one built on one host.
TEST_F(ServerCopyTest, AServerServesAVersionWhoseShardsWereBuiltApart) {
  constexpr uint32_t kShards = 3;
  const KeyValues values = Versioned(1, Keys(300));
  ProcessResult r = RoostLoad({"claim", "--repository", uri_, "--table", "t",
                               "--output-format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.out.find("\"version_name\": \"v000001\""), std::string::npos)
      << r.out;
  for (uint32_t s = 0; s < kShards; ++s) {
    KeyValues mine;
    for (const auto& [k, v] : values) {
      if (PartitionOf(k, kShards) == s) mine[k] = v;
    }
    const std::string input = scratch_.File(StrCat("shard-", s, ".tsv"));
    WriteHexTsv(input, mine);
    r = RoostLoad({"build", "-q", "-i", input, "--key-encoding", "hex",
                   "--value-encoding", "hex", "--repository", uri_, "--table",
                   "t", "--shards", StrCat(kShards), "--shard", StrCat(s),
                   "--version", "v1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  r = RoostLoad(
      {"publish", "--repository", uri_, "--table", "t", "--version", "v1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  ServerProcess server(PullFlags(2), LogFile());
  ASSERT_TRUE(server.WaitReady()) << server.Log();
  const std::vector<std::string> mine = ShardKeys(300, 2, kShards);
  ASSERT_FALSE(mine.empty());
  for (const std::string& key : {mine.front(), mine.back()}) {
    v1::GetResponse response;
    ASSERT_TRUE(server.Get("t", key, &response).ok()) << key;
    EXPECT_TRUE(response.found()) << key;
    EXPECT_EQ(response.value(), values.at(key));
  }
  r = RoostLoad({"verify", TableDir() + "/v000001"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace roost::testing
