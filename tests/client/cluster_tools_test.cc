// roost-get --cluster / --scan and roost-admin wait end to end, against a
// real sharded cluster on loopback (tests/client/cluster_fixture.h).

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "client/cluster_client.h"
#include "client/rpc_util.h"
#include "tests/client/cluster_fixture.h"
#include "tests/harness/pki.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;

class ClusterToolsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir;
    cluster_ = new LoopbackCluster(*scratch_, {2, 1, 1});
    kvs_ = new KeyValues;
    for (const std::string& key : Keys(120)) (*kvs_)[key] = "v-" + key;
    ASSERT_NE(BuildTable(cluster_->data_dir(0), "t", *kvs_, "cuckoo",
                         {"--shards", "3"}),
              "");
    ASSERT_TRUE(cluster_->Start());
    layout_ = new std::string(cluster_->WriteLayout());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete kvs_;
    delete layout_;
    delete scratch_;
  }

  static ProcessResult Get(std::vector<std::string> args) {
    args.insert(args.begin(), RoostGetBinary());
    return RunProcess(args);
  }
  static ProcessResult Admin(std::vector<std::string> args) {
    args.insert(args.begin(), RoostAdminBinary());
    return RunProcess(args);
  }

  static ScratchDir* scratch_;
  static LoopbackCluster* cluster_;
  static KeyValues* kvs_;
  static std::string* layout_;
};
ScratchDir* ClusterToolsTest::scratch_ = nullptr;
LoopbackCluster* ClusterToolsTest::cluster_ = nullptr;
KeyValues* ClusterToolsTest::kvs_ = nullptr;
std::string* ClusterToolsTest::layout_ = nullptr;

TEST_F(ClusterToolsTest, GetThroughTheCluster) {
  std::vector<std::string> args = {"--cluster", *layout_, "t"};
  std::string want;
  int n = 0;
  for (const auto& [key, value] : *kvs_) {
    if (n++ % 3 != 0) continue;
    args.push_back(key);
    want += key + "\t" + value + "\n";
  }
  const ProcessResult r = Get(args);
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, want);
  EXPECT_EQ(r.err, "");

  // A miss among hits: stdout keeps the order, stderr names the miss.
  const std::string hit = kvs_->begin()->first;
  const ProcessResult miss =
      Get({"--cluster", *layout_, "t", hit, "absent", hit});
  EXPECT_EQ(miss.exit_code, kExitNotFound);
  EXPECT_EQ(miss.out, StrCat(hit, "\t", kvs_->at(hit), "\n", hit, "\t",
                             kvs_->at(hit), "\n"));
  EXPECT_EQ(miss.err, "roost-get: \"absent\": not found\n");

  // Hex keys and values, and --show-version.
  const ProcessResult hex =
      Get({"--cluster", *layout_, "--key-encoding", "hex", "--value-encoding",
           "hex", "--show-version", "t", "6b65792d30"});  // key-0
  EXPECT_EQ(hex.exit_code, kExitOk) << hex.err;
  EXPECT_EQ(hex.out, "6b65792d30\t762d6b65792d30\n");
  EXPECT_EQ(hex.err, "roost-get: version v000001\n");
}

// Issue 30, item 22: keys from a file or stdin, in batches of --max-batch,
// every batch read from the version the first answered from.
TEST_F(ClusterToolsTest, GetReadsAKeysFileInBatchesThroughTheCluster) {
  std::string lines, want;
  for (const auto& [key, value] : *kvs_) {
    lines += key + "\n";
    want += key + "\t" + value + "\n";
  }
  const std::string file = scratch_->File("keys.txt");
  WriteFile(file, lines);
  const ProcessResult r = Get({"--cluster", *layout_, "--max-batch", "7",
                               "--show-version", "t", "--keys-file", file});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, want);
  EXPECT_EQ(r.err, "roost-get: version v000001\n");
}

