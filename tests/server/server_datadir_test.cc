// roost-server end to end: what an entry in the data directory can do to it.
// No file, directory, link or copy in DATA_DIR may kill the server, wedge
// its registry, make it write where it should not, grow its memory without
// bound or hold back tables it has nothing to do with. See
// tests/harness/server_harness.h.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "tests/harness/server_harness.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;
using HealthStatus = grpc::health::v1::HealthCheckResponse;

class DataDirTest : public ServerFixture {
 protected:
  // Lets `path` and its parents up to the scratch directory be searched by
  // anyone (mkdtemp makes the scratch directory private).
  void OpenUpTo(const std::string& path) {
    for (fs::path p = path;
         p.string().size() >= scratch_.path().string().size();
         p = p.parent_path()) {
      ::chmod(p.c_str(), 0755);
      if (p == scratch_.path()) break;
    }
  }
};

bool UnderSanitizers() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#else
  return false;
#endif
}

uint64_t AnonymousMemory(pid_t pid) {
  const std::string status = ReadFile(StrCat("/proc/", pid, "/status"));
  const size_t at = status.find("RssAnon:");
  return at == std::string::npos
             ? 0
             : std::strtoull(status.c_str() + at + 8, nullptr, 10) << 10;
}

// Defect 8: a served table file truncated or copied over in place killed
// the server with SIGBUS at its next lookup (mmap and mmap-locked), and a
// same-size overwrite was served silently. The server holds a read lease on
// every served file: the writer waits while the version is dropped and
// unmapped, other tables never notice, and the table falls back to the
// version before.
struct Change {
  std::string load_mode;
  std::string format;
  std::string how;  // "truncate" or "cp"
};
void PrintTo(const Change& c, std::ostream* os) {
  *os << c.load_mode << "/" << c.format << "/" << c.how;
}
class ServedFileChangeTest : public DataDirTest,
                             public ::testing::WithParamInterface<Change> {};

TEST_P(ServedFileChangeTest, TheServerLivesAndDropsTheVersion) {
  const Change& c = GetParam();
  const std::vector<std::string> keys = Keys(400);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys), c.format), "");
  const std::string v2 = BuildTable(data_, "t", Versioned(2, keys), c.format);
  ASSERT_NE(v2, "");
  const std::string other =
      BuildTable(data_, "other", Versioned(7, keys), c.format);
  ASSERT_NE(other, "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--load-mode", c.load_mode};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(ServesVersion(server, keys, 2));
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(), "roost_table_leased{table=\"t\"}"),
            1);

  // Clients of both tables, all along (stopped and joined however the test
  // ends).
  std::atomic<bool> stop{false};
  Problems problems;
  std::atomic<int> answered{0};
  struct Joined : std::vector<std::thread> {
    std::atomic<bool>* stop;
    ~Joined() {
      stop->store(true);
      for (auto& t : *this) t.join();
    }
  } clients;
  clients.stop = &stop;
  for (const std::string table : {"t", "other"}) {
    clients.emplace_back([&, table] {
      for (int i = 0; !stop.load(); ++i) {
        const std::string& key = keys[i % keys.size()];
        v1::MultiGetResponse m;
        const grpc::Status s =
            server.MultiGet(table, {key, keys[(i * 7) % keys.size()]}, &m);
        if (table == "t" && s.error_code() == StatusCode::UNAVAILABLE) {
          continue;  // between dropping v2 and serving v1
        }
        if (!s.ok()) {
          problems.Add(StrCat(table, ": ", s.error_message()));
          continue;
        }
        const int v = VersionOf(m.results(0).value(), key);
        if (table == "other" ? v != 7 : (v != 1 && v != 2)) {
          problems.Add(
              StrCat(table, ": ", key, " answered ", m.results(0).value()));
        }
        answered++;
      }
    });
  }
  ASSERT_TRUE(WaitFor([&] { return answered.load() > 100; }));
  const std::string file = v2 + "/table.sst";
  ::chmod(file.c_str(), 0644);  // published read-only; root writes anyway
  if (c.how == "truncate") {
    // Waits (the lease) until the server has let the file go.
    ASSERT_EQ(::truncate(file.c_str(), 0), 0) << std::strerror(errno);
  } else {
    const ProcessResult cp =
        RunProcess({"/bin/cp", other + "/table.sst", file});
    ASSERT_EQ(cp.exit_code, 0) << cp.err;
  }
  ASSERT_TRUE(server.WaitForLog(
      "roost-server: stopped serving t v000002: its table file is being "
      "opened for writing or truncated"));
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000001"; }));
  const int before = answered.load();
  ASSERT_TRUE(WaitFor([&] { return answered.load() > before + 100; }));
  stop = true;
  for (auto& t : clients) t.join();
  clients.clear();
  EXPECT_EQ(problems.count(), 0) << problems.Describe();
  ASSERT_TRUE(server.Running()) << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  EXPECT_TRUE(ServesVersion(server, keys, 7, "other"));
  const Metrics metrics = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_load_failures_total{reason="
                     "\"modified\",table=\"t\"}"),
            1);
  // What the writer left is not the version its MANIFEST describes: it
  // stays unserved (another table's file, or an empty one).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(server.ServingVersion("t"), "v000001");
}

