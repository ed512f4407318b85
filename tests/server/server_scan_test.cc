// roost-server end to end: Scan, a block table's entries in key order over a
// server stream (lookup.proto): bounds, prefix, limit and `more`, messages
// of bounded size, the version pinned for the stream, a sharded table's
// shard, cuckoo tables and bad requests refused, and a client that cancels
// half way. See tests/harness/server_harness.h.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "storage/partition.h"
#include "tests/harness/server_harness.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using grpc::StatusCode;

// What a Scan returned: every message, and its entries run together.
struct Scanned {
  grpc::Status status;
  std::vector<v1::ScanResponse> messages;
  std::vector<std::pair<std::string, std::string>> entries;
  bool more() const { return !messages.empty() && messages.back().more(); }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : entries) out.push_back(k);
    return out;
  }
};

Scanned Scan(ServerProcess& server, const v1::ScanRequest& request) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  auto reader = server.lookup().Scan(&context, request);
  Scanned out;
  v1::ScanResponse r;
  while (reader->Read(&r)) {
    for (const v1::KeyValue& kv : r.entries()) {
      out.entries.emplace_back(kv.key(), kv.value());
    }
    out.messages.push_back(std::move(r));
  }
  out.status = reader->Finish();
  return out;
}

v1::ScanRequest Request(const std::string& start = "",
                        const std::string& end = "",
                        const std::string& prefix = "", uint32_t limit = 0,
                        const std::string& version = "") {
  v1::ScanRequest request;
  request.set_table("t");
  request.set_start(start);
  request.set_end(end);
  request.set_prefix(prefix);
  request.set_limit(limit);
  request.set_version(version);
  return request;
}

// Keys "a000".."a099", "b000".."b099", "c000".."c099", values naming them.
KeyValues Lettered() {
  KeyValues kvs;
  for (const char letter : {'a', 'b', 'c'}) {
    for (int i = 0; i < 100; ++i) {
      const std::string key =
          StrCat(std::string(1, letter), std::string(i < 10 ? "00" : "0"), i);
      kvs[key] = "value of " + key;
    }
  }
  return kvs;
}

std::vector<std::string> KeysOf(const KeyValues& kvs, const std::string& from,
                                const std::string& to) {
  std::vector<std::string> out;
  for (const auto& [k, v] : kvs) {
    if (k >= from && (to.empty() || k < to)) out.push_back(k);
  }
  return out;
}

// 20 MB in 20,000 keys: far more than a client's flow-control window
// takes unread, so a scan whose client reads one message stays open.
KeyValues Large() {
  KeyValues kvs;
  for (const std::string& key : Keys(20000)) kvs[key] = std::string(1000, 'v');
  return kvs;
}

class ScanTest : public ServerFixture {
 protected:
  // Serves Lettered() (or `kvs`) as a block table "t".
  std::unique_ptr<ServerProcess> Serve(const KeyValues& kvs,
                                       std::vector<std::string> extra = {}) {
    EXPECT_NE(BuildTable(data_, "t", kvs, "block"), "");
    ServerFlags flags = Flags();
    flags.extra = std::move(extra);
    auto server = std::make_unique<ServerProcess>(flags, LogFile());
    EXPECT_TRUE(server->WaitReady());
    return server;
  }
};

TEST_F(ScanTest, EveryKeyOfATableInOrderIsTheInputSorted) {
  // 3,000 keys of every length with values of 0 to 600 bytes: several
  // messages' worth, with keys that share long prefixes.
  KeyValues kvs;
  const std::vector<std::string> keys = Keys(3000);
  for (size_t i = 0; i < keys.size(); ++i) {
    kvs[keys[i]] = std::string(i % 601, static_cast<char>('a' + i % 26));
  }
  kvs[std::string("\0\xff", 2)] = "binary";
  auto server = Serve(kvs, {"--max-scan-keys", "5000"});
  const Scanned s = Scan(*server, Request());
  ASSERT_OK(s.status);
  ASSERT_EQ(s.entries.size(), kvs.size());
  EXPECT_TRUE(std::equal(s.entries.begin(), s.entries.end(), kvs.begin(),
                         kvs.end(), [](const auto& a, const auto& b) {
                           return a.first == b.first && a.second == b.second;
                         }));
  EXPECT_FALSE(s.more());
  // In bounded messages, each naming the version.
  EXPECT_GT(s.messages.size(), 1u);
  for (const v1::ScanResponse& m : s.messages) {
    EXPECT_EQ(m.version(), "v000001");
    EXPECT_LE(m.ByteSizeLong(), size_t{256 << 10});
    EXPECT_FALSE(&m != &s.messages.back() && m.more());
  }
}

