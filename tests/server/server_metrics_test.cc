// roost-server end to end: /metrics, scraped over HTTP and parsed, moves
// exactly as requests are made. See tests/harness/server_harness.h.

#include <sys/statvfs.h>

#include <csignal>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/version/manifest.h"
#include "tests/harness/manifest_edit.h"
#include "tests/harness/server_harness.h"
#include "tests/harness/test_util.h"
#include "util/build_info.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;

class MetricsTest : public ServerFixture {};

TEST_F(MetricsTest, MetricsCountRequestsLookupsAndTables) {
  KeyValues t, b;
  for (int i = 0; i < 100; ++i) t[StrCat("key", i)] = StrCat("value", i);
  b["b"] = "block value";
  const std::string t_v1 = BuildTable(data_, "t", t, "cuckoo");
  ASSERT_NE(t_v1, "");
  ASSERT_NE(BuildTable(data_, "b", b, "block"), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  const Metrics before = server.ScrapeMetrics();
  ASSERT_FALSE(before.empty());

  v1::GetResponse g;
  for (int i = 0; i < 7; ++i) ASSERT_OK(server.Get("t", StrCat("key", i), &g));
  for (int i = 0; i < 3; ++i) ASSERT_OK(server.Get("t", StrCat("no", i), &g));
  ASSERT_OK(server.Get("b", "b", &g));
  EXPECT_EQ(server.Get("nope", "k", &g).error_code(), StatusCode::NOT_FOUND);
  std::vector<std::string> batch;
  for (int i = 0; i < 20; ++i) {
    batch.push_back(i < 12 ? StrCat("key", 50 + i) : StrCat("no", i));
  }
  v1::MultiGetResponse m;
  ASSERT_OK(server.MultiGet("t", batch, &m));
  v1::ListTablesResponse list;
  ASSERT_OK(server.ListTables(&list));

  const Metrics after = server.ScrapeMetrics();
  const auto delta = [&](const std::string& series) {
    return MetricOr(after, series) - MetricOr(before, series);
  };
  const std::string get =
      "grpc_method=\"Get\",grpc_service=\"roost.v1.Lookup\","
      "grpc_type=\"unary\"";
  const std::string multi =
      "grpc_method=\"MultiGet\",grpc_service=\"roost.v1.Lookup\","
      "grpc_type=\"unary\"";
  EXPECT_EQ(delta("grpc_server_started_total{" + get + "}"), 12);
  EXPECT_EQ(delta("grpc_server_handled_total{grpc_code=\"OK\"," + get + "}"),
            11);
  EXPECT_EQ(
      delta("grpc_server_handled_total{grpc_code=\"NotFound\"," + get + "}"),
      1);
  EXPECT_EQ(delta("grpc_server_handling_seconds_count{" + get + "}"), 12);
  EXPECT_EQ(delta("grpc_server_started_total{" + multi + "}"), 1);
  EXPECT_EQ(delta("grpc_server_handled_total{grpc_code=\"OK\"," + multi + "}"),
            1);
  EXPECT_EQ(delta("grpc_server_started_total{grpc_method=\"ListTables\","
                  "grpc_service=\"roost.v1.Lookup\",grpc_type=\"unary\"}"),
            1);

  EXPECT_EQ(delta("roost_lookups_total{result=\"hit\",table=\"t\"}"), 7 + 12);
  EXPECT_EQ(delta("roost_lookups_total{result=\"miss\",table=\"t\"}"), 3 + 8);
  EXPECT_EQ(delta("roost_lookups_total{result=\"hit\",table=\"b\"}"), 1);
  EXPECT_EQ(delta("roost_lookups_total{result=\"miss\",table=\"b\"}"), 0);
  // One probe count per cuckoo lookup; the block table has no histogram.
  EXPECT_EQ(delta("roost_lookup_probes_count{table=\"t\"}"), 30);
  EXPECT_EQ(
      MetricOr(after, "roost_lookup_probes_bucket{le=\"+Inf\",table=\"t\"}"),
      MetricOr(after, "roost_lookup_probes_count{table=\"t\"}"));
  EXPECT_EQ(after.count("roost_lookup_probes_count{table=\"b\"}"), 0u);
  EXPECT_EQ(delta("roost_request_keys_sum{grpc_method=\"MultiGet\"}"), 20);
  EXPECT_EQ(delta("roost_request_keys_count{grpc_method=\"MultiGet\"}"), 1);
  EXPECT_EQ(delta("roost_request_keys_sum{grpc_method=\"Get\"}"), 11);

  EXPECT_EQ(MetricOr(after,
                     "roost_table_info{format=\"cuckoo\",table=\"t\","
                     "version=\"v000001\"}"),
            1);
  EXPECT_EQ(MetricOr(after,
                     "roost_table_info{format=\"block\",table=\"b\","
                     "version=\"v000001\"}"),
            1);
  EXPECT_EQ(MetricOr(after, "roost_table_keys{table=\"t\"}"), 100);
  EXPECT_EQ(MetricOr(after, "roost_table_mapped_bytes{table=\"t\"}"),
            static_cast<double>(fs::file_size(t_v1 + "/table.sst")));
  ASSERT_EQ(after.count("roost_table_resident_bytes{table=\"t\"}"), 1u);
  EXPECT_LE(MetricOr(after, "roost_table_resident_bytes{table=\"t\"}"),
            MetricOr(after, "roost_table_mapped_bytes{table=\"t\"}"));
  EXPECT_EQ(MetricOr(after,
                     "roost_table_swaps_total{result=\"success\",table=\"t\"}"),
            1);
  EXPECT_EQ(
      MetricOr(after, "roost_table_swaps_total{result=\"failure\",table=\"t\"}",
               -1),
      0);
  EXPECT_EQ(MetricOr(after, "roost_table_pinned{table=\"t\"}", -1), 0);
  // A series per load-failure reason from the start, at 0.
  for (const char* reason : {"manifest", "open", "corrupt", "unsupported"}) {
    EXPECT_EQ(MetricOr(after,
                       StrCat("roost_table_load_failures_total{reason=\"",
                              reason, "\",table=\"t\"}"),
                       -1),
              0)
        << reason;
  }
  EXPECT_EQ(
      MetricOr(after,
               "grpc_server_started_total{grpc_method=\"StreamMultiGet\","
               "grpc_service=\"roost.v1.Lookup\",grpc_type=\"bidi_stream\"}",
               -1),
      0);
}

// --page-requests-below: 100 has every batch ask for its keys' pages first
// (Table::RequestPages), and the gauge says so for each table, cuckoo and
// block; the answers are the same. The default (90) asks for none of
// these tables, which their checksum pass at open left resident.
TEST_F(MetricsTest, PageRequestsFollowTheFlagAndChangeNoAnswer) {
  KeyValues kv;
  for (int i = 0; i < 3000; ++i) kv[StrCat("key", i)] = StrCat("value", i);
  ASSERT_NE(BuildTable(data_, "t", kv, "cuckoo"), "");
  ASSERT_NE(BuildTable(data_, "b", kv, "block"), "");
  for (const bool always : {true, false}) {
    SCOPED_TRACE(always ? "--page-requests-below 100" : "the default");
    ServerFlags flags = Flags();
    flags.metrics_listen = "127.0.0.1:0";
    if (always) flags.extra = {"--page-requests-below", "100"};
    ServerProcess server(flags, LogFile());
    ASSERT_TRUE(server.WaitReady());
    std::vector<std::string> batch;
    for (int i = 0; i < 400; ++i) {
      batch.push_back(i % 4 == 3 ? StrCat("no", i) : StrCat("key", i * 7));
    }
    for (const char* table : {"t", "b"}) {
      SCOPED_TRACE(table);
      // The registry's thread sets the gauge at its first refresh, at start.
      EXPECT_TRUE(WaitFor([&] {
        return MetricOr(
                   server.ScrapeMetrics(),
                   StrCat("roost_table_page_requests{table=\"", table, "\"}"),
                   -1) == (always ? 1 : 0);
      }));
      v1::MultiGetResponse m;
      ASSERT_OK(server.MultiGet(table, batch, &m));
      ASSERT_EQ(m.results_size(), static_cast<int>(batch.size()));
      for (size_t i = 0; i < batch.size(); ++i) {
        const auto it = kv.find(batch[i]);
        EXPECT_EQ(m.results(static_cast<int>(i)).found(), it != kv.end()) << i;
        if (it != kv.end()) {
          EXPECT_EQ(m.results(static_cast<int>(i)).value(), it->second) << i;
        }
      }
    }
  }
}

// Freshness and identity: the served version's build and data times from
// its MANIFEST, the build of the server, the process's own figures, and
// the messages of a stream.
TEST_F(MetricsTest, MetricsSayHowFreshTheDataIsAndWhatRuns) {
  KeyValues kvs;
  // Values of 200 KiB: a Scan sends one per message (of 256 KiB at most).
  for (int i = 0; i < 3; ++i) {
    kvs[StrCat("key", i)] = std::string(200 << 10, static_cast<char>('a' + i));
  }
  const std::string t = BuildTable(
      data_, "t", kvs, "block", {"--data-timestamp", "2024-05-01T12:00:00Z"});
  ASSERT_NE(t, "");
  // A version whose MANIFEST has neither time, as roost-load 0.1 wrote it.
  const std::string old = BuildTable(data_, "old", {{"k", "v"}});
  ASSERT_NE(old, "");
  EditManifest(old, [](Json& m) {
    ASSERT_TRUE(m.contains("build_time"));
    m.erase("build_time");
  });
  const auto manifest = ReadManifest(t + "/MANIFEST");
  ASSERT_OK(manifest);
  ASSERT_TRUE(manifest->build_time);

  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  const double before_start = static_cast<double>(std::time(nullptr));
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  v1::ScanRequest request;
  request.set_table("t");
  grpc::ClientContext context;
  auto reader = server.lookup().Scan(&context, request);
  v1::ScanResponse response;
  int messages = 0;
  while (reader->Read(&response)) ++messages;
  ASSERT_OK(reader->Finish());
  EXPECT_EQ(messages, 3);

  // A StreamMultiGet of two requests: two messages each way.
  {
    grpc::ClientContext stream_context;
    auto stream = server.lookup().StreamMultiGet(&stream_context);
    for (int i = 0; i < 2; ++i) {
      v1::MultiGetRequest get;
      get.set_table("old");
      get.add_keys("k");
      ASSERT_TRUE(stream->Write(get));
      v1::MultiGetResponse got;
      ASSERT_TRUE(stream->Read(&got));
      EXPECT_EQ(got.results(0).value(), "v");
    }
    ASSERT_TRUE(stream->WritesDone());
    ASSERT_OK(stream->Finish());
  }

  const Metrics m = server.ScrapeMetrics();
  const double now = static_cast<double>(std::time(nullptr));

  EXPECT_EQ(MetricOr(m, "roost_table_build_timestamp_seconds{table=\"t\"}"),
            static_cast<double>(*manifest->build_time));
  EXPECT_EQ(MetricOr(m, "roost_table_data_timestamp_seconds{table=\"t\"}"),
            1714564800);
  EXPECT_EQ(m.count("roost_table_build_timestamp_seconds{table=\"old\"}"), 0u);
  EXPECT_EQ(m.count("roost_table_data_timestamp_seconds{table=\"old\"}"), 0u);
  EXPECT_EQ(MetricOr(m, "roost_table_serving{table=\"old\"}"), 1);

  EXPECT_EQ(MetricOr(m, StrCat("roost_build_info{revision=\"", BuildRevision(),
                               "\",version=\"", BuildVersion(), "\"}")),
            1)
      << "revision " << BuildRevision();

  // Start time: tick and boot-time rounding allow a second or two.
  const double started = MetricOr(m, "process_start_time_seconds", -1);
  EXPECT_GE(started, before_start - 2);
  EXPECT_LE(started, now + 2);
  const double open_fds = MetricOr(m, "process_open_fds", -1);
  EXPECT_GT(open_fds, 0);
  EXPECT_LE(open_fds, MetricOr(m, "process_max_fds", -1));
  EXPECT_GT(MetricOr(m, "process_resident_memory_bytes", -1), 0);
  EXPECT_GE(MetricOr(m, "process_virtual_memory_bytes", -1),
            MetricOr(m, "process_resident_memory_bytes", -1));
  EXPECT_GE(MetricOr(m, "process_cpu_seconds_total", -1), 0);

  const std::string scan =
      "grpc_method=\"Scan\",grpc_service=\"roost.v1.Lookup\","
      "grpc_type=\"server_stream\"";
  EXPECT_EQ(MetricOr(m, "grpc_server_msg_received_total{" + scan + "}"), 1);
  EXPECT_EQ(MetricOr(m, "grpc_server_msg_sent_total{" + scan + "}"), 3);
  const std::string stream =
      "grpc_method=\"StreamMultiGet\",grpc_service=\"roost.v1.Lookup\","
      "grpc_type=\"bidi_stream\"";
  EXPECT_EQ(MetricOr(m, "grpc_server_msg_received_total{" + stream + "}"), 2);
  EXPECT_EQ(MetricOr(m, "grpc_server_msg_sent_total{" + stream + "}"), 2);
  EXPECT_EQ(MetricOr(m,
                     "grpc_server_msg_sent_total{grpc_method=\"Watch\","
                     "grpc_service=\"grpc.health.v1.Health\","
                     "grpc_type=\"server_stream\"}",
                     -1),
            0);
  // No series for unary methods.
  EXPECT_EQ(m.count("grpc_server_msg_sent_total{grpc_method=\"Get\","
                    "grpc_service=\"roost.v1.Lookup\",grpc_type=\"unary\"}"),
            0u);
  // prometheus-cpp's own summary, in microseconds, is not there.
  for (const auto& [series, value] : m) {
    EXPECT_NE(series.rfind("exposer_", 0), 0u) << series;
  }
}

// Two compressed block tables of the same keys, one block cache of
// --block-cache bytes: each table's block is decompressed once (a miss)
// and found the second time (a hit), and neither table is answered from
// the other's block.
TEST_F(MetricsTest, CompressedBlockTablesShareOneBlockCacheOfTheFlagsSize) {
  KeyValues a, b;
  for (int i = 0; i < 2000; ++i) {
    a[StrCat("key", 10000 + i)] = StrCat("a", i);
    b[StrCat("key", 10000 + i)] = StrCat("b", i);
  }
  const std::vector<std::string> snappy = {"--compression", "snappy",
                                           "--block-size", "512"};
  ASSERT_NE(BuildTable(data_, "a", a, "block", snappy), "");
  ASSERT_NE(BuildTable(data_, "b", b, "block", snappy), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--block-cache", "1M"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  const Metrics before = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(before, "roost_block_cache_capacity_bytes"), 1 << 20);

  v1::GetResponse g;
  for (int round = 0; round < 2; ++round) {
    ASSERT_OK(server.Get("a", "key11000", &g));
    EXPECT_EQ(g.value(), "a1000");
    ASSERT_OK(server.Get("b", "key11000", &g));
    EXPECT_EQ(g.value(), "b1000");
  }
  const Metrics after = server.ScrapeMetrics();
  const auto delta = [&](const std::string& series) {
    return MetricOr(after, series) - MetricOr(before, series);
  };
  EXPECT_EQ(delta("roost_block_cache_misses_total"), 2);
  EXPECT_EQ(delta("roost_block_cache_hits_total"), 2);
  EXPECT_GT(MetricOr(after, "roost_block_cache_usage_bytes"), 0);
  EXPECT_LE(MetricOr(after, "roost_block_cache_usage_bytes"), 1 << 20);
}

// What alerts need beside the tables: which shard a server serves and of
// how many, whether it is ready (health SERVING), and how full its data
// directory's file system is.
TEST_F(MetricsTest, MetricsSayTheShardReadinessAndFreeSpace) {
  KeyValues kvs;
  for (int i = 0; i < 100; ++i) kvs[StrCat("key", i)] = StrCat("value", i);
  ASSERT_NE(BuildTable(data_, "t", kvs, "cuckoo", {"--shards", "3"}), "");
  ASSERT_NE(BuildTable(data_, "plain", kvs), "");

  // Without --shard the sharded version is refused, so the server never
  // becomes ready; it serves every table whole, as shard "all" of 1.
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  {
    ServerProcess server(flags, LogFile("unsharded"));
    ASSERT_TRUE(server.WaitListening());
    ASSERT_TRUE(WaitFor([&] {
      return server.CountLogLines("is a sharded version of 3 shards") > 0;
    })) << server.Log();
    const Metrics m = server.ScrapeMetrics();
    EXPECT_EQ(MetricOr(m, "roost_shard_info{shard=\"all\"}"), 1);
    EXPECT_EQ(MetricOr(m, "roost_shards", -1), 1);
    EXPECT_EQ(MetricOr(m, "roost_ready", -1), 0);
  }

  flags.extra = {"--shard", "1"};
  flags.drain_period = 30;
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  const Metrics m = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(m, "roost_shard_info{shard=\"1\"}"), 1);
  EXPECT_EQ(m.count("roost_shard_info{shard=\"all\"}"), 0u);
  EXPECT_EQ(MetricOr(m, "roost_shards", -1), 3);
  EXPECT_EQ(MetricOr(m, "roost_ready", -1), 1);

  // The file system's size is fixed; its free space moves with whatever
  // else writes to it, so only bounds are checked.
  struct statvfs st;
  ASSERT_EQ(::statvfs(data_.c_str(), &st), 0);
  const double size = static_cast<double>(uint64_t{st.f_blocks} * st.f_frsize);
  EXPECT_EQ(MetricOr(m, "roost_data_dir_size_bytes", -1), size);
  const double available = MetricOr(m, "roost_data_dir_available_bytes", -1);
  EXPECT_GT(available, 0);
  EXPECT_LE(available, size);

  // Draining: health says NOT_SERVING, and so does roost_ready, while
  // /metrics still answers.
  server.SendSignal(SIGTERM);
  ASSERT_TRUE(server.WaitForLog("draining")) << server.Log();
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(), "roost_ready", -1), 0);
  grpc::health::v1::HealthCheckResponse::ServingStatus status;
  ASSERT_OK(server.HealthCheck("", &status));
  EXPECT_EQ(status, grpc::health::v1::HealthCheckResponse::NOT_SERVING);
}

}  // namespace
}  // namespace roost::testing
