// The four programs' command lines, end to end (issue 30, items 15, 16
// and 22): an argument nothing takes is named with the closest flag or
// subcommand; a program-wide --version never swallows a subcommand;
// roost-server takes sizes with units as roost-load does; each --help
// shows its own examples, roost-server's in groups; roost-admin refuses
// the address of a service a command does not call; roost-get reads keys
// from a file or stdin and splits them into batches; the example config
// files hold only what the server takes. The real binaries, no mocks.

#include <gmock/gmock.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/harness/server_harness.h"
#include "util/build_info.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The text of the page PATH (from the source tree) from BEGIN to END,
// two headings of it.
std::string Section(const std::string& path, const std::string& begin,
                    const std::string& end) {
  const std::string doc = ReadFile(StrCat(ROOST_SOURCE_DIR, path));
  const size_t from = doc.find(begin);
  const size_t to = doc.find(end, from);
  EXPECT_NE(from, std::string::npos) << path << begin;
  EXPECT_NE(to, std::string::npos) << path << end;
  if (from == std::string::npos || to == std::string::npos) return "";
  return doc.substr(from, to - from);
}

// The long flags named in the first cell of each row of the flag tables of
// a Section (rows that start "| `-").
std::set<std::string> FlagTable(const std::string& path,
                                const std::string& begin,
                                const std::string& end) {
  std::istringstream table(Section(path, begin, end));
  const std::regex flag_name("`?(--[a-z0-9-]+)");
  std::set<std::string> flags;
  for (std::string line; std::getline(table, line);) {
    if (line.rfind("| `-", 0) != 0) continue;
    const std::string first_cell = line.substr(0, line.find(" | "));
    for (std::sregex_iterator it(first_cell.begin(), first_cell.end(),
                                 flag_name);
         it != std::sregex_iterator(); ++it) {
      flags.insert((*it)[1].str());
    }
  }
  return flags;
}

// The long flags a --help lists (CLI11: "  --name ..." or "  -x,--name
// ..."), but --help itself.
std::set<std::string> HelpFlags(const std::string& help) {
  std::istringstream lines(help);
  const std::regex flag_line("^  (?:-[a-zA-Z],)?(--[a-z0-9-]+).*");
  std::set<std::string> flags;
  std::smatch match;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, match, flag_line) && match[1] != "--help") {
      flags.insert(match[1].str());
    }
  }
  return flags;
}