INSTANTIATE_TEST_SUITE_P(EveryModeAndFormat, ServedFileChangeTest,
                         ::testing::ValuesIn(std::vector<Change>{
                             {"mmap", "cuckoo", "truncate"},
                             {"mmap", "block", "cp"},
                             {"mmap-locked", "cuckoo", "cp"},
                             {"mmap-locked", "block", "truncate"},
                             {"huge-pages", "cuckoo", "truncate"},
                             {"huge-pages", "block", "cp"}}),
                         [](const ::testing::TestParamInfo<Change>& info) {
                           std::string name =
                               StrCat(info.param.load_mode, "_",
                                      info.param.format, "_", info.param.how);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Issue 30, defect 8: a writer that opens a served file and changes none
// of its bytes (touch; a truncate to the size it has; an open for writing
// that writes nothing) took the version offline for good, and the table
// fell back to the version before (older data, silently). Once the writer
// is done the version is checked against its MANIFEST, byte for byte, and
// serves again; no older version is swapped in meanwhile.
class UnchangedByTheWriterTest
    : public DataDirTest,
      public ::testing::WithParamInterface<std::string> {};

TEST_P(UnchangedByTheWriterTest, TheVersionServesAgainOnceChecked) {
  const std::string& how = GetParam();
  const std::vector<std::string> keys = Keys(400);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys), "cuckoo"), "");
  const std::string v2 = BuildTable(data_, "t", Versioned(2, keys), "block");
  ASSERT_NE(v2, "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(ServesVersion(server, keys, 2));

  std::atomic<bool> stop{false};
  Problems problems;
  std::atomic<int> answered{0};
  std::thread client([&] {
    for (int i = 0; !stop.load(); ++i) {
      const std::string& key = keys[i % keys.size()];
      v1::GetResponse g;
      const grpc::Status s = server.Get("t", key, &g);
      if (s.error_code() == StatusCode::UNAVAILABLE) continue;  // checking
      if (!s.ok()) {
        problems.Add(s.error_message());
      } else if (VersionOf(g.value(), key) != 2) {
        problems.Add(
            StrCat(key, " answered ", g.value(), " (", g.version(), ")"));
      }
      answered++;
    }
  });
  struct Joined {
    std::atomic<bool>* stop;
    std::thread* thread;
    ~Joined() {
      stop->store(true);
      thread->join();
    }
  } joined{&stop, &client};
  ASSERT_TRUE(WaitFor([&] { return answered.load() > 50; }));

  const std::string file = v2 + "/table.sst";
  if (how == "touch") {
    const ProcessResult touch = RunProcess({"/usr/bin/touch", file});
    ASSERT_EQ(touch.exit_code, 0) << touch.err;
  } else if (how == "truncate_to_its_size") {
    ASSERT_EQ(::truncate(file.c_str(), fs::file_size(file)), 0)
        << std::strerror(errno);
  } else {  // open_for_writing
    const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ::close(fd);
  }
  ASSERT_TRUE(server.WaitForLog(
      "roost-server: stopped serving t v000002: its table file is being "
      "opened for writing or truncated"))
      << server.Log();
  // (A writer that closes the file at once: served again within a poll.)
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000002"; }))
      << server.Log();
  const int before = answered.load();
  ASSERT_TRUE(WaitFor([&] { return answered.load() > before + 50; }));
  stop = true;
  EXPECT_EQ(problems.count(), 0) << problems.Describe();
  EXPECT_EQ(server.CountLogLines("serving t v000001"), 0) << server.Log();
  EXPECT_EQ(server.CountLogLines(
                "roost-server: t v000002 is intact after the writer (every "
                "byte as its MANIFEST says): serving it again"),
            1)
      << server.Log();
  const Metrics metrics = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_load_failures_total{reason="
                     "\"modified\",table=\"t\"}"),
            1);
  EXPECT_EQ(MetricOr(metrics,
                     "roost_table_rechecks_total{result=\"intact\",table="
                     "\"t\"}"),
            1);
  // A lease again: a second writer is noticed as the first was.
  EXPECT_EQ(MetricOr(metrics, "roost_table_leased{table=\"t\"}"), 1);
}

