// roost-get: looks keys up in a table served by roost-server, or lists the
// tables it serves. See `roost-get --help`.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "client/cluster_client.h"
#include "client/cluster_layout.h"
#include "client/rpc_util.h"
#include "client/security_flags.h"
#include "client/table_listing.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "storage/row/row_codec.h"
#include "util/build_info.h"
#include "util/cli.h"
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
  std::string keys_file;          // one key a line; "-" is stdin
  // The most keys in one MultiGet: more are looked up in several, the
  // later ones from the version the first answered from.
  uint32_t max_batch = 10000;
  // A table of rows: only these fields (lookup.proto's Rows), and each row
  // printed as JSON.
  std::vector<std::string> fields;
  bool rows = false;
};

// The keys to look up, a batch at a time: the KEY arguments, or the lines
// of --keys-file (empty lines skipped), each as given, in --key-encoding.
class KeySource {
 public:
  // Reads `f.keys_file` if it is set, else gives `f.keys`. Errors name a
  // file that cannot be opened.
  static absl::StatusOr<std::unique_ptr<KeySource>> Open(const Flags& f) {
    auto source = std::unique_ptr<KeySource>(new KeySource(f));
    if (f.keys_file.empty() || f.keys_file == "-") return source;
    source->file_.open(f.keys_file, std::ios::binary);
    if (!source->file_) {
      return absl::NotFoundError(StrCat("cannot read --keys-file ", f.keys_file,
                                        ": ", std::strerror(errno)));
    }
    return source;
  }

  // Up to `n` more keys (as given) into *texts, and the line of the file
  // each came from into *lines (0 for an argument); false when none are
  // left.
  bool Next(size_t n, std::vector<std::string>* texts,
            std::vector<uint64_t>* lines) {
    texts->clear();
    lines->clear();
    if (f_.keys_file.empty()) {
      while (texts->size() < n && next_arg_ < f_.keys.size()) {
        texts->push_back(f_.keys[next_arg_++]);
        lines->push_back(0);
      }
      return !texts->empty();
    }
    std::istream& in = f_.keys_file == "-" ? std::cin : file_;
    std::string line;
    while (texts->size() < n && std::getline(in, line)) {
      ++line_;
      if (line.empty()) continue;
      texts->push_back(std::move(line));
      lines->push_back(line_);
    }
    return !texts->empty();
  }

  // "FILE:LINE: " ("stdin:LINE: "), or "" for line 0 (an argument).
  std::string Where(uint64_t line) const {
    if (line == 0) return "";
    return StrCat(f_.keys_file == "-" ? "stdin" : f_.keys_file, ":", line,
                  ": ");
  }

  // An error reading the file (not its end), as a message.
  std::optional<std::string> ReadError() const {
    if (f_.keys_file.empty()) return std::nullopt;
    const std::istream& in = f_.keys_file == "-"
                                 ? static_cast<const std::istream&>(std::cin)
                                 : file_;
    if (in.bad()) {
      return StrCat("cannot read --keys-file ", f_.keys_file, " after line ",
                    line_);
    }
    return std::nullopt;
  }

 private:
  explicit KeySource(const Flags& f) : f_(f) {}