std::set<std::string> Union(std::set<std::string> a,
                            const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

constexpr int kExitUsage = 64;
constexpr char kRunHelp[] = "Run with --help for more information.\n";

ProcessResult RunTool(const char* binary, std::vector<std::string> args) {
  args.insert(args.begin(), binary);
  return RunProcess(args);
}

class CliTest : public ServerFixture {};

// Item 22: `--inptu` said "--input is required", `biuld` "A subcommand is
// required".
TEST_F(CliTest, UnknownFlagsAndSubcommandsAreNamedWithTheClosest) {
  struct Case {
    const char* binary;
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {RoostLoadBinary(),
       {"build", "--inptu", "in.tsv", "-o", "t.sst"},
       "roost-load: build: unknown flag --inptu (did you mean --input?)\n"},
      {RoostLoadBinary(),
       {"biuld", "-i", "in.tsv"},
       "roost-load: unknown subcommand \"biuld\" (did you mean build?)\n"},
      {RoostLoadBinary(),
       {"frobnicate"},
       "roost-load: unknown subcommand \"frobnicate\" (one of build, "
       "inspect, verify, get, versions, rollback, prune, claim, publish)\n"},
      // (build and publish take a --version V of their own: the claimed
      // version of build --shard.)
      {RoostLoadBinary(),
       {"verify", "--version"},
       "roost-load: verify: unknown flag --version (--version is "
       "roost-load's: give it before verify)\n"},
      {RoostServerBinary(),
       {"--data-dri", "/srv/roost"},
       "roost-server: unknown flag --data-dri (did you mean --data-dir?)\n"},
      {RoostServerBinary(),
       {"--data-dir", "/srv/roost", "--max-mesage-size=64M"},
       "roost-server: unknown flag --max-mesage-size (did you mean "
       "--max-message-size?)\n"},
      {RoostGetBinary(),
       {"--adr", "127.0.0.1:1", "t", "k"},
       "roost-get: unknown flag --adr (did you mean --addr?)\n"},
      {RoostAdminBinary(),
       {"tabels"},
       "roost-admin: unknown subcommand \"tabels\" (did you mean tables?)\n"},
      {RoostAdminBinary(),
       {"wait", "--cluster", "c.json", "--table", "t", "--for-verison", "3"},
       "roost-admin: wait: unknown flag --for-verison (did you mean "
       "--for-version?)\n"},
      {RoostAdminBinary(),
       {"rollback", "t", "v1", "v2"},
       "roost-admin: rollback: unexpected argument \"v2\"\n"},
  };
  for (const Case& c : cases) {
    std::string command = c.binary;
    for (const std::string& arg : c.args) command += " " + arg;
    SCOPED_TRACE(command);
    const ProcessResult r = RunTool(c.binary, c.args);
    EXPECT_EQ(r.exit_code, kExitUsage);
    EXPECT_EQ(r.err, c.error + kRunHelp);
    EXPECT_EQ(r.out, "");
  }
}

// Item 16: `roost-admin --version v000003 wait ...` printed the program's
// version and exited 0 without waiting.
TEST_F(CliTest, VersionNeverSwallowsASubcommand) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"--version", "v000003", "wait", "--cluster", "cluster.json",
            "--table", "users"},
           {"tables", "--version"}}) {
    const ProcessResult r = RunTool(RoostAdminBinary(), args);
    EXPECT_EQ(r.exit_code, kExitUsage) << r.out;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err,
              StrCat("roost-admin: --version prints roost-admin's version and "
                     "takes no subcommand or argument (roost-admin --version); "
                     "the version that `wait` waits for is its "
                     "--for-version: roost-admin wait --cluster FILE --table "
                     "TABLE --for-version VERSION\n",
                     kRunHelp));
  }
  const ProcessResult load = RunTool(RoostLoadBinary(), {"--version", "build"});
  EXPECT_EQ(load.exit_code, kExitUsage) << load.out;
  EXPECT_THAT(load.err, HasSubstr("roost-load: --version prints roost-load's "
                                  "version and takes no subcommand"));

  // Alone, or among options (the container image's entrypoint gives
  // --config first), it prints the version.
  const std::string config = scratch_.File("server.toml");
  WriteFile(config, "data-dir = \"/nonexistent\"\n");
  for (auto [binary, name, args] : std::vector<
           std::tuple<const char*, const char*, std::vector<std::string>>>{
           {RoostLoadBinary(), "roost-load", {"--version"}},
           {RoostServerBinary(), "roost-server", {"--version"}},
           {RoostServerBinary(),
            "roost-server",
            {"--config", config, "--version"}},
           {RoostGetBinary(), "roost-get", {"--version"}},
           {RoostAdminBinary(), "roost-admin", {"--version"}}}) {
    const ProcessResult r = RunTool(binary, args);
    EXPECT_EQ(r.exit_code, 0) << name << r.err;
    EXPECT_EQ(r.out, VersionLine(name) + "\n");
  }
}

