// roost-get: looks keys up in a table served by roost-server, or lists the
// tables it serves. See `roost-get --help`.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "client/cluster_client.h"
#include "client/cluster_layout.h"
#include "client/rpc_util.h"
#include "client/table_listing.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "util/build_info.h"
#include "util/encoding.h"
#include "util/escape.h"
#include "util/mutex_mode.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr char kProgram[] = "roost-get";

struct Flags {
  std::string addr = kDefaultLookupAddr;
  std::string key_encoding = "raw";
  std::string value_encoding = "raw";
  double timeout_seconds = kDefaultTimeoutSeconds;
  ChannelSecurity security;
  bool list = false;
  std::string cluster;  // layout file: route over a sharded cluster
  double hedge_delay_seconds = 0;
  bool show_version = false;
  bool scan = false;
  std::string start, end, prefix;  // --scan, in --key-encoding
  uint32_t limit = 0;
  std::string table;
  std::vector<std::string> keys;  // as given, in --key-encoding
};

// The bytes of the key given as `text`. Errors name the key as given.
absl::StatusOr<std::string> DecodeKey(const std::string& text,
                                      const std::string& encoding) {
  if (encoding == "hex") {
    return DecodeHex(text, StrCat("key ", PrintableKey(text)));
  }
  if (encoding == "base64") {
    return DecodeBase64(text, StrCat("key ", PrintableKey(text)));
  }
  return text;
}

std::string EncodeValue(const std::string& value, const std::string& encoding) {
  if (encoding == "hex") return EncodeHex(value);
  if (encoding == "base64") return EncodeBase64(value);
  return value;
}

// Writes "KEY<TAB>VALUE\n" whole, zero bytes included.
void PrintLine(const std::string& key, const std::string& value) {
  std::fwrite(key.data(), 1, key.size(), stdout);
  std::fputc('\t', stdout);
  std::fwrite(value.data(), 1, value.size(), stdout);
  std::fputc('\n', stdout);
}

// Prints one result: "KEY<TAB>VALUE" on stdout when found, the key as it was
// given and the value in --value-encoding; "roost-get: KEY: not found" on
// stderr when not. Returns whether it was found.
bool PrintResult(const std::string& key_text, const v1::GetResponse& result,
                 const std::string& value_encoding) {
  if (!result.found()) {
    std::fflush(stdout);  // keep the output in key order on a terminal
    fmt::print(stderr, "{}: {}: not found\n", kProgram, PrintableKey(key_text));
    return false;
  }
  // Keys and values are bytes: write them whole, zero bytes included.
  PrintLine(key_text, EncodeValue(result.value(), value_encoding));
  return true;
}

// The routing client of --cluster FILE, or of the one server at --addr
// (an unsharded table is one shard).
absl::StatusOr<std::unique_ptr<ClusterClient>> MakeClusterClient(
    const Flags& f) {
  ClusterLayout layout;
  if (f.cluster.empty()) {
    layout.shards = {{f.addr}};
    layout.security = f.security;
  } else {
    absl::StatusOr<ClusterLayout> read = ReadClusterLayout(f.cluster);
    if (!read.ok()) return read.status();
    layout = *std::move(read);
    layout.security.token = f.security.token;
  }
  ClusterClientOptions options;
  options.timeout_seconds = f.timeout_seconds;
  options.hedge_delay_seconds = f.hedge_delay_seconds;
  return ClusterClient::Create(std::move(layout), options);
}

// A failed call of the routing client, as ReportRpcError reports a
// failed gRPC call (the codes are the same).
int ReportClusterError(const absl::Status& status) {
  return ReportRpcError(
      kProgram, grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                             std::string(status.message())));
}

void PrintVersion(const Flags& f, const std::string& version) {
  if (!f.show_version) return;
  std::fflush(stdout);
  fmt::print(stderr, "{}: version {}\n", kProgram,
             version.empty() ? "unknown (the server did not say)" : version);
}

int RunClusterGet(const Flags& f, const std::vector<std::string>& keys) {
  auto client = MakeClusterClient(f);
  if (!client.ok()) {
    return ReportUsageError(kProgram, std::string(client.status().message()));
  }
  absl::StatusOr<MultiGetResult> r = (*client)->MultiGet(f.table, keys);
  if (!r.ok()) return ReportClusterError(r.status());
  int code = kExitOk;
  v1::GetResponse result;
  for (size_t i = 0; i < keys.size(); ++i) {
    result.set_found(r->results[i].found);
    result.set_value(std::move(r->results[i].value));
    if (!PrintResult(f.keys[i], result, f.value_encoding)) {
      code = kExitNotFound;
    }
  }
  PrintVersion(f, r->version);
  return code;
}

