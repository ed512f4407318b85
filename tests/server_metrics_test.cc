// roost-server end to end: /metrics, scraped over HTTP and parsed, moves
// exactly as requests are made. See tests/server_harness.h.

#include <filesystem>

#include "tests/server_harness.h"
#include "tests/test_util.h"
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

}  // namespace
}  // namespace roost::testing