TEST_F(ScanTest, StartIsInclusiveEndExclusiveAndPrefixFilters) {
  const KeyValues kvs = Lettered();
  auto server = Serve(kvs);
  Scanned s = Scan(*server, Request("a050", "b010"));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), KeysOf(kvs, "a050", "b010"));
  EXPECT_EQ(s.entries.front().second, "value of a050");
  EXPECT_EQ(s.keys().back(), "b009");
  // Bounds that are not keys.
  s = Scan(*server, Request("a0505", "b0095"));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), KeysOf(kvs, "a051", "b010"));
  // No end: to the last key.
  s = Scan(*server, Request("c095"));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), KeysOf(kvs, "c095", ""));
  // A prefix alone, and with a start inside it and an end inside it.
  s = Scan(*server, Request("", "", "b"));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), KeysOf(kvs, "b", "c"));
  s = Scan(*server, Request("b090", "", "b"));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), KeysOf(kvs, "b090", "c"));
  s = Scan(*server, Request("a", "b005", "b"));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), KeysOf(kvs, "b", "b005"));
  s = Scan(*server, Request("", "", "c01"));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), KeysOf(kvs, "c010", "c020"));
}

TEST_F(ScanTest, AnEmptyRangeIsOneMessageNamingTheVersion) {
  auto server = Serve(Lettered());
  for (const v1::ScanRequest& request :
       {Request("b", "a"), Request("b010", "b010"), Request("", "", "d"),
        Request("", "", "a1"), Request("d"), Request("", "a000"),
        Request("b", "", "a")}) {
    SCOPED_TRACE(request.ShortDebugString());
    const Scanned s = Scan(*server, request);
    ASSERT_OK(s.status);
    ASSERT_EQ(s.messages.size(), 1u);
    EXPECT_EQ(s.messages[0].entries_size(), 0);
    EXPECT_EQ(s.messages[0].version(), "v000001");
    EXPECT_FALSE(s.more());
  }
}

TEST_F(ScanTest, TheLimitStopsTheScanAndMoreSaysWhetherKeysAreLeft) {
  const KeyValues kvs = Lettered();
  auto server = Serve(kvs, {"--max-scan-keys", "120"});
  // Stopped by the limit, keys left: more.
  Scanned s = Scan(*server, Request("a010", "", "", 7));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), KeysOf(kvs, "a010", "a017"));
  EXPECT_TRUE(s.more());
  // Resuming after the last key reads on.
  s = Scan(*server, Request("a017", "", "", 7));
  EXPECT_EQ(s.keys(), KeysOf(kvs, "a017", "a024"));
  // A limit of exactly what the range holds: nothing left, no more.
  s = Scan(*server, Request("a090", "b000", "", 10));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys().size(), 10u);
  EXPECT_FALSE(s.more());
  s = Scan(*server, Request("", "", "c09", 10));
  EXPECT_EQ(s.keys().size(), 10u);
  EXPECT_FALSE(s.more());
  // The last key of the table.
  s = Scan(*server, Request("c090", "", "", 10));
  EXPECT_FALSE(s.more());
  s = Scan(*server, Request("c089", "", "", 10));
  EXPECT_TRUE(s.more());
  // Limit 0: --max-scan-keys.
  s = Scan(*server, Request());
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), KeysOf(kvs, "a000", "b020"));
  EXPECT_TRUE(s.more());
  s = Scan(*server, Request("", "", "", 120));
  EXPECT_EQ(s.keys().size(), 120u);
  // Over it: refused, as an oversized MultiGet is.
  s = Scan(*server, Request("", "", "", 121));
  EXPECT_TRUE(IsError(s.status, StatusCode::INVALID_ARGUMENT,
                      "Scan limit of 121 entries exceeds --max-scan-keys 120"));
  EXPECT_TRUE(s.messages.empty());
}

