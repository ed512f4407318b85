// roost-server --repository end to end: versions published into a real
// MinIO (and a local directory) with TableRepository, pulled and served by
// the real roost-server; the POINTER decides what serves, forward and back.
// Faults are server_repository_faults_test.cc's.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>
#include <thread>

#include "tests/harness/repository_server_fixture.h"

namespace roost::testing {
namespace {

using ::testing::ElementsAre;

class ServerRepositoryTest : public RepositoryServerTest {};

TEST_F(ServerRepositoryTest, PullsItsShardSwapsAndFollowsThePointerBack) {
  constexpr uint32_t kShards = 3;
  const std::vector<std::string> mine = ShardKeys(300, 1, kShards);
  ASSERT_EQ(Publish(1, Keys(300), kShards), 1u);
  ServerProcess server(PullFlags(1), LogFile());
  ASSERT_TRUE(server.WaitReady());
  // Ready means serving the pointer's version.
  EXPECT_EQ(server.ServingVersion("t"), "v000001");
  EXPECT_TRUE(ServesVersion(server, mine, 1));
  auto info = server.Table("t");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->repository_version(), "v000001");
  // Only this server's shard was downloaded.
  EXPECT_THAT(Entries(), ElementsAre("v000001"));
  std::vector<std::string> files;
  for (const auto& e :
       std::filesystem::directory_iterator(TableDir() + "/v000001")) {
    files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_THAT(files, ElementsAre("MANIFEST", ShardFileName(1, kShards)));

  // A second version: pulled and swapped in.
  ASSERT_EQ(Publish(2, Keys(300), kShards), 2u);
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000002"; }))
      << server.Log();
  EXPECT_TRUE(ServesVersion(server, mine, 2));
  EXPECT_EQ(server.Table("t")->repository_version(), "v000002");
  // Each checked once, as it arrived (server/verified_files.h).
  EXPECT_EQ(server.CountLogLines("its checksums checked as it was pulled"), 2)
      << server.Log();

  // The pointer moved back: the old version serves again, from disk.
  TableRepository repository(store_.get());
  ASSERT_OK(repository.MovePointer("t", 1));
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000001"; }))
      << server.Log();
  EXPECT_TRUE(ServesVersion(server, mine, 1));
  EXPECT_EQ(server.Table("t")->repository_version(), "v000001");
  // v1 stands in for v2, withdrawn (lookup.proto's withdrawn_through).
  EXPECT_EQ(server.Table("t")->withdrawn_through(), "v000002");
  {
    v1::GetResponse got;
    ASSERT_OK(server.Get("t", mine[0], &got));
    EXPECT_EQ(got.version(), "v000001");
    EXPECT_EQ(got.withdrawn_through(), "v000002");
  }
  // And forward again: v2 stands in for nothing.
  ASSERT_OK(repository.MovePointer("t", 2));
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000002"; }))
      << server.Log();
  EXPECT_EQ(server.Table("t")->withdrawn_through(), "");
  {
    v1::GetResponse got;
    ASSERT_OK(server.Get("t", mine[0], &got));
    EXPECT_EQ(got.withdrawn_through(), "");
  }

  ASSERT_TRUE(WaitFor([&] {
    const Metrics m = server.ScrapeMetrics();
    return MetricOr(m, "roost_repository_lag_versions{table=\"t\"}", -1) == 0;
  })) << server.Log();
  const Metrics m = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(m, "roost_repository_versions_pulled_total{table=\"t\"}"),
            2);
  const uint64_t shard_bytes =
      std::filesystem::file_size(TableDir() + "/v000001/" +
                                 ShardFileName(1, kShards)) +
      std::filesystem::file_size(TableDir() + "/v000002/" +
                                 ShardFileName(1, kShards));
  EXPECT_EQ(MetricOr(m, "roost_repository_pull_bytes_total{table=\"t\"}"),
            static_cast<double>(shard_bytes));
  EXPECT_EQ(MetricOr(m, "roost_repository_pointer_version{table=\"t\"}"), 2);
  // One observation per pointer move this server saw served: v1 at start,
  // v2, back to v1, v2 again.
  EXPECT_EQ(
      MetricOr(
          m, "roost_repository_pointer_to_serving_seconds_count{table=\"t\"}"),
      4);
  for (const char* reason : {"unreachable", "denied", "missing", "corrupt",
                             "manifest", "shard", "no_space", "local"}) {
    EXPECT_EQ(Failures(m, reason), 0) << reason;
  }
}

TEST_F(ServerRepositoryTest, ARollbackToAPrunedVersionPullsItAgain) {
  // Unsharded, pulled by a server without --shard, kept one version deep.
  const std::vector<std::string> keys = Keys(100);
  ASSERT_EQ(Publish(1, keys), 1u);
  ServerProcess server(PullFlags(std::nullopt, {"--keep-versions", "1"}),
                       LogFile());
  ASSERT_TRUE(server.WaitReady());
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  ASSERT_EQ(Publish(2, keys), 2u);
  ASSERT_TRUE(WaitFor([&] { return Entries() == Names{"v000002"}; }))
      << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 2));

  TableRepository repository(store_.get());
  ASSERT_OK(repository.MovePointer("t", 1));
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000001"; }))
      << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  EXPECT_EQ(server.CountLogLines("pulling t v000001"), 2) << server.Log();
  // --keep-versions never removes the pointer's version or the serving one:
  // v1 is both, v2 the newest.
  ASSERT_TRUE(WaitFor([&] {
    return Entries() == Names{"v000001", "v000002"};
  })) << server.Log();
  // The puller counts a pull once PullVersion returns, after the rename
  // that lets the registry serve the version: it may come after the swap.
  EXPECT_TRUE(WaitFor([&] {
    return MetricOr(server.ScrapeMetrics(),
                    "roost_repository_versions_pulled_total{table=\"t\"}") == 3;
  })) << server.Log();
}