INSTANTIATE_TEST_SUITE_P(Writers, UnchangedByTheWriterTest,
                         ::testing::Values("touch", "truncate_to_its_size",
                                           "open_for_writing"));

// Published versions are read-only on disk, and --keep-versions still
// removes old ones.
TEST_F(DataDirTest, VersionsArePublishedReadOnly) {
  const std::string v = BuildTable(data_, "t", {{"k", "v"}});
  ASSERT_NE(v, "");
  EXPECT_EQ(fs::status(v).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_exec |
                fs::perms::group_read | fs::perms::group_exec |
                fs::perms::others_read | fs::perms::others_exec);
  for (const char* file : {"table.sst", "MANIFEST"}) {
    EXPECT_EQ(
        fs::status(v + "/" + file).permissions() & fs::perms::all,
        fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read)
        << file;
  }
}

// Defect 9: a version directory without search permission made
// std::filesystem throw, and the server terminated (at start, too). Now it
// is a failed version (reason "open"), tried again once it can be read.
TEST_F(DataDirTest, AnUnsearchableVersionIsAFailedVersion) {
  const std::vector<std::string> keys = Keys(50);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys)), "");
  const std::string v2 = BuildTable(data_, "t", Versioned(2, keys));
  ASSERT_NE(v2, "");
  fs::create_directories(data_ + "/u");
  OpenUpTo(v2);
  ::chmod(v2.c_str(), 0700);  // root's; the server runs as nobody
  ::chmod((data_ + "/u").c_str(), 0700);
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  if (::geteuid() == 0) {
    flags.wrapper = {"setpriv", "--reuid=65534", "--regid=65534",
                     "--clear-groups", "--"};
  }
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  EXPECT_TRUE(
      server.WaitForLog("roost-server: cannot load t v000002: cannot "
                        "search " +
                        v2 + ": Permission denied"));
  EXPECT_TRUE(server.WaitForLog("roost-server: cannot list " + data_ +
                                "/u: Permission denied"));
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(),
                     "roost_table_load_failures_total{reason=\"open\","
                     "table=\"t\"}"),
            1);
  // Readable again: tried again, and served.
  ::chmod(v2.c_str(), 0555);
  EXPECT_TRUE(server.WaitForLog("roost-server: serving t v000002"));
  EXPECT_TRUE(ServesVersion(server, keys, 2));
  ASSERT_TRUE(server.Running());
}

// Defect 10: the registry's one thread blocked forever on a FIFO where a
// MANIFEST or table file should be, read a MANIFEST linked to /dev/zero
// until it ran out of memory, and parsed a MANIFEST of 300,000 members in
// minutes; meanwhile no table swapped, admin calls timed out and SIGTERM
// never completed. Now only regular files of bounded size are read, without
// ever blocking.
TEST_F(DataDirTest, NoEntryWedgesTheRegistry) {
  const std::vector<std::string> keys = Keys(50);
  const auto fifo_for = [&](const std::string& table, const char* file) {
    const std::string v = BuildTable(data_, table, Versioned(1, keys));
    ASSERT_NE(v, "");
    ::chmod(v.c_str(), 0755);
    fs::remove(v + "/" + file);
    ASSERT_EQ(::mkfifo((v + "/" + file).c_str(), 0644), 0);
  };
  fifo_for("fifo-manifest", "MANIFEST");
  fifo_for("fifo-table", "table.sst");
  const std::string zero = BuildTable(data_, "zero", Versioned(1, keys));
  ASSERT_NE(zero, "");
  ::chmod(zero.c_str(), 0755);
  fs::remove(zero + "/MANIFEST");
  fs::create_symlink("/dev/zero", zero + "/MANIFEST");
  const std::string huge = BuildTable(data_, "huge", Versioned(1, keys));
  ASSERT_NE(huge, "");
  ::chmod(huge.c_str(), 0755);
  ::chmod((huge + "/MANIFEST").c_str(), 0644);
  WriteFile(huge + "/MANIFEST", std::string(20 << 20, ' '));
  ASSERT_NE(BuildTable(data_, "rolled", Versioned(1, keys)), "");
  ASSERT_EQ(::mkfifo((data_ + "/rolled/ROLLBACK").c_str(), 0644), 0);
  ASSERT_NE(BuildTable(data_, "good", Versioned(1, keys)), "");

  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitListening());
  EXPECT_TRUE(server.WaitForLog("roost-server: serving good v000001"));
  EXPECT_TRUE(ServesVersion(server, keys, 1, "good"));
  EXPECT_TRUE(ServesVersion(server, keys, 1, "rolled"));
  EXPECT_EQ(server.CountLogLines("without a lease"), 0) << server.Log();
  for (const std::string& line :
       {StrCat("cannot load fifo-manifest v000001: cannot open ", data_,
               "/fifo-manifest/v000001/MANIFEST: not a regular file"),
        StrCat("cannot load fifo-table v000001: cannot open ", data_,
               "/fifo-table/v000001/table.sst: not a regular file"),
        StrCat("cannot load zero v000001: cannot open ", data_,
               "/zero/v000001/MANIFEST: not a regular file"),
        StrCat("cannot load huge v000001: ", data_,
               "/huge/v000001/MANIFEST is larger than 16777216 bytes"),
        StrCat("ignoring ROLLBACK of rolled: cannot open ", data_,
               "/rolled/ROLLBACK: not a regular file")}) {
    EXPECT_TRUE(server.WaitForLog(line));
  }
  // The admin service and shutdown are not held up either.
  v1::RollbackResponse rolled;
  EXPECT_TRUE(IsError(server.Rollback("good", "", &rolled),
                      StatusCode::FAILED_PRECONDITION,
                      "table \"good\" has no complete version older than "
                      "v000001 on disk"));
  server.Disconnect();
  server.SendSignal(SIGTERM);
  EXPECT_EQ(server.WaitExit(), 0) << server.Log();
}

