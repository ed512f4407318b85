// roost-admin: rolls a table served by roost-server back to an older
// version, removes the pin, and lists the tables. See `roost-admin --help`.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "client/rpc_util.h"
#include "client/table_listing.h"
#include "roost/v1/admin.grpc.pb.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr char kProgram[] = "roost-admin";

struct Flags {
  std::string addr = kDefaultAdminAddr;
  std::string lookup_addr = kDefaultLookupAddr;
  double timeout_seconds = kDefaultTimeoutSeconds;
  ChannelSecurity security;
  std::string table;
  std::string version;  // rollback: "v000003", "3", or empty for the previous
};

// A version as the server takes it: "v" and digits, or digits alone.
bool IsVersion(const std::string& text) {
  const size_t digits = !text.empty() && text[0] == 'v' ? 1 : 0;
  if (text.size() == digits) return false;
  for (size_t i = digits; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

int RunRollback(const Flags& f) {
  if (!f.version.empty() && !IsVersion(f.version)) {
    return ReportUsageError(kProgram,
                            StrCat("bad VERSION ", PrintableKey(f.version),
                                   " (like v000003 or 3)"));
  }
  auto channel = MakeChannel(f.addr, f.security);
  if (!channel.ok()) {
    return ReportUsageError(kProgram, std::string(channel.status().message()));
  }
  auto stub = v1::Admin::NewStub(*channel);
  grpc::ClientContext context;
  PrepareCall(&context, f.timeout_seconds, f.security);
  v1::RollbackRequest request;
  request.set_table(f.table);
  request.set_version(f.version);
  v1::RollbackResponse response;
  const grpc::Status status = stub->Rollback(&context, request, &response);
  if (!status.ok()) return ReportRpcError(kProgram, status);
  std::string line =
      StrCat(f.table, ": now serving ", response.serving_version());
  if (response.previous_version() == response.serving_version()) {
    line += " (already served; now pinned)";
  } else if (!response.previous_version().empty()) {
    line += StrCat(" (rolled back from ", response.previous_version(), ")");
  }
  fmt::print("{}\n", line);
  return kExitOk;
}

int RunUnpin(const Flags& f) {
  auto channel = MakeChannel(f.addr, f.security);
  if (!channel.ok()) {
    return ReportUsageError(kProgram, std::string(channel.status().message()));
  }
  auto stub = v1::Admin::NewStub(*channel);
  grpc::ClientContext context;
  PrepareCall(&context, f.timeout_seconds, f.security);
  v1::UnpinRequest request;
  request.set_table(f.table);
  v1::UnpinResponse response;
  const grpc::Status status = stub->Unpin(&context, request, &response);
  if (!status.ok()) return ReportRpcError(kProgram, status);
  if (response.serving_version().empty()) {
    fmt::print("{}: unpinned, no version servable\n", f.table);
  } else {
    fmt::print("{}: now serving {} (unpinned)\n", f.table,
               response.serving_version());
  }
  return kExitOk;
}

}  // namespace
}  // namespace roost

int main(int argc, char** argv) {
  using namespace roost;
  CLI::App app{
      "roost-admin: pins a table served by roost-server to an older version "
      "(rollback), removes the pin (unpin), and lists the tables (tables).\n"
      "  roost-admin [OPTIONS] rollback TABLE [VERSION]\n"
      "  roost-admin [OPTIONS] unpin TABLE\n"
      "  roost-admin [OPTIONS] tables",
      "roost-admin"};
  app.footer(
      "rollback and unpin call the admin service (--addr), tables the lookup "
      "service (--lookup-addr); the options may also follow the subcommand. "
      "A rollback survives restarts, and the version rolled back from is "
      "never served again automatically, not even after unpin.\n"
      "A failed call prints `roost-admin: CODE: MESSAGE` on stderr, e.g. "
      "`roost-admin: NOT_FOUND: no table \"x\"`.\n"
      "\n"
      "Exit codes: 0 ok, 2 a call failed (server unreachable, no such table "
      "or version, deadline passed...), 64 bad usage.");
  app.set_version_flag("--version", "roost-admin 0.1.0");
  app.require_subcommand(1);
  app.fallthrough();  // the flags below also work after the subcommand

  Flags f;
  app.add_option("--addr", f.addr,
                 "Admin service of roost-server (its --admin-listen), "
                 "for rollback and unpin")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  app.add_option("--lookup-addr", f.lookup_addr,
                 "Lookup service of roost-server (its --listen), for tables")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  app.add_option("--timeout", f.timeout_seconds,
                 "Deadline of the call, in seconds")
      ->type_name("SECONDS")
      ->capture_default_str();
  AddSecurityOptions(&app, &f.security);

  CLI::App* rollback = app.add_subcommand(
      "rollback",
      "Serve an older version of TABLE, pinned, and mark the version served "
      "until now as rolled back from. Prints `TABLE: now serving VERSION "
      "(rolled back from PREVIOUS)`.");
  rollback->add_option("TABLE", f.table, "Table to roll back")->required();
  rollback->add_option("VERSION", f.version,
                       "Version to serve, like v000003 or 3 (default: the "
                       "newest complete version older than the one served)");
  CLI::App* unpin = app.add_subcommand(
      "unpin",
      "Remove TABLE's pin: it serves its newest complete version that was "
      "not rolled back from. Prints `TABLE: now serving VERSION "
      "(unpinned)`.");
  unpin->add_option("TABLE", f.table, "Table to unpin")->required();
  CLI::App* tables = app.add_subcommand(
      "tables", "List the tables served (as roost-get --list): " +
                    std::string(kTableListingHelp) + ".");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (!(f.timeout_seconds > 0)) {
    return ReportUsageError(kProgram, "--timeout must be more than 0 seconds");
  }
  if (rollback->parsed()) return RunRollback(f);
  if (unpin->parsed()) return RunUnpin(f);
  if (tables->parsed()) {
    return PrintTableListing(kProgram, f.lookup_addr, f.timeout_seconds,
                             f.security);
  }
  return kExitUsage;  // not reached: require_subcommand(1)
}