TEST_F(ScanTest, ACuckooTableIsRefused) {
  ASSERT_NE(BuildTable(data_, "t", Lettered(), "cuckoo"), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  const Scanned s = Scan(server, Request());
  EXPECT_TRUE(IsError(s.status, StatusCode::FAILED_PRECONDITION,
                      "table \"t\" v000001 is a cuckoo table, which keeps no "
                      "key order: only block tables can be scanned"));
  EXPECT_TRUE(s.messages.empty());
}

TEST_F(ScanTest, BadRequestsAreRefusedNamingWhatWasWrong) {
  auto server = Serve(Lettered(), {"--max-key-size", "16"});
  std::string response;
  // Bytes that are no ScanRequest: INVALID_ARGUMENT, and logged.
  EXPECT_TRUE(IsError(server->RawCall("/roost.v1.Lookup/Scan",
                                      std::string("\x0a\x05t", 3), &response),
                      StatusCode::INVALID_ARGUMENT,
                      "malformed request: not a roost.v1.ScanRequest"));
  EXPECT_TRUE(server->WaitForLog("Scan from "));
  // A table name that is not UTF-8.
  EXPECT_TRUE(
      IsError(server->RawCall("/roost.v1.Lookup/Scan",
                              std::string("\x0a\x01\xff", 3), &response),
              StatusCode::INVALID_ARGUMENT, "table name is not valid UTF-8"));
  v1::ScanRequest request = Request();
  request.set_table("");
  EXPECT_TRUE(IsError(Scan(*server, request).status,
                      StatusCode::INVALID_ARGUMENT, "table name is empty"));
  request.set_table("nonesuch");
  EXPECT_TRUE(IsError(Scan(*server, request).status, StatusCode::NOT_FOUND,
                      "no table \"nonesuch\""));
  EXPECT_TRUE(IsError(Scan(*server, Request(std::string(17, 'a'))).status,
                      StatusCode::INVALID_ARGUMENT,
                      "start is 17 bytes, more than --max-key-size 16"));
  EXPECT_TRUE(
      IsError(Scan(*server, Request("", "", std::string(20, 'a'))).status,
              StatusCode::INVALID_ARGUMENT,
              "prefix is 20 bytes, more than --max-key-size 16"));
  EXPECT_TRUE(IsError(Scan(*server, Request("", "", "", 0, "v1")).status,
                      StatusCode::INVALID_ARGUMENT,
                      "bad version \"v1\" (expected a version such as v000007 "
                      "or 7)"));
  EXPECT_TRUE(IsError(Scan(*server, Request("", "", "", 0, "4")).status,
                      StatusCode::FAILED_PRECONDITION,
                      "table \"t\" has no version v000004 to answer from: it "
                      "serves v000001"));
  // The server goes on serving.
  const Scanned s = Scan(*server, Request("", "", "", 0, "1"));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.entries.size(), 300u);
}

// Values "VERSION:KEY:" and 1,000 bytes: 3,000 keys are many messages.
KeyValues Padded(int version, const std::vector<std::string>& keys) {
  KeyValues kvs;
  for (const std::string& key : keys) {
    kvs[key] = StrCat(version, ":", key, ":", std::string(1000, 'x'));
  }
  return kvs;
}
int PaddedVersion(const std::string& value, const std::string& key) {
  const size_t colon = value.find(':');
  if (colon == std::string::npos) return -1;
  return VersionOf(value.substr(0, colon + 1 + key.size()), key);
}