  const Flags& f_;
  std::ifstream file_;
  size_t next_arg_ = 0;
  uint64_t line_ = 0;
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

// --rows: prints a found key's row as one line of JSON,
// {"key": KEY, "row": {FIELD: VALUE, ...}}, the key as it was given;
// "roost-get: KEY: not found" on stderr when not found. Returns whether it
// was found.
bool PrintRow(const std::string& key_text, const RowSchema& schema,
              const std::optional<std::string>& row) {
  if (!row) {
    std::fflush(stdout);
    fmt::print(stderr, "{}: {}: not found\n", kProgram, PrintableKey(key_text));
    return false;
  }
  OrderedJson line;
  line["key"] = key_text;
  line["row"] = RowToJson(schema, *row);
  const std::string text = DumpJson(line, false);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  return true;
}

// The routing client of --cluster FILE, or of the one server at --addr
// (an unsharded table is one shard); *tls says whether it speaks TLS.
absl::StatusOr<std::unique_ptr<ClusterClient>> MakeClusterClient(const Flags& f,
                                                                 bool* tls) {
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
  *tls = layout.security.tls;
  ClusterClientOptions options;
  options.timeout_seconds = f.timeout_seconds;
  options.hedge_delay_seconds = f.hedge_delay_seconds;
  return ClusterClient::Create(std::move(layout), options);
}

// A failed call of the routing client, as ReportRpcError reports a
// failed gRPC call (the codes are the same), with a hint when it spoke
// plaintext to what looks like a TLS port.
int ReportClusterError(const Flags& f, const absl::Status& status, bool tls) {
  const grpc::Status failed(static_cast<grpc::StatusCode>(status.code()),
                            std::string(status.message()));
  return ReportRpcError(
      kProgram, grpc::Status(failed.error_code(),
                             StrCat(failed.error_message(),
                                    TlsHint(failed, tls,
                                            /*layout=*/!f.cluster.empty()))));
}

void PrintVersion(const Flags& f, const std::string& version) {
  if (!f.show_version) return;
  std::fflush(stdout);
  fmt::print(stderr, "{}: version {}\n", kProgram,
             version.empty() ? "unknown (the server did not say)" : version);
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
  bool tls = false;
  auto client = MakeClusterClient(f, &tls);
  if (!client.ok()) {
    return ReportUsageError(kProgram, std::string(client.status().message()));
  }
  absl::StatusOr<ScanResult> r = (*client)->Scan(f.table, scan);
  if (!r.ok()) return ReportClusterError(f, r.status(), tls);
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

// Looks one batch of keys up on the one server at --addr, into *response:
// as a Get when `single`, else as a MultiGet from *version if that is not
// empty. *version gets the version that answered.
grpc::Status LookUpOnServer(const Flags& f, v1::Lookup::Stub& stub,
                            std::vector<std::string> keys, bool single,
                            std::string* version,
                            v1::MultiGetResponse* response) {
  grpc::ClientContext context;
  PrepareCall(&context, f.timeout_seconds, f.security);
  grpc::Status status;
  if (single) {
    // A Get's answer goes into `response` too: one loop prints both.
    v1::GetRequest request;
    request.set_table(f.table);
    request.set_key(std::move(keys[0]));
    request.set_version(*version);
    for (const std::string& field : f.fields) request.add_fields(field);
    status = stub.Get(&context, request, response->add_results());
    if (status.ok()) *version = response->results(0).version();
    return status;
  }
  v1::MultiGetRequest request;
  request.set_table(f.table);
  request.set_version(*version);
  for (const std::string& field : f.fields) request.add_fields(field);
  for (std::string& key : keys) request.add_keys(std::move(key));
  status = stub.MultiGet(&context, request, response);
  if (status.ok()) *version = response->version();
  return status;
}

// Looks the keys up a batch of at most --max-batch at a time, printing each
// batch's results before reading the next: the KEY arguments, or the lines
// of --keys-file. The batches after the first name the version the first
// answered from, so that the output is one version's, as one MultiGet's
// would be.
int RunGet(const Flags& f) {
  absl::StatusOr<std::unique_ptr<KeySource>> source = KeySource::Open(f);
  if (!source.ok()) {
    return ReportUsageError(kProgram, std::string(source.status().message()));
  }
  bool tls = UsesTls(f.security);
  std::unique_ptr<ClusterClient> cluster;
  std::unique_ptr<v1::Lookup::Stub> stub;
  // Rows are decoded by the routing client, of --addr's one server too.
  if (!f.cluster.empty() || f.rows) {
    auto client = MakeClusterClient(f, &tls);
    if (!client.ok()) {
      return ReportUsageError(kProgram, std::string(client.status().message()));
    }
    cluster = *std::move(client);
  } else {
    auto channel = MakeChannel(f.addr, f.security);
    if (!channel.ok()) {
      return ReportUsageError(kProgram,
                              std::string(channel.status().message()));
    }
    stub = v1::Lookup::NewStub(*channel);
  }

  int code = kExitOk;
  std::string version;  // the one the first batch was answered from
  std::vector<std::string> texts;
  std::vector<uint64_t> lines;
  size_t batches = 0;
  while ((*source)->Next(f.max_batch, &texts, &lines)) {
    std::vector<std::string> keys;
    keys.reserve(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      auto key = DecodeKey(texts[i], f.key_encoding);
      if (!key.ok()) {
        return ReportUsageError(kProgram,
                                StrCat((*source)->Where(lines[i]),
                                       std::string(key.status().message())));
      }
      keys.push_back(*std::move(key));
    }
    ++batches;
    CallOptions call;  // for the routing client
    call.version = version;
    call.fields = f.fields;
    if (cluster && f.rows) {
      absl::StatusOr<RowsResult> r = cluster->MultiGetRows(f.table, keys, call);
      if (!r.ok()) return ReportClusterError(f, r.status(), tls);
      version = r->version;
      for (size_t i = 0; i < keys.size(); ++i) {
        if (!PrintRow(texts[i], r->schema, r->rows[i])) code = kExitNotFound;
      }
      continue;
    }
    if (cluster) {
      absl::StatusOr<MultiGetResult> r = cluster->MultiGet(f.table, keys, call);
      if (!r.ok()) return ReportClusterError(f, r.status(), tls);
      version = r->version;
      v1::GetResponse result;
      for (size_t i = 0; i < keys.size(); ++i) {
        result.set_found(r->results[i].found);
        result.set_value(std::move(r->results[i].value));
        if (!PrintResult(texts[i], result, f.value_encoding)) {
          code = kExitNotFound;
        }
      }
      continue;
    }
    // One key given as an argument is a Get; anything else MultiGets.
    const bool single = f.keys_file.empty() && f.keys.size() == 1;
    v1::MultiGetResponse response;
    grpc::Status status =
        LookUpOnServer(f, *stub, std::move(keys), single, &version, &response);
    if (!status.ok()) {
      if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
          status.error_message().find("--max-batch") != std::string::npos) {
        status = grpc::Status(
            status.error_code(),
            StrCat(status.error_message(),
                   " (roost-get --max-batch N sends at most N keys a call)"));
      }
      return ReportRpcError(kProgram, status, f.security);
    }
    if (static_cast<size_t>(response.results_size()) != texts.size()) {
      std::fflush(stdout);
      fmt::print(stderr, "{}: the server answered {} results for {} keys\n",
                 kProgram, response.results_size(), texts.size());
      return kExitRpcFailed;
    }
    for (int i = 0; i < response.results_size(); ++i) {
      if (!PrintResult(texts[i], response.results(i), f.value_encoding)) {
        code = kExitNotFound;
      }
    }
  }
  if (std::optional<std::string> error = (*source)->ReadError()) {
    std::fflush(stdout);
    return ReportUsageError(kProgram, *error);
  }
  if (batches == 0) {
    return ReportUsageError(kProgram, StrCat("--keys-file ", f.keys_file,
                                             " holds no key (one key a line)"));
  }
  if (cluster) PrintVersion(f, version);
  return code;
}

}  // namespace
}  // namespace roost