int RunScan(const Flags& f) {
  ScanOptions scan;
  scan.limit = f.limit;
  for (auto [text, out, flag] :
       {std::tuple{&f.start, &scan.start, "--start"},
        std::tuple{&f.end, &scan.end, "--end"},
        std::tuple{&f.prefix, &scan.prefix, "--prefix"}}) {
    auto bytes = DecodeKey(*text, f.key_encoding);
    if (!bytes.ok()) {
      return ReportUsageError(
          kProgram, StrCat(flag, ": ", std::string(bytes.status().message())));
    }
    *out = *std::move(bytes);
  }
  auto client = MakeClusterClient(f);
  if (!client.ok()) {
    return ReportUsageError(kProgram, std::string(client.status().message()));
  }
  absl::StatusOr<ScanResult> r = (*client)->Scan(f.table, scan);
  if (!r.ok()) return ReportClusterError(r.status());
  for (const ScanEntry& entry : r->entries) {
    PrintLine(EncodeValue(entry.key, f.key_encoding),
              EncodeValue(entry.value, f.value_encoding));
  }
  if (r->more) {
    std::fflush(stdout);
    fmt::print(stderr, "{}: more entries follow (resume after the last key)\n",
               kProgram);
  }
  PrintVersion(f, r->version);
  return kExitOk;
}

int RunGet(const Flags& f) {
  std::vector<std::string> keys;
  keys.reserve(f.keys.size());
  for (const std::string& text : f.keys) {
    auto key = DecodeKey(text, f.key_encoding);
    if (!key.ok()) {
      return ReportUsageError(kProgram, std::string(key.status().message()));
    }
    keys.push_back(*std::move(key));
  }
  if (!f.cluster.empty()) return RunClusterGet(f, keys);

  auto channel = MakeChannel(f.addr, f.security);
  if (!channel.ok()) {
    return ReportUsageError(kProgram, std::string(channel.status().message()));
  }
  auto stub = v1::Lookup::NewStub(*channel);
  grpc::ClientContext context;
  PrepareCall(&context, f.timeout_seconds, f.security);
  // A Get's answer goes into `response` too: one loop prints both.
  v1::MultiGetResponse response;
  if (keys.size() == 1) {
    v1::GetRequest request;
    request.set_table(f.table);
    request.set_key(keys[0]);
    const grpc::Status status =
        stub->Get(&context, request, response.add_results());
    if (!status.ok()) return ReportRpcError(kProgram, status);
  } else {
    v1::MultiGetRequest request;
    request.set_table(f.table);
    for (std::string& key : keys) request.add_keys(std::move(key));
    const grpc::Status status = stub->MultiGet(&context, request, &response);
    if (!status.ok()) return ReportRpcError(kProgram, status);
    if (static_cast<size_t>(response.results_size()) != f.keys.size()) {
      std::fflush(stdout);
      fmt::print(stderr, "{}: the server answered {} results for {} keys\n",
                 kProgram, response.results_size(), f.keys.size());
      return kExitRpcFailed;
    }
  }

  int code = kExitOk;
  for (int i = 0; i < response.results_size(); ++i) {
    if (!PrintResult(f.keys[i], response.results(i), f.value_encoding)) {
      code = kExitNotFound;
    }
  }
  return code;
}

}  // namespace
}  // namespace roost

