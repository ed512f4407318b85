// roost-load end to end, publishing: versions with manifests in a data
// directory, and what builds that were killed, refused or attacked leave
// behind (only complete versions, no working directories, no writes
// through planted links).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <string>

#include "tests/harness/manifest_edit.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "tests/loader/roost_load_fixture.h"
#include "util/json.h"
#include "util/str_cat.h"
#include "util/timestamp.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(RoostLoadTest, PublishesVersionsWithManifests) {
  const std::string in = Write("in.tsv", "k1\tv1\nk2\tv2\n");
  const std::string data = dir_.File("data");
  for (int i = 1; i <= 3; ++i) {
    Result r =
        RoostLoadStdout("build --output-format json --format " +
                        std::string(i == 2 ? "block" : "cuckoo") + " -i " + in +
                        " --data-dir " + data + " --table users");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(JsonUint64(ParseOrFail(r.out), "version"), uint64_t(i));
  }
  EXPECT_EQ(Versions(data + "/users"),
            (std::vector<std::string>{"v000001", "v000002", "v000003"}));
  const Json m = ParseOrFail(ReadFile(data + "/users/v000002/MANIFEST"));
  EXPECT_EQ(JsonString(m, "format"), "block");
  EXPECT_EQ(JsonUint64(m, "version"), 2u);
  EXPECT_EQ(JsonUint64(m, "keys"), 2u);
  EXPECT_EQ(JsonUint64(m, "key_width"), 2u);
  EXPECT_EQ(JsonUint64(m.at("files").at(0), "size"),
            fs::file_size(data + "/users/v000002/table.sst"));
  EXPECT_EQ(JsonString(m.at("inputs").at(0), "path"), in);
  EXPECT_EQ(JsonUint64(m.at("build_options"), "restart_interval"), 16u);
  EXPECT_EQ(JsonString(m, "loader"), "roost-load " ROOST_VERSION);

  // verify of the table directory checks its newest version.
  Result r = RoostLoad("verify " + data + "/users");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, data +
                       "/users/v000003/table.sst: ok (cuckoo table, 2 "
                       "keys, MANIFEST agrees)\n");
  EXPECT_EQ(RoostLoad("get " + data + "/users k2").out, "k2\tv2\n");
  EXPECT_EQ(RoostLoad("verify " + data + "/users/v000002").exit_code, 0);

  // A MANIFEST that disagrees with its files fails verification.
  std::string text = ReadFile(data + "/users/v000001/MANIFEST");
  text.replace(text.find("\"keys\": 2"), 9, "\"keys\": 3");
  WriteFile(data + "/users/v000001/MANIFEST", text);
  r = RoostLoad("verify " + data + "/users/v000001");
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_NE(r.out.find("MANIFEST: says keys 3; the table file has 2"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(RoostLoad("build -q -i " + in + " --data-dir " + data +
                      " --table ../escape")
                .exit_code,
            64);
}

// The MANIFEST says when the version was built and, given
// --data-timestamp, the time of its data; MANIFESTs without either (written
// before roost-load 0.2) still verify, and a malformed one does not.
TEST_F(RoostLoadTest, ManifestRecordsBuildAndDataTimes) {
  const std::string in = Write("in.tsv", "k1\tv1\n");
  const std::string data = dir_.File("data");
  const int64_t before = std::time(nullptr);
  ASSERT_EQ(
      RoostLoad("build -q -i " + in + " --data-dir " + data + " --table t")
          .exit_code,
      0);
  const int64_t after = std::time(nullptr);
  Json m = ParseOrFail(ReadFile(data + "/t/v000001/MANIFEST"));
  ASSERT_TRUE(JsonString(m, "build_time")) << m.dump();
  const std::optional<int64_t> built =
      ParseRfc3339(*JsonString(m, "build_time"));
  ASSERT_TRUE(built) << *JsonString(m, "build_time");
  EXPECT_GE(*built, before);
  EXPECT_LE(*built, after);
  EXPECT_FALSE(m.contains("data_time"));

  // RFC 3339 with any offset, or Unix seconds; written in UTC.
  for (const std::string given : {"2024-05-01T14:00:00+02:00",
                                  "2024-05-01T12:00:00.999Z", "1714564800"}) {
    SCOPED_TRACE(given);
    ASSERT_EQ(RoostLoad("build -q -i " + in + " --data-dir " + data +
                        " --table t --data-timestamp " + given)
                  .exit_code,
              0);
    m = ParseOrFail(
        ReadFile(data + "/t/" + Versions(data + "/t").back() + "/MANIFEST"));
    EXPECT_EQ(JsonString(m, "data_time"), "2024-05-01T12:00:00Z");
  }

  // Without the two fields, as roost-load 0.1 wrote it: still a version.
  EditManifest(data + "/t/v000002", [](Json& j) {
    j.erase("build_time");
    j.erase("data_time");
  });
  Result r = RoostLoad("verify " + data + "/t/v000002");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EditManifest(data + "/t/v000003",
               [](Json& j) { j["build_time"] = "yesterday"; });
  r = RoostLoad("verify " + data + "/t/v000003");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find("missing or malformed \"build_time\""),
            std::string::npos)
      << r.out;
}

