// roost-server end to end: new versions while it runs. Hot swaps under
// load, bad versions refused, --keep-versions, and tables appearing and
// disappearing. Versions are published by the real roost-load. See
// tests/harness/server_harness.h.

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "tests/harness/server_harness.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;

class SwapTest : public ServerFixture {};

TEST_F(SwapTest, HotSwapUnderLoadAnswersEachRequestFromOneVersion) {
  const std::vector<std::string> keys = Keys(2000);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys), "cuckoo"), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());

  std::atomic<bool> stop{false};
  std::atomic<unsigned> seen{0};  // bit N: version N answered
  std::atomic<int> requests{0};
  Problems problems;
  const auto client = [&](int id) {
    std::mt19937_64 rng(id);
    while (!stop.load()) {
      // A MultiGet of 50 keys, every tenth one absent...
      std::vector<std::string> batch;
      for (int i = 0; i < 50; ++i) {
        batch.push_back(i % 10 == 9 ? StrCat("absent-", rng() % 1000)
                                    : keys[rng() % keys.size()]);
      }
      v1::MultiGetResponse m;
      grpc::Status s = server.MultiGet("t", batch, &m);
      if (!s.ok()) {
        problems.Add(StrCat("MultiGet failed: ", s.error_code(), " ",
                            s.error_message()));
        continue;
      }
      if (m.results_size() != 50) {
        problems.Add(StrCat("MultiGet gave ", m.results_size(), " results"));
        continue;
      }
      int version = 0;
      for (int i = 0; i < 50; ++i) {
        const v1::GetResponse& r = m.results(i);
        if (i % 10 == 9) {
          if (r.found()) problems.Add("found " + batch[i]);
          continue;
        }
        const int v = VersionOf(r.value(), batch[i]);
        if (!r.found() || v < 1) {
          problems.Add(
              StrCat("wrong answer for ", batch[i], ": \"", r.value(), "\""));
        } else if (version != 0 && v != version) {
          problems.Add(
              StrCat("one MultiGet answered from v", version, " and v", v));
        } else {
          version = v;
        }
      }
      if (version > 0) seen.fetch_or(1u << version);
      // ...and a Get.
      const std::string& key = keys[rng() % keys.size()];
      v1::GetResponse g;
      s = server.Get("t", key, &g);
      if (!s.ok()) {
        problems.Add(
            StrCat("Get failed: ", s.error_code(), " ", s.error_message()));
      } else if (const int v = VersionOf(g.value(), key); v < 1) {
        problems.Add(StrCat("wrong answer for ", key, ": \"", g.value(), "\""));
      } else {
        seen.fetch_or(1u << v);
      }
      requests.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(client, i);
  EXPECT_TRUE(WaitFor([&] { return (seen.load() & 2) && requests >= 8; }));
  // v2 to v8, alternating formats, published while the clients run: more
  // swaps than the server has version slots, so slots are reused while
  // requests may still hold the versions in them.
  for (int v = 2; v <= 8; ++v) {
    EXPECT_NE(BuildTable(data_, "t", Versioned(v, keys),
                         v % 2 == 0 ? "block" : "cuckoo"),
              "");
  }
  EXPECT_TRUE(server.WaitForLog("roost-server: serving t v000008"));
  EXPECT_TRUE(WaitFor([&] { return (seen.load() & (1u << 8)) != 0; }));
  // Some more requests after the last swap, while old versions are let go.
  const int so_far = requests.load();
  EXPECT_TRUE(WaitFor([&] { return requests.load() >= so_far + 100; }));
  stop.store(true);
  for (auto& t : threads) t.join();

  EXPECT_EQ(problems.count(), 0) << problems.Describe();
  // Only versions 1 to 8 answered, v1 and v8 among them (the ones between
  // may be skipped when the server finds several new ones in one scan).
  EXPECT_EQ(seen.load() & ~0b111111110u, 0u);
  EXPECT_TRUE(seen.load() & 2);
  EXPECT_TRUE(seen.load() & (1u << 8));
  EXPECT_EQ(server.CountLogLines("cannot load"), 0) << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 8));
}

// Flips one byte in the middle of `path`.
void FlipMiddleByte(const std::string& path) {
  std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 1000u);
  bytes[bytes.size() / 2] ^= 0x20;
  WriteFile(path, bytes);
}