int main(int argc, char** argv) {
  roost::TurnOffMutexDeadlockDetection();
  using namespace roost;
  CLI::App app{
      "roost-get: looks keys up in a table served by roost-server (one key: "
      "Get, several: one MultiGet), or in a sharded cluster of them "
      "(--cluster), reads a block table in key order (--scan), or lists the "
      "tables a server serves.\n"
      "  roost-get [OPTIONS] TABLE KEY...\n"
      "  roost-get [OPTIONS] --cluster FILE TABLE KEY...\n"
      "  roost-get [OPTIONS] [--cluster FILE] --scan [--start K] [--end K] "
      "[--prefix P] [--limit N] TABLE\n"
      "  roost-get [OPTIONS] --list",
      "roost-get"};
  app.footer(
      "Output: for each key found, in the order given, a line KEY<TAB>VALUE "
      "on stdout, KEY as given and VALUE in --value-encoding (raw: the bytes "
      "as stored, which may hold tabs, newlines or zero bytes). A key not "
      "found prints nothing on stdout and `roost-get: \"KEY\": not found` on "
      "stderr. A failed call prints `roost-get: CODE: MESSAGE` on stderr, "
      "e.g. `roost-get: NOT_FOUND: no table \"x\"`.\n"
      "--scan prints KEY<TAB>VALUE for each entry in key order, KEY in "
      "--key-encoding and VALUE in --value-encoding, and, when --limit "
      "stopped it with keys left, `roost-get: more entries follow (resume "
      "after the last key)` on stderr.\n"
      "--cluster FILE: the layout of a sharded cluster, JSON: {\"shards\": "
      "[[\"host:port\", ...replicas of shard 0], [...shard 1], ...], "
      "\"tls\": {\"ca\": FILE, \"cert\": FILE, \"key\": FILE, "
      "\"server_name\": NAME}} (tls optional: plaintext without it; TLS "
      "comes from the file, not from --tls*; relative files are read beside "
      "the layout). Each key goes to its shard, the shards are asked at once, "
      "a failed replica is retried on another, and the answer comes from one "
      "table version on every shard (--show-version prints it). A layout "
      "that does not match the table fails FAILED_PRECONDITION (`stale "
      "cluster layout: ...`).\n"
      "--list prints " +
      std::string(kTableListingHelp) +
      ".\n"
      "A key that starts with - goes after --: roost-get users -- -42\n"
      "\n"
      "Exit codes: 0 every key found (or the tables listed), 1 some key not "
      "found, 2 a call failed (server unreachable, no such table, deadline "
      "passed...), 64 bad usage (flags, arguments, bad hex or base64 in a "
      "key).");
  app.set_version_flag("--version", VersionLine("roost-get"));

  Flags f;
  app.add_option("--addr", f.addr,
                 "Lookup service of roost-server (its --listen)")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  app.add_option("--key-encoding", f.key_encoding,
                 "How KEYs are given: raw bytes, hex or base64 (standard "
                 "alphabet, padding optional)")
      ->check(CLI::IsMember({"raw", "hex", "base64"}))
      ->capture_default_str();
  app.add_option("--value-encoding", f.value_encoding,
                 "How values are printed: raw bytes, hex (lowercase) or "
                 "base64 (standard alphabet, padded)")
      ->check(CLI::IsMember({"raw", "hex", "base64"}))
      ->capture_default_str();
  app.add_option("--timeout", f.timeout_seconds,
                 "Deadline of the call, in seconds")
      ->type_name("SECONDS")
      ->capture_default_str();
  AddSecurityOptions(&app, &f.security);
  app.add_flag("--list", f.list,
               "List the tables served instead of looking keys up");
  app.add_option("--cluster", f.cluster,
                 "Route over the sharded cluster this layout file describes "
                 "(see below) instead of --addr")
      ->type_name("FILE")
      ->group("Cluster");
  app.add_option("--hedge-delay", f.hedge_delay_seconds,
                 "With --cluster or --scan: when a shard has not answered "
                 "after SECONDS, ask another replica too (0: never)")
      ->type_name("SECONDS")
      ->group("Cluster")
      ->capture_default_str();
  app.add_flag("--show-version", f.show_version,
               "With --cluster or --scan: print `roost-get: version VERSION` "
               "(the table version that answered) on stderr")
      ->group("Cluster");
  app.add_flag("--scan", f.scan,
               "Read TABLE (a block table) in key order instead of looking "
               "keys up; over every shard with --cluster")
      ->group("Scan");
  app.add_option("--start", f.start,
                 "--scan from this key on (inclusive), in --key-encoding")
      ->type_name("KEY")
      ->group("Scan");
  app.add_option("--end", f.end,
                 "--scan up to this key (exclusive), in --key-encoding")
      ->type_name("KEY")
      ->group("Scan");
  app.add_option("--prefix", f.prefix,
                 "--scan only keys that begin with this, in --key-encoding")
      ->type_name("KEY")
      ->group("Scan");
  app.add_option("--limit", f.limit,
                 "--scan at most this many entries (0: the server's "
                 "--max-scan-keys per shard)")
      ->type_name("N")
      ->group("Scan")
      ->capture_default_str();
  app.add_option("TABLE", f.table, "Table to look the keys up in");
  app.add_option("KEY", f.keys, "Keys to look up, in --key-encoding");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (!(f.timeout_seconds > 0)) {
    return ReportUsageError(kProgram, "--timeout must be more than 0 seconds");
  }
  if (!(f.hedge_delay_seconds >= 0)) {
    return ReportUsageError(kProgram, "--hedge-delay must not be negative");
  }
  if (!f.cluster.empty() &&
      (f.security.tls || !f.security.ca.empty() || !f.security.cert.empty() ||
       !f.security.key.empty() || !f.security.server_name.empty())) {
    return ReportUsageError(kProgram,
                            "with --cluster, TLS is the layout file's "
                            "\"tls\", not --tls*");
  }
  if (!f.scan && (app.count("--start") + app.count("--end") +
                      app.count("--prefix") + app.count("--limit") >
                  0)) {
    return ReportUsageError(kProgram,
                            "--start, --end, --prefix and --limit go with "
                            "--scan");
  }
  if (f.list && (f.scan || !f.cluster.empty())) {
    return ReportUsageError(kProgram,
                            "--list lists one server's tables (--addr): not "
                            "with --scan or --cluster");
  }
  if (f.scan) {
    if (app.count("TABLE") == 0 || !f.keys.empty()) {
      return ReportUsageError(kProgram, "--scan takes a TABLE and no KEY");
    }
    return RunScan(f);
  }
  if (f.list) {
    if (app.count("TABLE") > 0) {
      return ReportUsageError(kProgram, "--list takes no TABLE or KEY");
    }
    return PrintTableListing(kProgram, f.addr, f.timeout_seconds, f.security);
  }
  if (app.count("TABLE") == 0 || f.keys.empty()) {
    return ReportUsageError(kProgram,
                            "give a TABLE and at least one KEY, or --list");
  }
  return RunGet(f);
}