// Defect 11: the server wrote its ROLLBACK state through a fixed temporary
// name with a create-and-truncate open, following a link planted there.
TEST_F(DataDirTest, PlantedLinksAreNeverFollowed) {
  const std::vector<std::string> keys = Keys(20);
  for (int v = 1; v <= 2; ++v) {
    ASSERT_NE(BuildTable(data_, "t", Versioned(v, keys)), "");
    ASSERT_NE(BuildTable(data_, "u", Versioned(v, keys)), "");
  }
  const std::string victim = scratch_.File("victim");
  WriteFile(victim, "precious");
  fs::create_symlink(victim, TableDir("t") + "/.ROLLBACK.tmp");
  // A ROLLBACK that is a link (to a file pinning v1) is not read.
  const std::string pin = scratch_.File("pin.json");
  WriteFile(pin, "{\"pinned\": 1, \"rolled_back\": []}\n");
  fs::create_symlink(pin, TableDir("u") + "/ROLLBACK");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  EXPECT_TRUE(ServesVersion(server, keys, 2, "u"));
  EXPECT_TRUE(server.WaitForLog(StrCat("ignoring ROLLBACK of u: cannot open ",
                                       TableDir("u"),
                                       "/ROLLBACK: a symbolic link, not a "
                                       "file")));
  v1::RollbackResponse rolled;
  ASSERT_OK(server.Rollback("t", "", &rolled));
  EXPECT_TRUE(ServesVersion(server, keys, 1, "t"));
  EXPECT_EQ(ReadFile(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(TableDir("t") + "/.ROLLBACK.tmp"));
  EXPECT_FALSE(fs::is_symlink(TableDir("t") + "/ROLLBACK"));
  EXPECT_NE(ReadFile(TableDir("t") + "/ROLLBACK").find("\"pinned\": 1"),
            std::string::npos);
}

// Defect 12: each new table name copied the whole name map and nothing was
// freed, so memory grew with the square of the names ever seen (date-named
// tables would do it). Removed tables are now reclaimed, and at most
// --max-tables are served.
TEST_F(DataDirTest, TablesThatComeAndGoLeaveNothingBehind) {
  fs::create_directories(data_);
  ServerFlags flags = Flags();
  flags.poll_interval = 0.1;
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  const auto tables = [&] {
    v1::ListTablesResponse r;
    return server.ListTables(&r).ok() ? r.tables_size() : -1;
  };
  uint64_t after_first = 0;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 1000; ++i) {
      fs::create_directory(StrCat(data_, "/day", round, "-t", i));
    }
    ASSERT_TRUE(WaitFor([&] { return tables() == 1000; })) << tables();
    for (int i = 0; i < 1000; ++i) {
      fs::remove(StrCat(data_, "/day", round, "-t", i));
    }
    ASSERT_TRUE(WaitFor([&] { return tables() == 0; })) << tables();
    if (round == 0) after_first = AnonymousMemory(server.pid());
  }
  if (!UnderSanitizers()) {
    EXPECT_LT(AnonymousMemory(server.pid()), after_first + (8 << 20))
        << "grew from " << (after_first >> 20) << " MiB";
  }
}