TEST_F(SwapTest, BadVersionsAreRefusedWhileTheOldOneKeepsServing) {
  const std::vector<std::string> keys = Keys(500);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys)), "");
  // Versions 2 and 3 are built in another data directory (whose MANIFESTs
  // then name versions 2 and 3), damaged there, and renamed into place.
  const std::string staging = scratch_.File("staging");
  ASSERT_NE(BuildTable(staging, "t", {{"unused", "1"}}), "");
  const std::string corrupt = BuildTable(staging, "t", Versioned(2, keys));
  const std::string unparseable = BuildTable(staging, "t", Versioned(3, keys));
  ASSERT_NE(corrupt, "");
  ASSERT_NE(unparseable, "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  // Checksums are verified before a swap: any flipped byte is refused.
  ASSERT_NO_FATAL_FAILURE(FlipMiddleByte(corrupt + "/table.sst"));
  fs::rename(corrupt, TableDir() + "/v000002");
  ASSERT_TRUE(server.WaitForLog("roost-server: cannot load t v000002: "));
  EXPECT_EQ(server.CountLogLines("checksum mismatch"), 1) << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  EXPECT_EQ(server.ServingVersion("t"), "v000001");
  Metrics metrics = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_load_failures_total{reason=\"corrupt\","
                     "table=\"t\"}"),
            1);
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_swaps_total{result=\"failure\",table=\"t\"}"),
            1);
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_swaps_total{result=\"success\",table=\"t\"}"),
            1);

  // A MANIFEST that does not parse.
  WriteFile(unparseable + "/MANIFEST", "{\"table\": \"t\", \"version\": 3,");
  fs::rename(unparseable, TableDir() + "/v000003");
  ASSERT_TRUE(server.WaitForLog("roost-server: cannot load t v000003: "));
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  metrics = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_load_failures_total{reason="
                     "\"manifest\",table=\"t\"}"),
            1);
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_swaps_total{result=\"failure\",table=\"t\"}"),
            2);

  // A good version after them is still picked up, and the bad ones are not
  // tried again on every scan.
  ASSERT_NE(BuildTable(data_, "t", Versioned(4, keys)), "");
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000004"));
  EXPECT_TRUE(ServesVersion(server, keys, 4));
  metrics = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_swaps_total{result=\"success\",table=\"t\"}"),
            2);
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_swaps_total{result=\"failure\",table=\"t\"}"),
            2);
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_info{format=\"cuckoo\",table=\"t\","
                     "version=\"v000004\"}"),
            1);
  EXPECT_EQ(metrics.count("roost_table_info{format=\"cuckoo\",table=\"t\","
                          "version=\"v000001\"}"),
            0u);
  EXPECT_EQ(server.CountLogLines("cannot load t v000002"), 1);
  EXPECT_EQ(server.CountLogLines("cannot load t v000003"), 1);

  // Asked for by name, the corrupt version is tried again, and refused.
  v1::RollbackResponse rolled;
  const grpc::Status rollback = server.Rollback("t", "2", &rolled);
  EXPECT_EQ(rollback.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(rollback.error_message().rfind("cannot load t v000002: ", 0), 0u)
      << rollback.error_message();
  EXPECT_EQ(server.CountLogLines("cannot load t v000002"), 2);
  EXPECT_TRUE(ServesVersion(server, keys, 4));
  EXPECT_FALSE(server.Table("t").value_or(v1::TableInfo()).pinned());
}

TEST_F(SwapTest, KeepVersionsRemovesAllButTheNewestAndTheServed) {
  const std::vector<std::string> keys = Keys(50);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys)), "");
  ServerFlags flags = Flags();
  flags.extra = {"--keep-versions", "2"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  for (int v = 2; v <= 4; ++v) {
    ASSERT_NE(BuildTable(data_, "t", Versioned(v, keys)), "");
  }
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000004"));
  EXPECT_TRUE(WaitFor([&] {
    return VersionDirs(TableDir()) == Names{"v000003", "v000004"};
  })) << ::testing::PrintToString(VersionDirs(TableDir()));
  EXPECT_TRUE(WaitFor([&] {
    auto t = server.Table("t");
    return t && Strings(t->versions_on_disk()) == Names{"v000003", "v000004"};
  }));
  EXPECT_EQ(server.CountLogLines("removed t v000001 (--keep-versions 2)"), 1);
  EXPECT_EQ(server.CountLogLines("removed t v000002 (--keep-versions 2)"), 1);
  EXPECT_TRUE(ServesVersion(server, keys, 4));

  // Pinned to v3, which is then no longer among the newest two: kept, while
  // v4 goes.
  v1::RollbackResponse rolled;
  ASSERT_OK(server.Rollback("t", "3", &rolled));
  ASSERT_NE(BuildTable(data_, "t", Versioned(5, keys)), "");
  ASSERT_NE(BuildTable(data_, "t", Versioned(6, keys)), "");
  EXPECT_TRUE(WaitFor([&] {
    return VersionDirs(TableDir()) == Names{"v000003", "v000005", "v000006"};
  })) << ::testing::PrintToString(VersionDirs(TableDir()));
  EXPECT_EQ(server.ServingVersion("t"), "v000003");
  EXPECT_TRUE(ServesVersion(server, keys, 3));
}

