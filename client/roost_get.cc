// roost-get: looks keys up in a table served by roost-server, or lists the
// tables it serves. See `roost-get --help`.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "client/rpc_util.h"
#include "client/table_listing.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "util/encoding.h"
#include "util/escape.h"
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
  const std::string value = EncodeValue(result.value(), value_encoding);
  std::fwrite(key_text.data(), 1, key_text.size(), stdout);
  std::fputc('\t', stdout);
  std::fwrite(value.data(), 1, value.size(), stdout);
  std::fputc('\n', stdout);
  return true;
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
  using namespace roost;
  CLI::App app{
      "roost-get: looks keys up in a table served by roost-server (one key: "
      "Get, several: one MultiGet), or lists the tables it serves.\n"
      "  roost-get [OPTIONS] TABLE KEY...\n"
      "  roost-get [OPTIONS] --list",
      "roost-get"};
  app.footer(
      "Output: for each key found, in the order given, a line KEY<TAB>VALUE "
      "on stdout, KEY as given and VALUE in --value-encoding (raw: the bytes "
      "as stored, which may hold tabs, newlines or zero bytes). A key not "
      "found prints nothing on stdout and `roost-get: \"KEY\": not found` on "
      "stderr. A failed call prints `roost-get: CODE: MESSAGE` on stderr, "
      "e.g. `roost-get: NOT_FOUND: no table \"x\"`.\n"
      "--list prints " +
      std::string(kTableListingHelp) +
      ".\n"
      "A key that starts with - goes after --: roost-get users -- -42\n"
      "\n"
      "Exit codes: 0 every key found (or the tables listed), 1 some key not "
      "found, 2 a call failed (server unreachable, no such table, deadline "
      "passed...), 64 bad usage (flags, arguments, bad hex or base64 in a "
      "key).");
  app.set_version_flag("--version", "roost-get 0.1.0");

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