TEST_F(ServerRepositoryTest, ARestartServesThePointerNotTheNewestOnDisk) {
  const std::vector<std::string> keys = Keys(100);
  ASSERT_EQ(Publish(1, keys), 1u);
  ASSERT_EQ(Publish(2, keys), 2u);
  {
    ServerProcess server(PullFlags(), LogFile("first"));
    ASSERT_TRUE(server.WaitReady());
    EXPECT_TRUE(ServesVersion(server, keys, 2));
  }
  // Rolled back while the server was down (v1 was never pulled).
  TableRepository repository(store_.get());
  ASSERT_OK(repository.MovePointer("t", 1));
  ServerProcess server(PullFlags(), LogFile("second"));
  ASSERT_TRUE(server.WaitReady());
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  // Ready means serving the pointer's version, and v2 was never served.
  EXPECT_EQ(server.CountLogLines("serving t v000002"), 0) << server.Log();
  EXPECT_THAT(Entries(), ElementsAre("v000001", "v000002"));
}

TEST_F(ServerRepositoryTest, ALocalDirectoryRepositoryServesToo) {
  uri_ = "file://" + scratch_.File("repository");
  auto store = OpenObjectStore(uri_);
  ASSERT_OK(store);
  store_ = *std::move(store);
  const std::vector<std::string> keys = Keys(50);
  ASSERT_EQ(Publish(1, keys, 0, "t"), 1u);
  ASSERT_EQ(Publish(7, keys, 0, "other"), 1u);
  // The flags from the config file this time.
  const std::string config = scratch_.File("server.toml");
  WriteFile(config, StrCat("repository = \"", uri_,
                           "\"\nrepository-poll = 0.2\ndownload-rate = "
                           "10000000\nmin-free-bytes = 1048576\n"));
  ServerFlags flags = Flags();
  flags.extra = {"--config", config};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  EXPECT_TRUE(ServesVersion(server, keys, 7, "other"));
  // Durations to a precision a reader can use: "in 0.012 s", not "in
  // 0.012345678 s" (issue 30, item 24).
  const std::regex pulled(
      "roost-server: pulled t v000001 in ([0-9]+)(\\.[0-9]+)? s\n");
  ASSERT_TRUE(server.WaitForLog("roost-server: pulled t v000001 in "));
  std::smatch m;
  const std::string log = server.Log();
  ASSERT_TRUE(std::regex_search(log, m, pulled)) << log;
  EXPECT_LE(m[2].length(), 4) << m[0];  // the point and up to 3 digits
}

TEST_F(ServerRepositoryTest, BadRepositoryFlagsStopTheServerAtStart) {
  // A URI that names no store: exit 1 before any port is served.
  {
    ServerFlags flags = Flags();
    flags.extra = {"--repository", "s3://"};
    ServerProcess server(flags, LogFile("bad-uri"));
    EXPECT_EQ(server.WaitExit(), 1);
    EXPECT_NE(server.Log().find("--repository s3://: "), std::string::npos)
        << server.Log();
  }
  // Flags out of range: usage errors.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--repository-poll", "0"},
        std::vector<std::string>{"--download-rate", "-1"},
        std::vector<std::string>{"--min-free-bytes", "-1"},
        std::vector<std::string>{"--min-free-bytes", "lots"}}) {
    ServerFlags flags = Flags();
    flags.extra = {"--repository", uri_};
    flags.extra.insert(flags.extra.end(), bad.begin(), bad.end());
    ServerProcess server(flags, LogFile("bad-flag"));
    EXPECT_EQ(server.WaitExit(), 64) << bad[0];
    EXPECT_NE(server.Log().find(bad[0]), std::string::npos) << server.Log();
  }
}