TEST_F(ScanTest, AScanReadsTheVersionItNamesOrStartedWith) {
  const std::vector<std::string> keys = Keys(3000);
  ASSERT_NE(BuildTable(data_, "t", Padded(1, keys), "block"), "");
  ServerFlags flags = Flags();
  flags.extra = {"--version-grace", "3600", "--max-scan-keys", "3000"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  // A scan started on v1, read one message at a time, goes on reading v1
  // after v2 is swapped in.
  grpc::ClientContext context;
  auto reader = server.lookup().Scan(&context, Request());
  v1::ScanResponse first;
  ASSERT_TRUE(reader->Read(&first));
  ASSERT_GT(first.entries_size(), 0);
  ASSERT_NE(BuildTable(data_, "t", Padded(2, keys), "block"), "");
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000002"));
  size_t entries = static_cast<size_t>(first.entries_size());
  v1::ScanResponse r;
  while (reader->Read(&r)) {
    EXPECT_EQ(r.version(), "v000001");
    for (const v1::KeyValue& kv : r.entries()) {
      EXPECT_EQ(PaddedVersion(kv.value(), kv.key()), 1) << kv.key();
    }
    entries += static_cast<size_t>(r.entries_size());
  }
  ASSERT_OK(reader->Finish());
  EXPECT_EQ(entries, keys.size());

  // Named: the version held for the grace period, or the serving one.
  Scanned s = Scan(server, Request("", "", "", 0, "v000001"));
  ASSERT_OK(s.status);
  ASSERT_EQ(s.entries.size(), keys.size());
  for (const auto& [k, v] : s.entries) EXPECT_EQ(PaddedVersion(v, k), 1) << k;
  EXPECT_EQ(s.messages.back().version(), "v000001");
  s = Scan(server, Request());
  ASSERT_EQ(s.entries.size(), keys.size());
  for (const auto& [k, v] : s.entries) EXPECT_EQ(PaddedVersion(v, k), 2) << k;
  EXPECT_EQ(s.messages.back().version(), "v000002");
}

TEST_F(ScanTest, AShardsServerScansOnlyItsShard) {
  constexpr uint32_t kShards = 3;
  const KeyValues kvs = Lettered();
  ASSERT_NE(BuildTable(data_, "t", kvs, "block", {"--shards", StrCat(kShards)}),
            "");
  ASSERT_NE(BuildTable(data_, "plain", kvs, "block"), "");
  ServerFlags flags = Flags();
  flags.extra = {"--shard", "1"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000001"; }));
  auto info = server.Table("t");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->shard(), 1u);
  EXPECT_EQ(info->shard_count(), kShards);
  info = server.Table("plain");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->shard(), 0u);
  EXPECT_EQ(info->shard_count(), 0u);

  std::vector<std::string> mine;
  for (const auto& [k, v] : kvs) {
    if (PartitionOf(k, kShards) == 1) mine.push_back(k);
  }
  ASSERT_GT(mine.size(), 50u);
  ASSERT_LT(mine.size(), 150u);
  const Scanned s = Scan(server, Request());
  ASSERT_OK(s.status);
  EXPECT_EQ(s.keys(), mine);
}

TEST_F(ScanTest, AClientThatCancelsHalfWayEndsItsScan) {
  const KeyValues kvs = Large();
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-scan-keys", "20000"};
  ASSERT_NE(BuildTable(data_, "t", kvs, "block"), "");
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  {
    grpc::ClientContext context;
    auto reader = server.lookup().Scan(&context, Request());
    v1::ScanResponse r;
    ASSERT_TRUE(reader->Read(&r));
    EXPECT_GT(r.entries_size(), 0);
    context.TryCancel();
    while (reader->Read(&r)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), StatusCode::CANCELLED);
  }
  const std::string kCancelled =
      R"(grpc_server_handled_total{grpc_code="Canceled",grpc_method="Scan",grpc_service="roost.v1.Lookup",grpc_type="server_stream"})";
  ASSERT_TRUE(WaitFor([&] {
    return MetricOr(server.ScrapeMetrics(), kCancelled) == 1;
  })) << server.Log();
  // No call is left in flight, and the server serves on.
  EXPECT_TRUE(WaitFor([&] {
    return MetricOr(server.ScrapeMetrics(), "roost_calls_in_flight", -1) == 0;
  }));
  const Scanned s = Scan(server, Request("", "", "", 10));
  ASSERT_OK(s.status);
  EXPECT_EQ(s.entries.size(), 10u);
  EXPECT_EQ(
      MetricOr(
          server.ScrapeMetrics(),
          R"(grpc_server_handled_total{grpc_code="OK",grpc_method="Scan",grpc_service="roost.v1.Lookup",grpc_type="server_stream"})"),
      1);
}