TEST_F(RoostLoadTest, InterruptedBuildLeavesOnlyCompleteVersions) {
  // Enough input that the build is still running when it is killed.
  std::string big;
  for (int i = 0; i < 400000; ++i) {
    big += StrCat("key", 1000000 + i * 7 % 400000, "\tvalue-", i, "\n");
  }
  const std::string in = Write("big.tsv", big);
  const std::string data = dir_.File("data");
  ASSERT_EQ(RoostLoad("build -q -i " + in + " --data-dir " + data +
                      " --table t --format block")
                .exit_code,
            0);
  for (int delay_ms : {20, 150}) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl(LoadBinary(), LoadBinary(), "build", "-q", "-i", in.c_str(),
            "--data-dir", data.c_str(), "--table", "t", "--format", "block",
            "--memory-limit", "2M", nullptr);
      _exit(127);
    }
    usleep(delay_ms * 1000);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    for (const std::string& v : Versions(data + "/t")) {
      EXPECT_TRUE(fs::exists(data + "/t/" + v + "/MANIFEST")) << v;
      EXPECT_EQ(RoostLoad("verify " + data + "/t/" + v).exit_code, 0) << v;
    }
  }
  // The next build succeeds and clears what the killed ones left.
  Result r = RoostLoad("build -q -i " + in + " --data-dir " + data +
                       " --table t --format block");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const auto& e : fs::directory_iterator(data + "/t")) {
    EXPECT_NE(e.path().filename().string().rfind(".staging-", 0), 0u)
        << e.path();
  }
  EXPECT_EQ(RoostLoad("verify " + data + "/t").exit_code, 0);
}

// Defect 19: the spill directory of a killed build is removed by the next
// build that sorts in the same place; that of a running one is kept. So is
// the directory a killed `build -o FILE` was writing in.
TEST_F(RoostLoadTest, WorkingDirectoriesOfDeadBuildsAreRemoved) {
  const std::string temp = dir_.File("tmp");
  fs::create_directories(temp);
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  int status;
  waitpid(dead, &status, 0);
  const std::string dead_dir = StrCat(temp, "/roost-sort-", dead, "-Ab12Cd");
  const std::string live_dir =
      StrCat(temp, "/roost-sort-", getpid(), "-Ef34Gh");
  const std::string unrelated = temp + "/roost-sort-notapid";
  for (const std::string& d : {dead_dir, live_dir, unrelated}) {
    fs::create_directories(d);
    WriteFile(d + "/run-000000", "spilled");
  }
  const std::string out = dir_.File("t.sst");
  const std::string dead_out = StrCat(out, ".tmp-", dead, "-Ij56Kl");
  fs::create_directories(dead_out);
  WriteFile(dead_out + "/table.sst", "half a table");
  const std::string in = Write("in.tsv", "b\t2\na\t1\n");
  const Result r = RoostLoad("build -q --format block --temp-dir " + temp +
                             " -i " + in + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(fs::exists(dead_out));
  EXPECT_FALSE(fs::exists(dead_dir));
  EXPECT_TRUE(fs::exists(live_dir + "/run-000000"));
  EXPECT_TRUE(fs::exists(unrelated + "/run-000000"));
  // And this build left nothing of its own.
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(temp)) ++entries;
  EXPECT_EQ(entries, 2u);
}

