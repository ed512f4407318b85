// The routing client's parts that need no server: the cluster layout file
// and its errors, the router against the committed partition vectors,
// version numbers and the consistency algorithm's rounds, dns: targets.

#include "client/cluster_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "client/cluster_client.h"
#include "client/cluster_wait.h"
#include "client/version_consensus.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/encoding.h"

namespace roost::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<ClusterLayout> Parse(std::string_view text) {
  return ParseClusterLayout(text, "/etc/roost");
}

TEST(ClusterLayoutTest, ReadsShardsAndTls) {
  absl::StatusOr<ClusterLayout> layout = Parse(R"({
    "shards": [["127.0.0.1:7001", "127.0.0.1:7002"],
               ["127.0.0.1:7003", "dns:///roost-1.roost.svc:7000"]],
    "tls": {"ca": "ca.pem", "cert": "/abs/client.pem", "key": "client.key",
            "server_name": "roost.internal"}})");
  ASSERT_OK(layout);
  EXPECT_THAT(layout->shards,
              ElementsAre(ElementsAre("127.0.0.1:7001", "127.0.0.1:7002"),
                          ElementsAre("127.0.0.1:7003",
                                      "dns:///roost-1.roost.svc:7000")));
  EXPECT_TRUE(layout->security.tls);
  EXPECT_EQ(layout->security.ca, "/etc/roost/ca.pem");
  EXPECT_EQ(layout->security.cert, "/abs/client.pem");
  EXPECT_EQ(layout->security.key, "/etc/roost/client.key");
  EXPECT_EQ(layout->security.server_name, "roost.internal");
}

TEST(ClusterLayoutTest, WithoutTlsIsPlaintextAndEmptyTlsIsSystemCas) {
  absl::StatusOr<ClusterLayout> plain = Parse(R"({"shards": [["a:1"]]})");
  ASSERT_OK(plain);
  EXPECT_FALSE(plain->security.tls);
  absl::StatusOr<ClusterLayout> tls =
      Parse(R"({"shards": [["a:1"]], "tls": {}})");
  ASSERT_OK(tls);
  EXPECT_TRUE(tls->security.tls);
  EXPECT_EQ(tls->security.ca, "");
}

TEST(ClusterLayoutTest, BadLayoutsSayWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "bad cluster layout: bad JSON: "},
      {"{\"shards\": [[\"a:1\"]", "bad cluster layout: bad JSON: "},
      {"not json", "bad cluster layout: bad JSON: "},
      {"[]", "bad cluster layout: not a JSON object"},
      {"{}", "bad cluster layout: no \"shards\""},
      {R"({"shards": {}})", "bad cluster layout: \"shards\" is not an array"},
      {R"({"shards": []})", "bad cluster layout: no shards"},
      {R"({"shards": [["a:1"], []]})",
       "bad cluster layout: shard 1 has no replica"},
      {R"({"shards": ["a:1"]})",
       "bad cluster layout: shards[0] is not an array of targets"},
      {R"({"shards": [["a:1", 7]]})",
       "bad cluster layout: shards[0][1] is not a string"},
      {R"({"shards": [["a:1", ""]]})",
       "bad cluster layout: shards[0][1] is empty"},
      {R"({"shards": [["a:1"]], "tls": true})",
       "bad cluster layout: \"tls\" is not an object"},
      {R"({"shards": [["a:1"]], "tls": {"ca": 1}})",
       "bad cluster layout: tls.ca is not a string"},
      {R"({"shards": [["a:1"]], "tls": {"server_name": ""}})",
       "bad cluster layout: tls.server_name is empty"},
      {R"({"shards": [["a:1"]], "tls": {"cert": "c.pem"}})",
       "bad cluster layout: tls.cert and tls.key go together"},
      // A misspelt "tls" ignored would quietly mean plaintext.
      {R"({"shards": [["a:1"]], "TLS": {"ca": "ca.pem"}})",
       "bad cluster layout: unknown member \"TLS\" (known: \"shards\", "
       "\"tls\")"},
      {R"({"shards": [["a:1"]], "comment": "x"})",
       "bad cluster layout: unknown member \"comment\""},
      {R"({"shards": [["a:1"]], "tls": {"cafile": "ca.pem"}})",
       "bad cluster layout: unknown member \"tls.cafile\" (known: ca, cert, "
       "key, server_name)"},
      {R"({"shards": )" + std::string(100000, '[') + std::string(100000, ']') +
           "}",
       "bad cluster layout: "},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_THAT(Parse(text), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr(message)))
        << text;
  }
  std::string many = R"({"shards": [)";
  for (int i = 0; i <= 1024; ++i) many += i == 0 ? "[\"a:1\"]" : ",[\"a:1\"]";
  EXPECT_THAT(Parse(many + "]}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("1025 shards, more than the 1024")));
}

TEST(ClusterLayoutTest, FileErrorsNameTheFile) {
  ScratchDir scratch;
  EXPECT_THAT(ReadClusterLayout(scratch.File("absent.json")),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr(scratch.File("absent.json") + ": ")));
  EXPECT_THAT(ReadClusterLayout(scratch.path().string()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(scratch.path().string() + ": ")));
  const std::string path = scratch.File("c.json");
  WriteFile(path, R"({"shards": [["a:1"]], "tls": {"ca": "ca.pem"}})");
  absl::StatusOr<ClusterLayout> layout = ReadClusterLayout(path);
  ASSERT_OK(layout);
  EXPECT_EQ(layout->security.ca, scratch.File("ca.pem"));
  WriteFile(path, R"({"shards": "a:1"})");
  EXPECT_THAT(ReadClusterLayout(path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + ": bad cluster layout: \"shards\" is not an "
                              "array"));
}