// Item 15: `roost-admin --addr ADMIN_PORT tables` listed the tables of
// whatever served the default --lookup-addr.
TEST_F(CliTest, RoostAdminRefusesTheAddressOfAServiceItDoesNotCall) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  const std::string admin = server.admin_address();
  const std::string lookup = server.lookup_address();
  const std::string tables_error =
      "roost-admin: tables asks the lookup service: give its address as "
      "--lookup-addr (the server's --listen); --addr is the admin service's, "
      "for rollback and unpin\n";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--addr", admin, "tables"},
                                             {"tables", "--addr", admin}}) {
    const ProcessResult r = RunTool(RoostAdminBinary(), args);
    EXPECT_EQ(r.exit_code, kExitUsage);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, tables_error + kRunHelp);
  }
  ProcessResult r = RunTool(RoostAdminBinary(), {"--addr", admin, "health"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("health asks the lookup service"));
  for (const char* command : {"rollback", "unpin"}) {
    r = RunTool(RoostAdminBinary(), {"--lookup-addr", lookup, command, "t"});
    EXPECT_EQ(r.exit_code, kExitUsage);
    EXPECT_EQ(r.err, StrCat("roost-admin: ", command,
                            " calls the admin service: give its address as "
                            "--addr (the server's --admin-listen); "
                            "--lookup-addr is the lookup service's, for "
                            "tables and health\n",
                            kRunHelp));
  }
  r = RunTool(RoostAdminBinary(),
              {"--lookup-addr", lookup, "wait", "--cluster", "c.json",
               "--table", "t", "--for-version", "1"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("wait asks every replica its --cluster file "
                               "lists: not --addr or --lookup-addr"));
  // Each with its own address works.
  r = RunTool(RoostAdminBinary(), {"--lookup-addr", lookup, "tables"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("t\tcuckoo\tv000001\t1\t"));
  r = RunTool(RoostAdminBinary(), {"--addr", admin, "unpin", "t"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "t: now serving v000001 (unpinned)\n");
}

// Item 22: `roost-server --max-message-size 64M` was refused where
// roost-load takes sizes with units.
TEST_F(CliTest, ServerSizesTakeUnits) {
  ASSERT_NE(
      BuildTable(data_, "t", {{"big", std::string(3000, 'v')}, {"small", "v"}}),
      "");
  // On the command line and in a config file (TOML strings).
  const std::string config = scratch_.File("server.toml");
  WriteFile(config,
            "max-message-size = \"2k\"\nmax-key-size = \"1k\"\n"
            "download-rate = \"10M\"\n");
  ServerFlags flags = Flags();
  flags.extra = {"--config",         config,  "--max-request-size",    "1M",
                 "--grpc-memory",    "64MiB", "--max-response-memory", "128M",
                 "--min-free-bytes", "1G"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  v1::GetResponse response;
  ASSERT_OK(server.Get("t", "small", &response));
  EXPECT_EQ(response.value(), "v");
  EXPECT_TRUE(IsError(server.Get("t", "big", &response),
                      grpc::StatusCode::RESOURCE_EXHAUSTED,
                      "the response would be larger than "
                      "--max-message-size (2048 bytes)"));
  EXPECT_TRUE(IsError(server.Get("t", std::string(1025, 'k'), &response),
                      grpc::StatusCode::INVALID_ARGUMENT,
                      "key is 1025 bytes, more than --max-key-size 1024"));

  // A bad size is a usage error naming the flag, and so is one out of the
  // flag's range.
  for (auto [flag, value, error] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--max-message-size", "64X",
            "roost-server: --max-message-size: bad size \"64X\""},
           {"--max-message-size", "2G",
            "--max-message-size: Value "
            "2147483648 not in range"},
           {"--download-rate", "-1", "--download-rate: bad size \"-1\""}}) {
    const ProcessResult r =
        RunTool(RoostServerBinary(),
                {"--data-dir", data_, "--listen", "127.0.0.1:0",
                 "--admin-listen=", "--metrics-listen=", flag, value});
    EXPECT_EQ(r.exit_code, kExitUsage) << flag << " " << value;
    EXPECT_THAT(r.err, HasSubstr(error));
  }
}

// Item 22: `roost-server --help` was 95 lines of range annotations with no
// grouping or examples.
TEST_F(CliTest, ServerHelpIsGroupedWithExamplesAndEveryFlag) {
  const ProcessResult help = RunTool(RoostServerBinary(), {"--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  size_t at = 0;
  for (const char* group :
       {"\nTables:\n", "\nListeners:\n", "\nTable repository:\n", "\nLimits:\n",
        "\nConnections:\n", "\nShutdown:\n", "\nMetrics:\n", "\nSecurity:\n",
        "\nExamples:\n  roost-server --data-dir /srv/roost\n"}) {
    const size_t found = help.out.find(group, at);
    EXPECT_NE(found, std::string::npos) << group << help.out;
    if (found != std::string::npos) at = found;
  }
  // No range after the types ("FLOAT:FLOAT in [0.05 - 86400]=5").
  EXPECT_THAT(help.out, Not(HasSubstr(" in [")));
  EXPECT_THAT(help.out, Not(HasSubstr("FLOAT")));
  EXPECT_THAT(help.out, HasSubstr("--poll-interval SECONDS=5 "));
  EXPECT_THAT(help.out, HasSubstr("--max-message-size BYTES=33554432"));

  // The guide's tables of roost-server's flags (docs/operations/
  // reference.md, "Flags"; the table repository's in cluster.md) and
  // --help name the same flags, both ways.
  const std::set<std::string> documented =
      Union(FlagTable("/docs/operations/reference.md", "\n## Flags\n",
                      "\n## Config file\n"),
            FlagTable("/docs/operations/cluster.md",
                      "\n## Pulling from a table repository\n",
                      "\n## Running a cluster\n"));
  EXPECT_GT(documented.size(), 40u);
  const std::set<std::string> listed = HelpFlags(help.out);
  for (const std::string& flag : documented) {
    EXPECT_TRUE(listed.count(flag)) << flag << " is in the guide, not --help";
  }
  for (const std::string& flag : listed) {
    EXPECT_TRUE(documented.count(flag))
        << flag << " is in --help, not in the guide's tables";
  }
}

// roost-load build's flags: its table in docs/operations/loading.md, and
// the repository's flags in cluster.md's "Publishing to a table
// repository", name every flag of `roost-load build --help`, and nothing
// else.
TEST_F(CliTest, LoadBuildHelpAndTheGuideNameTheSameFlags) {
  const ProcessResult help = RunTool(RoostLoadBinary(), {"build", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  const std::set<std::string> table =
      FlagTable("/docs/operations/loading.md", "\n### build\n",
                "\n### The data directory\n");
  EXPECT_GT(table.size(), 30u);
  const std::string publishing = Section("/docs/operations/cluster.md",
                                         "\n## Publishing to a table "
                                         "repository\n",
                                         "\n## Pulling from a table "
                                         "repository\n");
  const std::set<std::string> listed = HelpFlags(help.out);
  for (const std::string& flag : table) {
    EXPECT_TRUE(listed.count(flag)) << flag << " is in the guide, not --help";
  }
  for (const std::string& flag : listed) {
    EXPECT_TRUE(table.count(flag) ||
                publishing.find(StrCat("`", flag)) != std::string::npos)
        << flag << " is in --help, not in the guide";
  }
}

// Item 22: a subcommand's --help repeated every example of the program's.
TEST_F(CliTest, SubcommandHelpShowsItsOwnExamples) {
  const ProcessResult load = RunTool(RoostLoadBinary(), {"--help"});
  EXPECT_THAT(load.out, HasSubstr("  roost-load versions --repository "));
  const ProcessResult build = RunTool(RoostLoadBinary(), {"build", "--help"});
  EXPECT_EQ(build.exit_code, 0);
  EXPECT_THAT(build.out,
              HasSubstr("Examples:\n  roost-load build -i users.tsv -o "
                        "users.sst\n"));
  EXPECT_THAT(build.out, Not(HasSubstr("roost-load versions")));
  EXPECT_THAT(build.out, Not(HasSubstr("roost-load inspect")));
  const ProcessResult rollback =
      RunTool(RoostLoadBinary(), {"rollback", "--help"});
  EXPECT_THAT(rollback.out, HasSubstr("roost-load rollback --repository"));
  EXPECT_THAT(rollback.out, Not(HasSubstr("roost-load build")));

  const ProcessResult admin = RunTool(RoostAdminBinary(), {"--help"});
  EXPECT_THAT(admin.out, HasSubstr("  roost-admin rollback users "));
  const ProcessResult wait = RunTool(RoostAdminBinary(), {"wait", "--help"});
  EXPECT_EQ(wait.exit_code, 0);
  EXPECT_THAT(wait.out, HasSubstr("--for-version"));
  EXPECT_THAT(wait.out, HasSubstr("  roost-admin wait --cluster cluster.json "
                                  "--table users --for-version v000007"));
  EXPECT_THAT(wait.out, Not(HasSubstr("roost-admin rollback")));
  EXPECT_THAT(wait.out, Not(HasSubstr("Exit codes: 0 ok, 1 health")));
}

// Item 22: roost-get could not read keys from stdin or a file, and sent
// every key in one MultiGet, over the server's --max-batch.
TEST_F(CliTest, RoostGetReadsKeysFromAFileOrStdinInBatches) {
  KeyValues kvs;
  std::string lines, want;
  for (int i = 0; i < 23; ++i) {
    const std::string key = StrCat("key-", i);
    kvs[key] = StrCat("value-", i);
    lines += key + "\n";
    want += key + "\tvalue-" + std::to_string(i) + "\n";
    if (i == 10) lines += "absent\n\n";  // a miss, and an empty line skipped
  }
  ASSERT_NE(BuildTable(data_, "t", kvs), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-batch", "5"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  const std::string keys = scratch_.File("keys.txt");
  WriteFile(keys, lines.substr(0, lines.size() - 1));  // no final newline
  const std::string get = RoostGetBinary();
  const std::string addr = server.lookup_address();
  const std::string series =
      "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"MultiGet\","
      "grpc_service=\"roost.v1.Lookup\",grpc_type=\"unary\"}";
  const double before = MetricOr(server.ScrapeMetrics(), series);

  ProcessResult r = RunProcess(
      {get, "--addr", addr, "--max-batch", "5", "t", "--keys-file", keys});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // "absent" is not found
  EXPECT_EQ(r.out, want);
  EXPECT_EQ(r.err, "roost-get: \"absent\": not found\n");
  // 24 keys in batches of 5.
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(), series) - before, 5);

  // From stdin.
  r = RunProcess({"/bin/sh", "-c",
                  StrCat("exec \"$0\" --addr ", addr,
                         " --max-batch 5 t --keys-file - < ", keys),
                  get});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, want);

  // As arguments, 12 keys: in batches of 5; in one MultiGet of 12 the
  // server refuses, and the error says how to split them.
  std::vector<std::string> args = {get, "--addr", addr, "t"};
  std::string twelve;
  for (int i = 0; i < 12; ++i) {
    args.push_back(StrCat("key-", i));
    twelve += StrCat("key-", i, "\tvalue-", i, "\n");
  }
  args.insert(args.begin() + 1, {"--max-batch", "5"});
  r = RunProcess(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, twelve);
  args.erase(args.begin() + 1, args.begin() + 3);
  r = RunProcess(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("exceeds --max-batch 5 (roost-get --max-batch "
                               "N sends at most N keys a call)"));

  // Bad input: named with its file and line.
  const std::string hex = scratch_.File("hex.txt");
  WriteFile(hex, "6b65792d30\n6b65792d31\nzz\n");
  r = RunProcess(
      {get, "--addr", addr, "--key-encoding", "hex", "t", "--keys-file", hex});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr(StrCat("roost-get: ", hex, ":3: ")));
  r = RunProcess(
      {get, "--addr", addr, "t", "--keys-file", scratch_.File("nope.txt")});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("cannot read --keys-file "));
  r = RunProcess({get, "--addr", addr, "t", "k", "--keys-file", keys});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("give KEYs or --keys-file, not both"));
  const std::string empty = scratch_.File("empty.txt");
  WriteFile(empty, "\n");
  r = RunProcess({get, "--addr", addr, "t", "--keys-file", empty});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("holds no key"));
}