// Defect 23: empty input publishes nothing unless --allow-empty, and
// --max-shrink refuses a version that lost too many keys.
TEST_F(RoostLoadTest, EmptyOrShrunkenInputIsRefused) {
  const std::string data = dir_.File("data");
  Result r = RoostLoad("build -q -i - --data-dir " + data +
                       " --table users < /dev/null");
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_EQ(r.out,
            "roost-load: no records in the input; --allow-empty publishes an "
            "empty table\n");
  EXPECT_FALSE(fs::exists(data + "/users"));
  EXPECT_EQ(RoostLoad("build -q -i - -o " + dir_.File("e.sst") + " < /dev/null")
                .exit_code,
            65);
  EXPECT_FALSE(fs::exists(dir_.File("e.sst")));

  std::string text;
  for (int i = 0; i < 100; ++i) text += StrCat("key", i, "\tv\n");
  ASSERT_EQ(RoostLoad("build -q -i " + Write("100.tsv", text) + " --data-dir " +
                      data + " --table users")
                .exit_code,
            0);
  text.clear();
  for (int i = 0; i < 89; ++i) text += StrCat("key", i, "\tv\n");
  const std::string in89 = Write("89.tsv", text);
  r = RoostLoad("build -q -i " + in89 + " --data-dir " + data +
                " --table users --max-shrink 10%");
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_EQ(r.out,
            "roost-load: the new version of users holds 89 keys; v000001 "
            "holds 100, and --max-shrink 10% allows no fewer than 90; nothing "
            "was published\n");
  EXPECT_EQ(Versions(data + "/users"), std::vector<std::string>{"v000001"});
  EXPECT_EQ(RoostLoad("build -q -i " + in89 + " --data-dir " + data +
                      " --table users --max-shrink 11%")
                .exit_code,
            0);
  r = RoostLoad("build -q --allow-empty -i - --data-dir " + data +
                " --table users < /dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Versions(data + "/users"),
            (std::vector<std::string>{"v000001", "v000002", "v000003"}));
  EXPECT_EQ(JsonUint64(ParseOrFail(ReadFile(data + "/users/v000003/MANIFEST")),
                       "keys"),
            0u);
}

// Defect 13: a refused first build leaves no table directory behind (which
// a server would report as a table without a version); a refused later one
// leaves the table as it was.
TEST_F(RoostLoadTest, ARefusedFirstBuildLeavesNoTableDirectory) {
  const std::string data = dir_.File("data");
  const std::string bad = Write("bad.tsv", "a\t1\nno tab\n");
  for (const std::string format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    const Result r = RoostLoad("build -q --format " + format + " -i " + bad +
                               " --data-dir " + data + " --table new");
    EXPECT_EQ(r.exit_code, 65) << r.out;
    EXPECT_FALSE(fs::exists(data + "/new"));
    EXPECT_TRUE(fs::is_directory(data));
  }
  ASSERT_EQ(RoostLoad("build -q -i " + Write("ok.tsv", "a\t1\n") +
                      " --data-dir " + data + " --table new")
                .exit_code,
            0);
  EXPECT_EQ(
      RoostLoad("build -q -i " + bad + " --data-dir " + data + " --table new")
          .exit_code,
      65);
  EXPECT_EQ(Versions(data + "/new"), std::vector<std::string>{"v000001"});
}

// Defect 11: `build -o FILE` writes through no link planted beside FILE;
// it used to open FILE.tmp-<pid> with a create-and-truncate that followed
// symbolic links.
TEST_F(RoostLoadTest, BuildWritesThroughNoPlantedLink) {
  const std::string victim = Write("victim", "precious");
  const std::string in = Write("in.tsv", "a\t1\n");
  const std::string out = dir_.File("t.sst");
  const pid_t pid = fork();
  if (pid == 0) {
    // roost-load runs with this pid: plant the link it used to write
    // through, then become it.
    const std::string link = StrCat(out, ".tmp-", getpid());
    if (symlink(victim.c_str(), link.c_str()) != 0) _exit(126);
    execl(LoadBinary(), LoadBinary(), "build", "-q", "-i", in.c_str(), "-o",
          out.c_str(), nullptr);
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  int status;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFile(victim), "precious");
  EXPECT_EQ(RoostLoad("get " + out + " a").out, "a\t1\n");
  // A link at FILE itself is replaced, not written through.
  fs::remove(out);
  fs::create_symlink(victim, out);
  ASSERT_EQ(RoostLoad("build -q -i " + in + " -o " + out).exit_code, 0);
  EXPECT_EQ(ReadFile(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_EQ(RoostLoad("get " + out + " a").out, "a\t1\n");
}

}  // namespace
}  // namespace roost::testing