TEST_F(DataDirTest, AtMostMaxTablesAreServed) {
  for (int i = 0; i < 8; ++i) fs::create_directories(StrCat(data_, "/t", i));
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-tables", "5"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  v1::ListTablesResponse r;
  ASSERT_OK(server.ListTables(&r));
  EXPECT_EQ(r.tables_size(), 5);
  EXPECT_EQ(server.CountLogLines("(--max-tables 5)"), 3) << server.Log();
  const Metrics metrics = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(metrics, "roost_tables"), 5);
  EXPECT_EQ(MetricOr(metrics, "roost_tables_ignored"), 3);
}

// Defect 13: an empty table directory (left by a refused first build) kept
// the server NOT_SERVING forever, taking every other table off the load
// balancer.
TEST_F(DataDirTest, ATableWithoutAVersionHoldsNobodyBack) {
  const std::vector<std::string> keys = Keys(20);
  ASSERT_NE(BuildTable(data_, "good", Versioned(1, keys)), "");
  fs::create_directories(data_ + "/new");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  HealthStatus::ServingStatus status;
  ASSERT_OK(server.HealthCheck("", &status));
  EXPECT_EQ(status, HealthStatus::SERVING);
  ASSERT_OK(server.HealthCheck("roost.v1.Lookup/good", &status));
  EXPECT_EQ(status, HealthStatus::SERVING);
  ASSERT_OK(server.HealthCheck("roost.v1.Lookup/new", &status));
  EXPECT_EQ(status, HealthStatus::NOT_SERVING);
  auto info = server.Table("new");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->serving_version(), "");
  const Metrics metrics = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(metrics, "roost_table_serving{table=\"new\"}", -1), 0);
  EXPECT_EQ(MetricOr(metrics, "roost_table_serving{table=\"good\"}", -1), 1);
  // Once it has a version, its health follows.
  ASSERT_NE(BuildTable(data_, "new", Versioned(1, keys)), "");
  EXPECT_TRUE(WaitFor([&] {
    return server.HealthCheck("roost.v1.Lookup/new", &status).ok() &&
           status == HealthStatus::SERVING;
  }));
}

// Defect 24: a version copied in MANIFEST-first (rsync, aws s3 sync, cp -r)
// was marked failed on first sight and never tried again. Now a version
// whose files were missing or short is tried again when they change; and
// the documented recipe (copy to a dot-directory, then rename) never shows
// a half version at all.
TEST_F(DataDirTest, AVersionCopiedInIsServedOnceItsFilesHaveArrived) {
  const std::vector<std::string> keys = Keys(200);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys)), "");
  // v2 and v3, built elsewhere under the same table name.
  const std::string elsewhere = scratch_.File("elsewhere");
  ASSERT_NE(BuildTable(elsewhere, "t", Versioned(1, keys)), "");
  const std::string v2 = BuildTable(elsewhere, "t", Versioned(2, keys));
  const std::string v3 = BuildTable(elsewhere, "t", Versioned(3, keys));
  ASSERT_NE(v2, "");
  ASSERT_NE(v3, "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  // MANIFEST first, as a careless copy would.
  const std::string dest = TableDir() + "/v000002";
  fs::create_directory(dest);
  fs::copy_file(v2 + "/MANIFEST", dest + "/MANIFEST");
  ASSERT_TRUE(
      server.WaitForLog("roost-server: cannot load t v000002: "
                        "incomplete version: "));
  const std::string bytes = ReadFile(v2 + "/table.sst");
  WriteFile(dest + "/table.sst", bytes.substr(0, bytes.size() / 2));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(server.ServingVersion("t"), "v000001");
  WriteFile(dest + "/table.sst", bytes);
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000002"));
  EXPECT_TRUE(ServesVersion(server, keys, 2));
  EXPECT_GE(MetricOr(server.ScrapeMetrics(),
                     "roost_table_load_failures_total{reason=\"incomplete\","
                     "table=\"t\"}"),
            1);

  // The safe recipe: into a dot-directory, then renamed into place.
  const std::string incoming = TableDir() + "/.incoming-v000003";
  fs::copy(v3, incoming, fs::copy_options::recursive);
  fs::rename(incoming, TableDir() + "/v000003");
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000003"));
  EXPECT_TRUE(ServesVersion(server, keys, 3));
  EXPECT_EQ(server.CountLogLines("cannot load t v000003"), 0);
}

}  // namespace
}  // namespace roost::testing