// The words of the comment lines right above `key = ` in a TOML file, as a
// list: "mmap, mmap-locked (needs ...) or huge-pages." gives mmap,
// mmap-locked and huge-pages (parentheses dropped, split at commas and
// " or ").
std::vector<std::string> ListInCommentAbove(const std::string& toml,
                                            const std::string& key) {
  std::vector<std::string> lines;
  std::istringstream in(toml);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  size_t at = 0;
  while (at < lines.size() && lines[at].rfind(key + " = ", 0) != 0) ++at;
  std::string comment;
  for (size_t i = at; i > 0 && lines[i - 1].rfind("#", 0) == 0; --i) {
    comment = lines[i - 1].substr(1) + " " + comment;
  }
  comment = std::regex_replace(comment, std::regex("\\([^)]*\\)"), "");
  comment = std::regex_replace(comment, std::regex(" or "), ",");
  std::vector<std::string> words;
  std::istringstream list(comment);
  for (std::string word; std::getline(list, word, ',');) {
    word = std::regex_replace(word, std::regex("^[ .]+|[ .]+$"), "");
    if (!word.empty()) words.push_back(word);
  }
  return words;
}

// Item 22: deploy/systemd/server.toml named a load mode "read" that the
// server refuses (exit 64, and RestartPreventExitStatus=64 keeps the unit
// down). Both example configs are the server's: every key, their load
// mode, and every load mode the comment above it offers.
TEST_F(CliTest, TheExampleConfigFilesHoldOnlyWhatTheServerTakes) {
  const std::string missing = scratch_.File("no-such-dir");
  for (const char* file :
       {"/deploy/systemd/server.toml", "/deploy/image/server.toml"}) {
    SCOPED_TRACE(file);
    const std::string toml = ReadFile(StrCat(ROOST_SOURCE_DIR, file));
    ASSERT_THAT(toml, HasSubstr("load-mode = "));
    std::vector<std::string> modes = ListInCommentAbove(toml, "load-mode");
    modes.push_back("");  // the file's own
    for (const std::string& mode : modes) {
      SCOPED_TRACE(mode);
      std::string config = toml;
      if (!mode.empty()) {
        config =
            std::regex_replace(config, std::regex("load-mode = \"[^\"]*\""),
                               StrCat("load-mode = \"", mode, "\""));
      }
      const std::string path = scratch_.File("server.toml");
      WriteFile(path, config);
      // Past every option, the server stops at the missing data directory
      // (exit 1), before binding a port.
      const ProcessResult r = RunTool(
          RoostServerBinary(), {"--config", path, "--data-dir", missing});
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_THAT(r.err, HasSubstr(missing + " does not exist"));
    }
  }
  EXPECT_EQ(ListInCommentAbove(ReadFile(StrCat(ROOST_SOURCE_DIR,
                                               "/deploy/systemd/server.toml")),
                               "load-mode")
                .size(),
            3u);
}

}  // namespace
}  // namespace roost::testing