TEST_F(ServerRepositoryTest, ATableWithoutAPointerHoldsNobodyBack) {
  // Claimed, never completed: no pointer. The server is ready with nothing
  // to serve, and serves the table once a version is published.
  TableRepository repository(store_.get());
  ASSERT_OK(repository.ClaimVersion("t", "a killed publisher"));
  ServerProcess server(PullFlags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  const std::vector<std::string> keys = Keys(20);
  ASSERT_EQ(Publish(2, keys), 2u);
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000002"; }))
      << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 2));
}

// Issue 30, defect 2: every object of a table deleted from the bucket and
// the table published again (its v000001 now holds other data): servers
// kept serving their own v000001 as the repository's. A local version is
// the repository's only if its MANIFEST is the repository's byte for byte;
// one that is not stops serving, is pulled afresh and swapped in.
TEST_F(ServerRepositoryTest, AWipedAndRepublishedTableIsPulledAfresh) {
  const std::vector<std::string> keys = Keys(100);
  ASSERT_EQ(Publish(1, keys), 1u);
  ServerProcess server(PullFlags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(ServesVersion(server, keys, 1));
  auto objects = store_->ListAll("t/");
  ASSERT_OK(objects);
  for (const ObjectInfo& o : *objects) ASSERT_OK(store_->Delete(o.key));
  // Published again: v000001 once more, every value another.
  ASSERT_EQ(Publish(5, keys), 1u);
  ASSERT_TRUE(WaitFor([&] {
    v1::GetResponse g;
    return server.Get("t", keys[0], &g).ok() &&
           VersionOf(g.value(), keys[0]) == 5;
  })) << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 5));
  EXPECT_EQ(server.ServingVersion("t"), "v000001");
  EXPECT_EQ(server.CountLogLines(
                "t v000001 on disk is not the repository's v000001: its "
                "MANIFEST differs from " +
                uri_ + "/t/v000001/MANIFEST"),
            1)
      << server.Log();
  EXPECT_EQ(server.CountLogLines("pulling t v000001"), 2) << server.Log();
  const Metrics m = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(m,
                     "roost_repository_local_mismatches_total{reason="
                     "\"manifest\",table=\"t\"}"),
            1);
  EXPECT_EQ(MetricOr(m, "roost_repository_versions_pulled_total{table=\"t\"}"),
            2);
  EXPECT_THAT(Entries(), ElementsAre("v000001"));
}

// The same when --repository names another repository and the data
// directory is kept (a Helm values change keeps the volume): its v000001
// is not this server's old v000001, and the old one never serves.
TEST_F(ServerRepositoryTest, AnotherRepositoryIsNotTakenForTheOldOne) {
  const std::vector<std::string> keys = Keys(100);
  ASSERT_EQ(Publish(1, keys), 1u);
  {
    ServerProcess server(PullFlags(), LogFile("first"));
    ASSERT_TRUE(server.WaitReady());
    ASSERT_TRUE(ServesVersion(server, keys, 1));
  }
  const std::string first = uri_;
  uri_ = NewMinioRoot();
  auto store = OpenObjectStore(uri_, TestStoreOptions());
  ASSERT_OK(store);
  store_ = *std::move(store);
  ASSERT_EQ(Publish(3, keys), 1u);
  ServerProcess server(PullFlags(), LogFile("second"));
  ASSERT_TRUE(server.WaitReady());
  EXPECT_TRUE(ServesVersion(server, keys, 3));
  // Ready means serving the repository's v000001: the old one never
  // served.
  EXPECT_EQ(server.CountLogLines("serving t v000001"), 1) << server.Log();
  EXPECT_EQ(server.CountLogLines("t v000001 on disk is not the repository's "
                                 "v000001"),
            1)
      << server.Log();
  EXPECT_EQ(server.CountLogLines("t: its versions on disk were pulled from " +
                                 first + "; --repository is " + uri_),
            1)
      << server.Log();
}