TEST_F(ScanTest, AnOpenScanCountsAgainstMaxInFlight) {
  auto server =
      Serve(Large(), {"--max-in-flight", "1", "--max-scan-keys", "20000"});
  grpc::ClientContext context;
  auto reader = server->lookup().Scan(&context, Request());
  v1::ScanResponse r;
  ASSERT_TRUE(reader->Read(&r));
  const std::string kFull =
      "too many calls in flight (--max-in-flight 1); retry later";
  v1::GetResponse g;
  EXPECT_TRUE(IsError(server->Get("t", "k", &g), StatusCode::RESOURCE_EXHAUSTED,
                      kFull));
  EXPECT_TRUE(IsError(Scan(*server, Request()).status,
                      StatusCode::RESOURCE_EXHAUSTED, kFull));
  // Read to its end, the scan leaves its slot.
  size_t entries = static_cast<size_t>(r.entries_size());
  while (reader->Read(&r)) entries += static_cast<size_t>(r.entries_size());
  ASSERT_OK(reader->Finish());
  EXPECT_EQ(entries, 20000u);
  EXPECT_TRUE(WaitFor([&] { return server->Get("t", "k", &g).ok(); }));
}

TEST_F(ScanTest, AClientThatStopsReadingIsCutOffAfterSendTimeout) {
  auto server =
      Serve(Large(), {"--send-timeout", "0.5", "--max-scan-keys", "20000"});
  grpc::ClientContext context;
  auto reader = server->lookup().Scan(&context, Request());
  v1::ScanResponse r;
  ASSERT_TRUE(reader->Read(&r));
  // The client reads no more.
  ASSERT_TRUE(server->WaitForLog(
      "cancelled 1 Scan call whose client took no message for "
      "--send-timeout 0.5 s"));
  while (reader->Read(&r)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), StatusCode::CANCELLED);
  EXPECT_TRUE(WaitFor([&] {
    v1::GetResponse g;
    return server->Get("t", "k", &g).ok();
  }));
}

TEST_F(ScanTest, AScanInProgressRunsToItsEndThroughTheShutdownDrain) {
  auto server =
      Serve(Large(), {"--max-scan-keys", "20000", "--shutdown-timeout", "30"});
  grpc::ClientContext context;
  auto reader = server->lookup().Scan(&context, Request());
  v1::ScanResponse r;
  ASSERT_TRUE(reader->Read(&r));
  size_t entries = static_cast<size_t>(r.entries_size());
  server->SendSignal(SIGTERM);
  ASSERT_TRUE(server->WaitForLog("draining (SIGTERM)"));
  while (reader->Read(&r)) entries += static_cast<size_t>(r.entries_size());
  ASSERT_OK(reader->Finish());
  EXPECT_EQ(entries, 20000u);
  EXPECT_EQ(server->WaitExit(), 0) << server->Log();
}

// A scan holds its version mapped; a writer that opens the file waits for
// the lease, so the scan ends at its next message and lets go.
TEST_F(ScanTest, AScanOfAFileAWriterAsksForEndsUnavailable) {
  const std::string v1 = BuildTable(data_, "t", Large(), "block");
  ASSERT_NE(v1, "");
  ServerFlags flags = Flags();
  flags.extra = {"--max-scan-keys", "20000"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  grpc::ClientContext context;
  auto reader = server.lookup().Scan(&context, Request());
  v1::ScanResponse r;
  ASSERT_TRUE(reader->Read(&r));
  const std::string file = v1 + "/table.sst";
  ::chmod(file.c_str(), 0644);  // published read-only; root writes anyway
  std::atomic<int> truncated{-1};
  std::thread writer([&] { truncated = ::truncate(file.c_str(), 0); });
  ASSERT_TRUE(server.WaitForLog("roost-server: stopped serving t v000001"));
  while (reader->Read(&r)) {
  }
  EXPECT_TRUE(IsError(reader->Finish(), StatusCode::UNAVAILABLE,
                      "table \"t\" v000001 is being modified on the server; "
                      "scan again (from after the last key read)"));
  writer.join();  // the writer got the file once the scan let go
  EXPECT_EQ(truncated.load(), 0);
  EXPECT_TRUE(server.Running());
}

}  // namespace
}  // namespace roost::testing
