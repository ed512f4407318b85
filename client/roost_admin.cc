// roost-admin: rolls a table served by roost-server back to an older
// version, removes the pin, and lists the tables. See `roost-admin --help`.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "client/cluster_layout.h"
#include "client/cluster_wait.h"
#include "client/rpc_util.h"
#include "client/security_flags.h"
#include "client/table_listing.h"
#include "client/version_consensus.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "roost/v1/admin.grpc.pb.h"
#include "util/build_info.h"
#include "util/cli.h"
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
  // rollback: "v000003", "v3", "3", or empty for the previous; wait:
  // --for-version
  std::string version;
  // wait
  std::string cluster;
  double wait_timeout_seconds = 300;
  double interval_seconds = 0.5;
  // health
  std::string service;
};

// `roost-admin health`: the server answered, with another status than
// SERVING.
constexpr int kExitNotServing = 1;
// `roost-admin wait` timed out: some replica does not serve the version.
constexpr int kExitWaitTimedOut = 3;

// A version as people write it: "v000003", "v3" or "3" (as roost-load
// rollback --to takes it); std::nullopt for anything else, and for 0.
std::optional<uint64_t> ParseVersion(const std::string& text) {
  std::optional<uint64_t> n = VersionNumber(text);
  if (n == 0) return std::nullopt;
  return n;
}

int RunRollback(const Flags& f) {
  std::string version;  // as the server takes it: digits, or empty
  if (!f.version.empty()) {
    const std::optional<uint64_t> n = ParseVersion(f.version);
    if (!n) {
      return ReportUsageError(kProgram,
                              StrCat("bad VERSION ", PrintableKey(f.version),
                                     " (like v000003, v3 or 3)"));
    }
    version = StrCat(*n);
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
  request.set_version(version);
  v1::RollbackResponse response;
  const grpc::Status status = stub->Rollback(&context, request, &response);
  if (!status.ok()) return ReportRpcError(kProgram, status, f.security);
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
  if (!status.ok()) return ReportRpcError(kProgram, status, f.security);
  if (response.serving_version().empty()) {
    fmt::print("{}: unpinned, no version servable\n", f.table);
  } else {
    fmt::print("{}: now serving {} (unpinned)\n", f.table,
               response.serving_version());
  }
  return kExitOk;
}

// One Check of the standard health service on the lookup port, over the
// same plaintext or TLS as any call: a probe for where Kubernetes' own gRPC
// probe cannot go (it speaks plaintext only).
int RunHealth(const Flags& f) {
  auto channel = MakeChannel(f.lookup_addr, f.security);
  if (!channel.ok()) {
    return ReportUsageError(kProgram, std::string(channel.status().message()));
  }
  auto stub = grpc::health::v1::Health::NewStub(*channel);
  grpc::ClientContext context;
  PrepareCall(&context, f.timeout_seconds, f.security);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(f.service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return ReportRpcError(kProgram, status, f.security);
  fmt::print("{}\n", grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
                         response.status()));
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING
             ? kExitOk
             : kExitNotServing;
}

int RunWait(const Flags& f) {
  if (!ParseVersion(f.version)) {
    return ReportUsageError(
        kProgram, StrCat("bad --for-version ", PrintableKey(f.version),
                         " (like v000003, v3 or 3)"));
  }
  absl::StatusOr<ClusterLayout> layout = ReadClusterLayout(f.cluster);
  if (!layout.ok()) {
    return ReportUsageError(kProgram, std::string(layout.status().message()));
  }
  layout->security.token = f.security.token;
  const size_t shards = layout->shards.size();
  ClusterWaiter waiter(*std::move(layout));
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
          std::min(f.wait_timeout_seconds, 365.0 * 86400)));
  // The first round's calls have the whole main --timeout, so that
  // `--timeout 0` (ask once) gets a fair answer on a slow link rather than
  // a deadline of nothing; later rounds end by the wait's deadline.
  for (bool first = true;; first = false) {
    const double left =
        std::chrono::duration<double>(deadline - Clock::now()).count();
    const std::vector<ReplicaState> states = waiter.Poll(
        f.table, f.version,
        first ? f.timeout_seconds : std::clamp(left, 0.05, f.timeout_seconds));
    const size_t ready = std::count_if(states.begin(), states.end(),
                                       [](const auto& s) { return s.ready; });
    if (ready == states.size()) {
      fmt::print("{}: {} served by all {} replicas of {} shards\n", f.table,
                 f.version, states.size(), shards);
      return kExitOk;
    }
    if (Clock::now() >= deadline) {
      for (const ReplicaState& s : states) {
        if (s.ready) continue;
        if (s.replica.target.empty()) {
          fmt::print(stderr, "{}: {}\n", kProgram, s.what);
        } else if (s.replica.address == s.replica.target) {
          fmt::print(stderr, "{}: shard {} {}: {}\n", kProgram, s.replica.shard,
                     s.replica.target, s.what);
        } else {
          fmt::print(stderr, "{}: shard {} {} ({}): {}\n", kProgram,
                     s.replica.shard, s.replica.address, s.replica.target,
                     s.what);
        }
      }
      fmt::print(stderr,
                 "{}: timed out after {} s: {} of {} replicas do not serve "
                 "{} {}\n",
                 kProgram, f.wait_timeout_seconds, states.size() - ready,
                 states.size(), f.table, f.version);
      return kExitWaitTimedOut;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(
        std::clamp(f.interval_seconds, 0.0, std::max(left, 0.0))));
  }
}

}  // namespace
}  // namespace roost