int main(int argc, char** argv) {
  roost::TurnOffMutexDeadlockDetection();
  using namespace roost;
  // First: ended last, after every channel.
  const GrpcLibraryScope grpc_library;
  CLI::App app{
      "roost-get: looks keys up in a table served by roost-server (one key: "
      "Get, several: MultiGets of up to --max-batch keys), or in a sharded "
      "cluster of them (--cluster), reads a block table in key order "
      "(--scan), or lists the tables a server serves.\n"
      "  roost-get [OPTIONS] TABLE KEY...\n"
      "  roost-get [OPTIONS] TABLE --keys-file FILE   (- for stdin)\n"
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
      "--keys-file FILE: one key a line, in --key-encoding (hex or base64 "
      "for keys that hold newlines), empty lines skipped; each batch of "
      "--max-batch keys is looked up and printed before the next is read. "
      "More keys than --max-batch are looked up in several MultiGets, the "
      "later ones from the table version the first answered from.\n"
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
      "Examples:\n"
      "  roost-get users user:000042\n"
      "  roost-get --addr 10.0.0.5:50051 --tls-ca ca.crt users user:000042 "
      "user:000043\n"
      "  cut -f1 users.tsv | roost-get users --keys-file - > found.tsv\n"
      "  roost-get --key-encoding hex --value-encoding base64 fixed "
      "3030303030303432\n"
      "  roost-get --cluster cluster.json --show-version users user:000042\n"
      "  roost-get --scan --prefix user:0000 --limit 100 events\n"
      "  roost-get --list\n"
      "\n"
      "Exit codes: 0 every key found (or the tables listed), 1 some key not "
      "found, 2 a call failed (server unreachable, no such table, deadline "
      "passed...), 64 bad usage (flags, arguments, bad hex or base64 in a "
      "key).");
  AddVersionFlag(app, VersionLine("roost-get"));

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
  app.add_option("--keys-file", f.keys_file,
                 "Look up the keys in this file, one a line (- for stdin), "
                 "instead of KEY arguments")
      ->type_name("FILE");
  app.add_option("--max-batch", f.max_batch,
                 "Most keys in one MultiGet: more are looked up in several "
                 "(at most the server's --max-batch)")
      ->type_name("N")
      ->capture_default_str();
  std::string fields_text;
  app.add_option("--fields", fields_text,
                 "A table of rows (roost-load build --rows): look up only "
                 "these fields, comma-separated, in this order (values are "
                 "then rows of those fields)")
      ->type_name("NAME,...")
      ->group("Rows");
  app.add_flag("--rows", f.rows,
               "A table of rows: print each row found as a line of JSON, "
               "{\"key\": KEY, \"row\": {FIELD: VALUE, ...}} (bytes in "
               "base64), instead of KEY<TAB>VALUE")
      ->group("Rows");
  app.add_option("TABLE", f.table, "Table to look the keys up in");
  app.add_option("KEY", f.keys, "Keys to look up, in --key-encoding");

  if (std::optional<int> exit = ParseCommandLine(app, argc, argv)) {
    return *exit;
  }
  if (!(f.timeout_seconds > 0)) {
    return ReportUsageError(kProgram, "--timeout must be more than 0 seconds");
  }
  for (size_t begin = 0; !fields_text.empty();) {
    const size_t end =
        std::min(fields_text.find(',', begin), fields_text.size());
    f.fields.push_back(fields_text.substr(begin, end - begin));
    if (end == fields_text.size()) break;
    begin = end + 1;
  }
  if (!(f.hedge_delay_seconds >= 0)) {
    return ReportUsageError(kProgram, "--hedge-delay must not be negative");
  }
  if (f.max_batch == 0) {
    return ReportUsageError(kProgram, "--max-batch must be at least 1");
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
    if (app.count("TABLE") == 0 || !f.keys.empty() || !f.keys_file.empty()) {
      return ReportUsageError(kProgram, "--scan takes a TABLE and no KEY");
    }
    return RunScan(f);
  }
  if (f.list) {
    if (app.count("TABLE") > 0 || !f.keys_file.empty()) {
      return ReportUsageError(kProgram, "--list takes no TABLE or KEY");
    }
    return PrintTableListing(kProgram, f.addr, f.timeout_seconds, f.security);
  }
  if (!f.keys_file.empty() && !f.keys.empty()) {
    return ReportUsageError(kProgram, "give KEYs or --keys-file, not both");
  }
  if (app.count("TABLE") == 0 || (f.keys.empty() && f.keys_file.empty())) {
    return ReportUsageError(
        kProgram,
        "give a TABLE and at least one KEY (or --keys-file), or "
        "--list");
  }
  return RunGet(f);
}