TEST(ClusterLayoutTest, ClientRefusesALayoutGivenDirectlyThatIsBad) {
  EXPECT_THAT(ClusterClient::Create(ClusterLayout{}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "bad cluster layout: no shards"));
  ClusterLayout empty_shard;
  empty_shard.shards = {{"a:1"}, {}};
  EXPECT_THAT(ClusterClient::Create(empty_shard),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "bad cluster layout: shard 1 has no replica"));
  ClusterLayout bad_ca;
  bad_ca.shards = {{"a:1"}};
  bad_ca.security.ca = "/nonexistent/ca.pem";
  EXPECT_THAT(
      ClusterClient::Create(bad_ca),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/ca.pem")));
}

// The router sends every key of docs/format/partition_vectors.tsv to the
// shard the vectors give it, for every shard count they list.
TEST(ClusterRouterTest, RoutesThePartitionVectors) {
  std::ifstream in(ROOST_SOURCE_DIR "/docs/format/partition_vectors.tsv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::vector<uint32_t> counts;
  std::vector<std::unique_ptr<ClusterClient>> clients;  // one per count
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string f; std::getline(split, f, '\t');) fields.push_back(f);
    if (line.back() == '\t') fields.push_back("");
    if (fields[0] == "key_hex") {
      for (size_t i = 2; i < fields.size(); ++i) {
        counts.push_back(static_cast<uint32_t>(std::stoul(fields[i])));
        ClusterLayout layout;
        layout.shards.assign(counts.back(), {"127.0.0.1:1"});
        auto client = ClusterClient::Create(layout);
        ASSERT_OK(client);
        clients.push_back(*std::move(client));
      }
      continue;
    }
    ASSERT_EQ(fields.size(), counts.size() + 2) << line;
    absl::StatusOr<std::string> key = DecodeHex(fields[0], "key");
    ASSERT_OK(key);
    for (size_t c = 0; c < counts.size(); ++c) {
      EXPECT_EQ(clients[c]->ShardOf(*key), std::stoul(fields[c + 2]))
          << fields[0] << " of " << counts[c];
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(VersionConsensusTest, VersionNumbers) {
  EXPECT_EQ(VersionNumber("v000007"), 7u);
  EXPECT_EQ(VersionNumber("7"), 7u);
  EXPECT_EQ(VersionNumber(""), std::nullopt);
  EXPECT_EQ(VersionNumber("v"), std::nullopt);
  EXPECT_EQ(VersionNumber("v7x"), std::nullopt);
  EXPECT_EQ(VersionNumber("99999999999999999999"), std::nullopt);
  EXPECT_TRUE(SameVersion("v000007", "7"));
  EXPECT_FALSE(SameVersion("v000007", "v000008"));
  EXPECT_FALSE(SameVersion("", "v000001"));
}

TEST(VersionConsensusTest, OneVersionIsDone) {
  VersionConsensus c(3);
  c.Answered(0, "v000002");
  c.Answered(1, "v000002");
  c.Answered(2, "");  // an old server: accepted as it is
  EXPECT_TRUE(c.Agreed());
  EXPECT_EQ(c.version(), "v000002");
  VersionConsensus none(2);
  none.Answered(0, "");
  none.Answered(1, "");
  EXPECT_TRUE(none.Agreed());
  EXPECT_EQ(none.version(), "");
}

TEST(VersionConsensusTest, NewerPartsArePinnedToTheOldestThenForward) {
  VersionConsensus c(4);
  c.Answered(0, "v000001");
  c.Answered(1, "v000003");
  c.Answered(2, "v000002");
  c.Answered(3, "");
  ASSERT_FALSE(c.Agreed());
  VersionConsensus::Round round = c.Next();
  EXPECT_EQ(round.pin, "v000001");
  EXPECT_THAT(round.parts, ElementsAre(1, 2));
  // Part 2 took the pin, part 1 refused it: forward to the newest.
  c.Answered(2, "v000001");
  c.PinRefused();
  round = c.Next();
  EXPECT_EQ(round.pin, "v000003");
  EXPECT_THAT(round.parts, ElementsAre(0, 2));
  c.Answered(0, "v000003");
  c.Answered(2, "v000003");
  EXPECT_TRUE(c.Agreed());
  EXPECT_EQ(c.version(), "v000003");
  EXPECT_EQ(c.Seen(), "v000001, v000002, v000003");
}

TEST(VersionConsensusTest, ALostPartIsSentAgainUntilItAnswers) {
  VersionConsensus c(3);
  c.Answered(0, "v000001");
  c.Answered(1, "v000002");
  c.Answered(2, "v000002");
  // Part 1 was re-opened pinned to v000001 and failed; part 2 took it.
  c.Answered(2, "v000001");
  c.Lost(1);
  EXPECT_FALSE(c.Agreed());
  VersionConsensus::Round round = c.Next();
  EXPECT_EQ(round.pin, "v000001");
  EXPECT_THAT(round.parts, ElementsAre(1));
  c.Answered(1, "v000001");
  EXPECT_TRUE(c.Agreed());
  EXPECT_EQ(c.version(), "v000001");
}

TEST(VersionConsensusTest, OrdersByNumberNotText) {
  VersionConsensus c(2);
  c.Answered(0, "v000010");
  c.Answered(1, "9");
  EXPECT_EQ(c.Next().pin, "9");
  EXPECT_THAT(c.Next().parts, ElementsAre(0));
}

using P = std::pair<std::string, std::string>;

::testing::AssertionResult Splits(const std::string& target, P want) {
  absl::StatusOr<P> got = SplitDnsTarget(target);
  if (!got.ok()) return ::testing::AssertionFailure() << got.status();
  if (*got != want) {
    return ::testing::AssertionFailure() << got->first << " " << got->second;
  }
  return ::testing::AssertionSuccess();
}

TEST(ClusterWaitTest, SplitsDnsTargets) {
  EXPECT_TRUE(
      Splits("dns:///roost-1.roost.svc:7000", P{"roost-1.roost.svc", "7000"}));
  EXPECT_TRUE(Splits("dns://8.8.8.8/roost:7000", P{"roost", "7000"}));
  EXPECT_TRUE(Splits("dns:roost", P{"roost", "443"}));
  EXPECT_TRUE(Splits("dns:///[::1]:7000", P{"::1", "7000"}));
  EXPECT_THAT(SplitDnsTarget("dns:///"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no host or port")));
  EXPECT_THAT(
      SplitDnsTarget("dns:///[::1"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no ] after [")));
}

TEST(ClusterWaitTest, ExpandsDnsTargetsToEveryAddress) {
  ClusterLayout layout;
  layout.shards = {{"127.0.0.1:7001", "dns:///localhost:7002"}};
  absl::StatusOr<std::vector<ReplicaAddress>> replicas = ExpandReplicas(layout);
  ASSERT_OK(replicas);
  ASSERT_GE(replicas->size(), 2u);
  EXPECT_EQ((*replicas)[0].address, "127.0.0.1:7001");
  for (size_t i = 1; i < replicas->size(); ++i) {
    EXPECT_EQ((*replicas)[i].target, "dns:///localhost:7002");
    EXPECT_EQ((*replicas)[i].server_name, "localhost");
    EXPECT_THAT((*replicas)[i].address,
                ::testing::AnyOf("127.0.0.1:7002", "[::1]:7002"));
  }
  layout.shards = {{"dns:///no-such-host.invalid:7000"}};
  EXPECT_THAT(ExpandReplicas(layout),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("cannot resolve no-such-host.invalid")));
}

}  // namespace
}  // namespace roost::testing