int main(int argc, char** argv) {
  using namespace roost;
  // First: ended last, after every channel.
  const GrpcLibraryScope grpc_library;
  CLI::App app{
      "roost-admin: pins a table served by roost-server to an older version "
      "(rollback), removes the pin (unpin), lists the tables (tables), asks "
      "the server's health service (health), and waits until every replica "
      "of a cluster serves a version (wait).\n"
      "  roost-admin [--addr HOST:PORT] [OPTIONS] rollback TABLE [VERSION]\n"
      "  roost-admin [--addr HOST:PORT] [OPTIONS] unpin TABLE\n"
      "  roost-admin [--lookup-addr HOST:PORT] [OPTIONS] tables\n"
      "  roost-admin [--lookup-addr HOST:PORT] [OPTIONS] health [--service "
      "NAME]\n"
      "  roost-admin [OPTIONS] wait --cluster FILE --table TABLE "
      "--for-version VERSION [--timeout SECONDS]",
      "roost-admin"};
  app.footer(
      "rollback and unpin call the admin service (--addr, the server's "
      "--admin-listen), tables and health the lookup service (--lookup-addr, "
      "its --listen), wait every replica its --cluster file lists; a "
      "command given another's address is refused. The options may also "
      "follow the subcommand. A rollback survives restarts, and the version "
      "rolled back from is never served again automatically, not even after "
      "unpin.\n"
      "A failed call prints `roost-admin: CODE: MESSAGE` on stderr, e.g. "
      "`roost-admin: NOT_FOUND: no table \"x\"`.\n"
      "\n"
      "Examples:\n"
      "  roost-admin tables\n"
      "  roost-admin rollback users          # to the version before the "
      "served one\n"
      "  roost-admin --addr 127.0.0.1:7002 rollback users v3\n"
      "  roost-admin unpin users\n"
      "  roost-admin --lookup-addr 10.0.0.5:50051 --tls-ca ca.crt health\n"
      "  roost-admin wait --cluster cluster.json --table users "
      "--for-version v000007 --timeout 600\n"
      "Run `roost-admin COMMAND --help` for a command's own flags.\n"
      "\n"
      "Exit codes: 0 ok, 1 health answered another status than SERVING, 2 a "
      "call failed (server unreachable, no such table or version, deadline "
      "passed...), 3 wait timed out, 64 bad usage.");
  AddVersionFlag(app, VersionLine("roost-admin"),
                 "the version that `wait` waits for is its --for-version: "
                 "roost-admin wait --cluster FILE --table TABLE --for-version "
                 "VERSION");
  app.require_subcommand(1);
  app.fallthrough();  // the flags below also work after the subcommand

  Flags f;
  app.add_option("--addr", f.addr,
                 "Admin service of roost-server (its --admin-listen), "
                 "for rollback and unpin")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  app.add_option("--lookup-addr", f.lookup_addr,
                 "Lookup service of roost-server (its --listen), for tables "
                 "and health")
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
      "(rolled back from PREVIOUS)`. Calls the admin service (--addr).");
  rollback->add_option("TABLE", f.table, "Table to roll back")->required();
  rollback->add_option("VERSION", f.version,
                       "Version to serve, like v000003, v3 or 3 (default: the "
                       "newest complete version older than the one served)");
  rollback->footer(
      "Examples:\n"
      "  roost-admin rollback users\n"
      "  roost-admin --addr 127.0.0.1:7002 rollback users v3");
  CLI::App* unpin = app.add_subcommand(
      "unpin",
      "Remove TABLE's pin: it serves its newest complete version that was "
      "not rolled back from. Prints `TABLE: now serving VERSION "
      "(unpinned)`. Calls the admin service (--addr).");
  unpin->add_option("TABLE", f.table, "Table to unpin")->required();
  unpin->footer("Example:\n  roost-admin --addr 127.0.0.1:7002 unpin users");
  CLI::App* tables = app.add_subcommand(
      "tables", "List the tables served (as roost-get --list): " +
                    std::string(kTableListingHelp) +
                    ". Asks the lookup service (--lookup-addr).");
  tables->footer("Example:\n  roost-admin --lookup-addr 127.0.0.1:7001 tables");

  CLI::App* health = app.add_subcommand(
      "health",
      "Ask the server's gRPC health service (on --lookup-addr) about "
      "--service and print its status (SERVING, NOT_SERVING, "
      "SERVICE_UNKNOWN); exit 0 only for SERVING. Over TLS when the --tls "
      "options say so: a container probe where Kubernetes' gRPC probe, "
      "plaintext only, cannot go.");
  health
      ->add_option("--service", f.service,
                   "The service: roost.v1.Lookup (ready: every table "
                   "loaded), roost.v1.Registry (alive), "
                   "roost.v1.Lookup/TABLE, or empty for the server")
      ->capture_default_str();
  health->footer(
      "Examples:\n"
      "  roost-admin health\n"
      "  roost-admin --lookup-addr 10.0.0.5:50051 --tls-ca ca.crt health "
      "--service roost.v1.Lookup/users");

  CLI::App* wait = app.add_subcommand(
      "wait",
      "Wait until every replica of every shard of the cluster FILE lists "
      "(see roost-get --help) serves VERSION of TABLE, asking each one's "
      "ListTables every --interval; a dns:///NAME:PORT target is every "
      "address NAME resolves to, each asked on its own. Prints `TABLE: "
      "VERSION served by all N replicas of M shards`; on timeout, one line "
      "per replica that does not on stderr (`roost-admin: shard I TARGET: "
      "serves v000006`) and exits 3. A replica serving the version as "
      "another shard than the layout says does not count. TLS comes from "
      "the layout file's \"tls\", the token from --token or --token-file.");
  wait->add_option("--cluster", f.cluster, "The cluster layout file")
      ->type_name("FILE")
      ->required();
  wait->add_option("--table", f.table, "The table")->required();
  // --version too, after `wait` (where it cannot be roost-admin's own).
  wait->add_option("--for-version,--version", f.version,
                   "The version to wait for, like v000007, v7 or 7")
      ->type_name("VERSION")
      ->required();
  wait->add_option("--timeout", f.wait_timeout_seconds,
                   "Give up after this long; 0 asks once (each ListTables "
                   "call also has the main --timeout as its deadline, and "
                   "the first round all of it)")
      ->type_name("SECONDS")
      ->capture_default_str();
  wait->add_option("--interval", f.interval_seconds,
                   "Ask again after this long")
      ->type_name("SECONDS")
      ->capture_default_str();
  wait->footer(
      "Example:\n"
      "  roost-admin wait --cluster cluster.json --table users --for-version "
      "v000007 --timeout 600");

  if (std::optional<int> exit = ParseCommandLine(app, argc, argv)) {
    return *exit;
  }
  if (!(f.timeout_seconds > 0)) {
    return ReportUsageError(kProgram, "--timeout must be more than 0 seconds");
  }
  // One address per intent: a command refuses the address of a service it
  // does not call, rather than calling its own service at the default
  // address (`--addr ADMIN_PORT tables` listed whatever served the lookup
  // default).
  const bool admin_call = rollback->parsed() || unpin->parsed();
  const bool lookup_call = tables->parsed() || health->parsed();
  const std::string command = app.get_subcommands().front()->get_name();
  if (lookup_call && app.count("--addr") > 0) {
    return ReportUsageError(
        kProgram, StrCat(command,
                         " asks the lookup service: give its address as "
                         "--lookup-addr (the server's --listen); --addr is "
                         "the admin service's, for rollback and unpin"));
  }
  if (admin_call && app.count("--lookup-addr") > 0) {
    return ReportUsageError(
        kProgram, StrCat(command,
                         " calls the admin service: give its address as "
                         "--addr (the server's --admin-listen); --lookup-addr "
                         "is the lookup service's, for tables and health"));
  }
  if (wait->parsed()) {
    if (app.count("--addr") + app.count("--lookup-addr") > 0) {
      return ReportUsageError(kProgram,
                              "wait asks every replica its --cluster file "
                              "lists: not --addr or --lookup-addr");
    }
    if (f.security.tls || !f.security.ca.empty() || !f.security.cert.empty() ||
        !f.security.key.empty() || !f.security.server_name.empty()) {
      return ReportUsageError(kProgram,
                              "with wait, TLS is the --cluster file's "
                              "\"tls\", not --tls*");
    }
    if (!(f.wait_timeout_seconds >= 0) || !(f.interval_seconds > 0)) {
      return ReportUsageError(kProgram,
                              "wait: --timeout must not be negative and "
                              "--interval must be more than 0");
    }
    return RunWait(f);
  }
  if (rollback->parsed()) return RunRollback(f);
  if (unpin->parsed()) return RunUnpin(f);
  if (health->parsed()) return RunHealth(f);
  if (tables->parsed()) {
    return PrintTableListing(kProgram, f.lookup_addr, f.timeout_seconds,
                             f.security);
  }
  return kExitUsage;  // not reached: require_subcommand(1)
}