TEST_F(ClusterToolsTest, GetErrors) {
  const ProcessResult table =
      Get({"--cluster", *layout_, "nope", kvs_->begin()->first});
  EXPECT_EQ(table.exit_code, kExitRpcFailed);
  EXPECT_THAT(table.err, HasSubstr("roost-get: NOT_FOUND: shard "));

  const std::string bad = scratch_->File("bad.json");
  WriteFile(bad, R"({"shards": [["127.0.0.1:1"], []]})");
  const ProcessResult empty = Get({"--cluster", bad, "t", "k"});
  EXPECT_EQ(empty.exit_code, kExitUsage);
  EXPECT_EQ(empty.err, StrCat("roost-get: ", bad,
                              ": bad cluster layout: shard 1 has no replica\n"
                              "Run with --help for more information.\n"));
  WriteFile(bad, "not json");
  const ProcessResult garbage = Get({"--cluster", bad, "t", "k"});
  EXPECT_EQ(garbage.exit_code, kExitUsage);
  EXPECT_THAT(garbage.err, HasSubstr(": bad cluster layout: bad JSON: "));

  const ProcessResult tls = Get({"--cluster", *layout_, "--tls", "t", "k"});
  EXPECT_EQ(tls.exit_code, kExitUsage);
  EXPECT_THAT(tls.err, HasSubstr("with --cluster, TLS is the layout file's"));
  const ProcessResult limit = Get({"--cluster", *layout_, "--limit", "3", "t"});
  EXPECT_EQ(limit.exit_code, kExitUsage);
  EXPECT_THAT(limit.err, HasSubstr("go with --scan"));

  // Shards listed in the wrong order: a stale layout, said so.
  ClusterLayout swapped = cluster_->layout();
  std::swap(swapped.shards[0], swapped.shards[2]);
  const std::string stale = scratch_->File("stale.json");
  WriteFile(stale, StrCat("{\"shards\": [[\"", swapped.shards[0][0], "\"], [\"",
                          swapped.shards[1][0], "\"], [\"",
                          swapped.shards[2][0], "\"]]}"));
  std::vector<std::string> args = {"--cluster", stale, "t"};
  for (const auto& [key, value] : *kvs_) args.push_back(key);
  const ProcessResult r = Get(args);
  EXPECT_EQ(r.exit_code, kExitRpcFailed);
  EXPECT_THAT(r.err, HasSubstr("roost-get: FAILED_PRECONDITION: stale "
                               "cluster layout: shard "));
}

TEST_F(ClusterToolsTest, WaitReturnsAtOnceForTheServedVersion) {
  // --for-version (issue 30, item 16), and --version after `wait`, where it
  // is not roost-admin's own.
  for (auto [flag, version] : std::vector<std::pair<const char*, const char*>>{
           {"--version", "v000001"},
           {"--version", "1"},
           {"--for-version", "v000001"},
           {"--for-version", "v1"}}) {
    const ProcessResult r = Admin({"wait", "--cluster", *layout_, "--table",
                                   "t", flag, version, "--timeout", "30"});
    EXPECT_EQ(r.exit_code, kExitOk) << r.err;
    EXPECT_EQ(r.out, StrCat("t: ", version,
                            " served by all 4 replicas of 3 shards\n"));
  }
}

TEST_F(ClusterToolsTest, WaitTimesOutNamingTheReplicas) {
  const ProcessResult r =
      Admin({"wait", "--cluster", *layout_, "--table", "t", "--version",
             "v000009", "--timeout", "0.3", "--interval", "0.1"});
  EXPECT_EQ(r.exit_code, 3);
  const ClusterLayout layout = cluster_->layout();
  for (size_t s = 0; s < layout.shards.size(); ++s) {
    for (const std::string& target : layout.shards[s]) {
      EXPECT_THAT(r.err, HasSubstr(StrCat("roost-admin: shard ", s, " ", target,
                                          ": serves v000001\n")));
    }
  }
  EXPECT_THAT(r.err, HasSubstr("roost-admin: timed out after 0.3 s: 4 of 4 "
                               "replicas do not serve t v000009\n"));

  // A table no replica has, and a bad version.
  const ProcessResult none =
      Admin({"wait", "--cluster", *layout_, "--table", "nope", "--version", "1",
             "--timeout", "0"});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_THAT(none.err, HasSubstr(": has no table nope\n"));
  const ProcessResult bad = Admin(
      {"wait", "--cluster", *layout_, "--table", "t", "--version", "v1x"});
  EXPECT_EQ(bad.exit_code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("bad --for-version \"v1x\""));
}

