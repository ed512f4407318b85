// rows_bench: what a table of rows costs over the wire, closed loop against
// a running roost-server: keys/s and response bytes per key of MultiGet
// batches of whole rows, of a projection, of scores computed on the server,
// and of the same scores computed in this client from fetched vectors.
// bench/rows_bench.sh builds the table, starts the server and runs each
// mode; see bench/README.md.
//
// Modes (--mode):
//   rows          MultiGet of whole rows
//   project       MultiGet with --fields
//   server-score  MultiGet with a Score of --score-field against a query of
//                 --dim floats (no fields: scores only)
//   client-score  MultiGet of --score-field alone (a projection), then the
//                 dot product of each vector with the query here
//   client-rows   MultiGet of whole rows, then the field found in each row
//                 and the dot product here
// Keys are KEY_PREFIX + the number 0 to --keys - 1, zero-padded to
// --key-digits, drawn at random.
//
// Prints one JSON line: mode, batch, keys/s, requests/s, response bytes per
// key, this process's CPU seconds per 1,000 keys, and the scores' sum (so
// that no computation is skipped).
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "roost/v1/lookup.grpc.pb.h"
#include "storage/row/row_codec.h"
#include "storage/row/vector_math.h"
#include "util/json.h"

namespace roost {
namespace {

struct Flags {
  std::string addr = "127.0.0.1:50051";
  std::string table = "features";
  std::string mode = "rows";
  uint32_t batch = 100;
  uint64_t keys = 100000;
  std::string key_prefix = "user";
  int key_digits = 8;
  std::vector<std::string> fields;
  std::string score_field = "embedding";
  uint32_t dim = 128;
  double seconds = 5;
  double warmup = 1;
  int threads = 2;
};

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int Run(const Flags& f) {
  auto channel =
      grpc::CreateChannel(f.addr, grpc::InsecureChannelCredentials());
  auto stub = v1::Lookup::NewStub(channel);
  // The schema, for the client's decoding.
  RowSchema schema;
  {
    grpc::ClientContext context;
    v1::ListTablesResponse list;
    grpc::Status s = stub->ListTables(&context, v1::ListTablesRequest(), &list);
    if (!s.ok()) {
      fmt::print(stderr, "rows_bench: ListTables: {}\n", s.error_message());
      return 2;
    }
    for (const v1::TableInfo& t : list.tables()) {
      if (t.name() != f.table) continue;
      auto parsed = RowSchema::FromJson(*ParseJson(t.schema_json()));
      if (!parsed.ok()) {
        fmt::print(stderr, "rows_bench: {} has no schema\n", f.table);
        return 2;
      }
      schema = *parsed;
    }
  }
  const std::optional<size_t> field = schema.Find(f.score_field);
  if (!field && f.mode != "rows" && f.mode != "project") {
    fmt::print(stderr, "rows_bench: no field {}\n", f.score_field);
    return 2;
  }
  std::vector<float> query(f.dim);
  for (uint32_t d = 0; d < f.dim; ++d) query[d] = std::sin(d * 0.37f);
  // The projection onto the score field, for client-score's decoding.
  std::vector<uint32_t> indexes;
  const std::vector<std::string> score_only{f.score_field};
  RowSchema field_schema =
      field ? *schema.Project(score_only, &indexes) : RowSchema();

  std::atomic<int> phase{0};  // 0 warm-up, 1 measure, 2 stop
  std::atomic<uint64_t> keys_done{0}, requests_done{0}, bytes{0}, errors{0};
  std::atomic<double> checksum{0};
  auto caller = [&](int index) {
    std::mt19937_64 rng(1000 + index);
    double local_sum = 0;
    v1::MultiGetRequest request;
    request.set_table(f.table);
    request.set_packed(true);
    if (f.mode == "project") {
      for (const std::string& name : f.fields) request.add_fields(name);
    } else if (f.mode == "client-score") {
      request.add_fields(f.score_field);
    } else if (f.mode == "server-score") {
      v1::Score* score = request.mutable_score();
      score->set_field(f.score_field);
      for (float q : query) score->add_query(q);
    }
    while (phase.load() != 2) {
      request.clear_keys();
      for (uint32_t i = 0; i < f.batch; ++i) {
        request.add_keys(fmt::format("{}{:0{}}", f.key_prefix, rng() % f.keys,
                                     f.key_digits));
      }
      grpc::ClientContext context;
      v1::MultiGetResponse response;
      grpc::Status s = stub->MultiGet(&context, request, &response);
      if (!s.ok()) {
        if (errors.fetch_add(1) == 0) {
          fmt::print(stderr, "rows_bench: {}\n", s.error_message());
        }
        continue;
      }
      if (f.mode == "server-score") {
        for (float v : response.scores()) local_sum += v;
      } else if (f.mode == "client-score" || f.mode == "client-rows") {
        // Cut the packed values and score each vector here.
        const std::string& values = response.packed_values();
        size_t at = 0;
        const bool whole = f.mode == "client-rows";
        const RowSchema& s2 = whole ? schema : field_schema;
        const size_t i = whole ? *field : 0;
        for (int k = 0; k < request.keys_size(); ++k) {
          const size_t size = response.packed_sizes_size() > 0
                                  ? response.packed_sizes(k)
                                  : response.packed_width();
          const std::string_view row(values.data() + at, size);
          at += size;
          size_t begin, end;
          if (size == 0 || !VariableRange(s2, row, i, &begin, &end)) continue;
          if (end - begin != query.size() * 4) continue;
          local_sum +=
              DotProduct(row.data() + begin, query.data(), query.size());
        }
      }
      if (phase.load() == 1) {
        keys_done += f.batch;
        requests_done += 1;
        bytes += response.ByteSizeLong();
      }
    }
    double expected = checksum.load();
    while (!checksum.compare_exchange_weak(expected, expected + local_sum)) {
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < f.threads; ++t) threads.emplace_back(caller, t);
  std::this_thread::sleep_for(std::chrono::duration<double>(f.warmup));
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  phase = 1;
  std::this_thread::sleep_for(std::chrono::duration<double>(f.seconds));
  phase = 2;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  const double cpu = CpuSeconds() - cpu0;
  for (std::thread& t : threads) t.join();
  const double k = keys_done.load();
  OrderedJson out;
  out["mode"] = f.mode;
  out["batch"] = f.batch;
  out["threads"] = f.threads;
  out["keys_per_s"] = k / wall;
  out["requests_per_s"] = requests_done.load() / wall;
  out["bytes_per_key"] = k > 0 ? bytes.load() / k : 0;
  out["client_cpu_s_per_1000_keys"] = k > 0 ? cpu / k * 1000 : 0;
  out["errors"] = errors.load();
  out["checksum"] = checksum.load();
  std::puts(DumpJson(out, false).c_str());
  return errors.load() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace roost

int main(int argc, char** argv) {
  roost::Flags f;
  CLI::App app(
      "rows_bench: a table of rows over the wire, closed loop "
      "(bench/rows_bench.sh runs it)");
  app.add_option("--addr", f.addr, "roost-server's lookup service");
  app.add_option("--table", f.table, "A table of rows");
  app.add_option("--mode", f.mode,
                 "rows, project, server-score, client-score or client-rows")
      ->check(CLI::IsMember(
          {"rows", "project", "server-score", "client-score", "client-rows"}));
  app.add_option("--batch", f.batch, "Keys per MultiGet");
  app.add_option("--keys", f.keys, "Keys in the table (drawn at random)");
  app.add_option("--key-prefix", f.key_prefix, "Keys' prefix");
  app.add_option("--key-digits", f.key_digits, "Keys' zero-padded digits");
  app.add_option("--fields", f.fields, "--mode project: the fields")
      ->delimiter(',');
  app.add_option("--score-field", f.score_field, "A float32_list field");
  app.add_option("--dim", f.dim, "Its dimension");
  app.add_option("--seconds", f.seconds, "Measured seconds");
  app.add_option("--warmup", f.warmup, "Seconds before measuring");
  app.add_option("--threads", f.threads, "Callers, each one call in flight");
  CLI11_PARSE(app, argc, argv);
  return roost::Run(f);
}