// While a table's POINTER is missing (deleted, a wipe half done) the server
// keeps serving what it serves and switches to no other version on disk;
// a server started then serves none of the versions it pulled, and is
// ready (the table holds nobody back).
TEST_F(ServerRepositoryTest, WithoutItsPointerATableServesNoOtherVersion) {
  const std::vector<std::string> keys = Keys(100);
  ASSERT_EQ(Publish(1, keys), 1u);
  ASSERT_EQ(Publish(2, keys), 2u);
  std::optional<ServerProcess> server;
  server.emplace(PullFlags(), LogFile("first"));
  ASSERT_TRUE(server->WaitReady());
  ASSERT_TRUE(ServesVersion(*server, keys, 2));
  TableRepository repository(store_.get());
  ASSERT_OK(repository.MovePointer("t", 1));
  ASSERT_TRUE(WaitFor([&] { return server->ServingVersion("t") == "v000001"; }))
      << server->Log();
  ASSERT_OK(store_->Delete("t/POINTER"));
  // Several polls: v2, the newest on disk, is not taken up.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(server->ServingVersion("t"), "v000001") << server->Log();
  EXPECT_EQ(server->CountLogLines("t has no POINTER in " + uri_ +
                                  " any more: it keeps serving what it "
                                  "serves"),
            1)
      << server->Log();
  EXPECT_EQ(server->CountLogLines("serving t v000002"), 1) << server->Log();
  EXPECT_TRUE(ServesVersion(*server, keys, 1));
  server.reset();

  ServerProcess second(PullFlags(), LogFile("second"));
  ASSERT_TRUE(second.WaitReady());
  EXPECT_EQ(second.ServingVersion("t"), "") << second.Log();
  v1::GetResponse g;
  EXPECT_EQ(second.Get("t", keys[0], &g).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // A POINTER again: its version serves, from disk.
  ASSERT_OK(repository.MovePointer("t", 2));
  ASSERT_TRUE(WaitFor([&] { return second.ServingVersion("t") == "v000002"; }))
      << second.Log();
  EXPECT_TRUE(ServesVersion(second, keys, 2));
  EXPECT_EQ(second.CountLogLines("pulling t"), 0) << second.Log();
  EXPECT_EQ(second.CountLogLines("serving t v000001"), 0) << second.Log();
}

// Issue 30, defect 7: a server restarted with another --shard on the same
// data directory found a version with a MANIFEST but without its shard's
// file, and never pulled it (never ready). A version lacking this server's
// file is not complete here: it is pulled afresh.
TEST_F(ServerRepositoryTest, ARestartWithAnotherShardPullsItsFile) {
  constexpr uint32_t kShards = 3;
  ASSERT_EQ(Publish(1, Keys(300), kShards), 1u);
  {
    ServerProcess server(PullFlags(0), LogFile("shard0"));
    ASSERT_TRUE(server.WaitReady());
    ASSERT_TRUE(ServesVersion(server, ShardKeys(300, 0, kShards), 1));
  }
  ServerProcess server(PullFlags(1), LogFile("shard1"));
  ASSERT_TRUE(server.WaitReady()) << server.Log();
  EXPECT_TRUE(ServesVersion(server, ShardKeys(300, 1, kShards), 1));
  EXPECT_EQ(server.CountLogLines(StrCat("t v000001 on disk lacks this "
                                        "server's file ",
                                        ShardFileName(1, kShards))),
            1)
      << server.Log();
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(),
                     "roost_repository_local_mismatches_total{reason="
                     "\"file\",table=\"t\"}"),
            1);
  std::vector<std::string> files;
  for (const auto& e :
       std::filesystem::directory_iterator(TableDir() + "/v000001")) {
    files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_THAT(files, ElementsAre("MANIFEST", ShardFileName(1, kShards)));
}

// Issue 30, defect 8, with --repository: a served file that a writer
// opened and closed without changing a byte was off for good (the
// POINTER's version, failed, and nothing else to serve). Once the writer is
// done its bytes are checked against the MANIFEST and it serves again.
TEST_F(ServerRepositoryTest, AServedFileOpenedForWritingServesAgain) {
  const std::vector<std::string> keys = Keys(100);
  ASSERT_EQ(Publish(1, keys), 1u);
  ServerProcess server(PullFlags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  const std::string file = TableDir() + "/v000001/table.sst";
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ::close(fd);
  ASSERT_TRUE(server.WaitForLog("stopped serving t v000001")) << server.Log();
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000001"; }))
      << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  EXPECT_EQ(server.CountLogLines("t v000001 is intact after the writer"), 1)
      << server.Log();
  EXPECT_EQ(server.CountLogLines("pulling t v000001"), 1) << server.Log();
}

}  // namespace
}  // namespace roost::testing