TEST_F(ClusterToolsTest, WaitNamesAReplicaThatIsDown) {
  const ClusterLayout layout = cluster_->layout();
  const std::string path = scratch_->File("down.json");
  WriteFile(path, StrCat("{\"shards\": [[\"", layout.shards[0][0],
                         "\", \"127.0.0.1:1\"], [\"", layout.shards[1][0],
                         "\"], [\"", layout.shards[2][0], "\"]]}"));
  const ProcessResult r = Admin({"wait", "--cluster", path, "--table", "t",
                                 "--version", "1", "--timeout", "0"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("roost-admin: shard 0 127.0.0.1:1: "
                               "UNAVAILABLE: "));
  EXPECT_THAT(r.err, HasSubstr("1 of 4 replicas do not serve t 1\n"));
}

// `wait --timeout 0` asks once, and that round's calls have the whole main
// --timeout: a loaded CI machine once gave a plaintext call to a TLS port
// 50 ms, and the answer was "Deadline Exceeded" instead of the hint. A
// listening socket that never answers holds the call to the main --timeout.
TEST_F(ClusterToolsTest, WaitForNothingStillGivesEachCallTheMainTimeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string silent = StrCat("127.0.0.1:", ntohs(addr.sin_port));
  const std::string path = scratch_->File("silent.json");
  WriteFile(path, StrCat("{\"shards\": [[\"", silent, "\"]]}"));
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r =
      Admin({"--timeout", "1.5", "wait", "--cluster", path, "--table", "t",
             "--version", "1", "--timeout", "0"});
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ::close(fd);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr(StrCat("roost-admin: shard 0 ", silent,
                                      ": DEADLINE_EXCEEDED")));
  EXPECT_GE(took, 1.4) << "the call was cut short of the main --timeout";
}

// Mutual TLS from the layout file's "tls", its files named relative to it.
TEST(ClusterTlsTest, TheLayoutFilesTlsIsSpoken) {
  ScratchDir scratch;
  Pki pki(scratch.File("pki"));
  pki.MakeCa("ca");
  pki.Issue("server", "ca", "DNS:roost.internal");
  pki.Issue("client", "ca", "DNS:client");
  LoopbackCluster cluster(
      scratch, {1, 1},
      {"--tls-cert", pki.Pem("server"), "--tls-key", pki.Key("server"),
       "--tls-client-ca", pki.Pem("ca")});
  KeyValues kvs;
  for (const std::string& key : Keys(60)) kvs[key] = "v-" + key;
  ASSERT_NE(
      BuildTable(cluster.data_dir(0), "t", kvs, "cuckoo", {"--shards", "2"}),
      "");
  ASSERT_TRUE(cluster.Start());
  const ClusterLayout layout = cluster.layout();
  const std::string shards = StrCat("[[\"", layout.shards[0][0], "\"], [\"",
                                    layout.shards[1][0], "\"]]");
  const std::string path = pki.File("cluster.json");
  WriteFile(path, StrCat("{\"shards\": ", shards,
                         ", \"tls\": {\"ca\": \"ca.pem\", \"cert\": "
                         "\"client.pem\", \"key\": \"client.key\", "
                         "\"server_name\": \"roost.internal\"}}"));

  absl::StatusOr<ClusterLayout> read = ReadClusterLayout(path);
  ASSERT_OK(read);
  auto client = ClusterClient::Create(*read);
  ASSERT_OK(client);
  std::vector<std::string> keys;
  for (const auto& [key, value] : kvs) keys.push_back(key);
  absl::StatusOr<MultiGetResult> r = (*client)->MultiGet("t", keys);
  ASSERT_OK(r);
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(r->results[i].value, kvs.at(keys[i]));
  }
  const ProcessResult get =
      RunProcess({RoostGetBinary(), "--cluster", path, "t", keys[0]});
  EXPECT_EQ(get.exit_code, kExitOk) << get.err;
  EXPECT_EQ(get.out, StrCat(keys[0], "\t", kvs.at(keys[0]), "\n"));
  const ProcessResult wait =
      RunProcess({RoostAdminBinary(), "wait", "--cluster", path, "--table", "t",
                  "--version", "1", "--timeout", "10"});
  EXPECT_EQ(wait.exit_code, kExitOk) << wait.err;

  // No client certificate, or no TLS at all: refused, within the deadline.
  CallOptions call;
  call.timeout_seconds = 1;
  ClusterLayout no_cert = *read;
  no_cert.security.cert.clear();
  no_cert.security.key.clear();
  auto anonymous = ClusterClient::Create(no_cert);
  ASSERT_OK(anonymous);
  EXPECT_THAT((*anonymous)->MultiGet("t", keys, call),
              StatusIs(absl::StatusCode::kUnavailable));
  auto plain = ClusterClient::Create(layout);
  ASSERT_OK(plain);
  EXPECT_THAT((*plain)->MultiGet("t", keys, call),
              StatusIs(absl::StatusCode::kUnavailable));
  // A TLS file that is not there: named.
  WriteFile(path, StrCat("{\"shards\": ", shards,
                         ", \"tls\": {\"ca\": \"absent.pem\"}}"));
  const ProcessResult absent =
      RunProcess({RoostGetBinary(), "--cluster", path, "t", keys[0]});
  EXPECT_EQ(absent.exit_code, kExitUsage);
  EXPECT_THAT(absent.err, HasSubstr(pki.File("absent.pem")));
}

}  // namespace
}  // namespace roost::testing