TEST_F(SwapTest, DeletedServedVersionKeepsServingFromMemory) {
  const std::vector<std::string> keys = Keys(50);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys)), "");
  ASSERT_NE(BuildTable(data_, "t", Versioned(2, keys)), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(ServesVersion(server, keys, 2));
  fs::remove_all(TableDir() + "/v000002");
  EXPECT_TRUE(WaitFor([&] {
    auto t = server.Table("t");
    return t && Strings(t->versions_on_disk()) == Names{"v000001"};
  }));
  // Never a step back to v1 by itself.
  EXPECT_EQ(server.ServingVersion("t"), "v000002");
  EXPECT_TRUE(ServesVersion(server, keys, 2));
  EXPECT_EQ(server.CountLogLines("serving t v000001"), 0);
}

TEST_F(SwapTest, TablesAppearAndDisappearWithoutRestart) {
  fs::create_directories(data_);
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  v1::GetResponse g;
  EXPECT_TRUE(IsError(server.Get("t", "k", &g), StatusCode::NOT_FOUND,
                      "no table \"t\""));

  ASSERT_NE(BuildTable(data_, "t", {{"k", "first"}}), "");
  EXPECT_TRUE(WaitFor([&] { return server.Get("t", "k", &g).ok(); }));
  EXPECT_EQ(g.value(), "first");

  fs::remove_all(TableDir());
  grpc::Status s;
  EXPECT_TRUE(WaitFor([&] {
    s = server.Get("t", "k", &g);
    return !s.ok();
  }));
  EXPECT_TRUE(IsError(s, StatusCode::NOT_FOUND, "no table \"t\""));
  EXPECT_FALSE(server.Table("t"));
  EXPECT_TRUE(server.WaitForLog("roost-server: table t removed from "));

  // Back again, with other contents (and version numbers starting over).
  ASSERT_NE(BuildTable(data_, "t", {{"k", "second"}}), "");
  EXPECT_TRUE(WaitFor([&] {
    return server.Get("t", "k", &g).ok() && g.value() == "second";
  })) << g.value();
}

// With a poll interval of an hour only inotify makes the server rescan: a
// table directory that is removed and made again must be watched again.
TEST_F(SwapTest, InotifyAloneFindsVersionsOfANewAndOfARecreatedTable) {
  fs::create_directories(data_);
  ServerFlags flags = Flags();
  flags.poll_interval = 3600;
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  if (server.CountLogLines("inotify unavailable") > 0) {
    GTEST_SKIP() << "no inotify here";
  }
  v1::GetResponse g;
  // A new table, then a second version of it.
  ASSERT_NE(BuildTable(data_, "t", {{"k", "1"}}), "");
  EXPECT_TRUE(WaitFor([&] { return server.Get("t", "k", &g).ok(); }));
  ASSERT_NE(BuildTable(data_, "t", {{"k", "2"}}), "");
  EXPECT_TRUE(WaitFor(
      [&] { return server.Get("t", "k", &g).ok() && g.value() == "2"; }));
  // Removed...
  fs::remove_all(TableDir());
  EXPECT_TRUE(WaitFor([&] { return !server.Table("t"); }));
  // ...made again, seen (empty) by the server, then given a version.
  fs::create_directory(TableDir());
  EXPECT_TRUE(WaitFor([&] { return server.Table("t").has_value(); }));
  ASSERT_NE(BuildTable(data_, "t", {{"k", "again"}}), "");
  EXPECT_TRUE(WaitFor(
      [&] { return server.Get("t", "k", &g).ok() && g.value() == "again"; },
      std::chrono::seconds(10)))
      << "v000001 of the re-made table was never served:"
      << " its directory is not watched\n"
      << server.Log();
}

}  // namespace
}  // namespace roost::testing
