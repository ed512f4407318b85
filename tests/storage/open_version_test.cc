// The one check of a published version that roost-server and roost-load
// verify share (storage/version/open_version.h), and the data directory's names
// (storage/version/data_dir.h): each way a version can disagree with itself is
// refused with the same error by both, and nothing in a data directory makes
// either throw.

#include "storage/version/open_version.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <limits>

#include "storage/version/data_dir.h"
#include "tests/harness/manifest_edit.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/file.h"
#include "util/json.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;

struct LoadRun {
  int exit_code;
  std::string out;
};

LoadRun RoostLoad(const std::string& args) {
  const std::string command = StrCat(ROOST_LOAD_BINARY, " ", args, " 2>&1");
  LoadRun run{-1, ""};
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0)
    run.out.append(buf, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

class OpenVersionTest : public ::testing::Test {
 protected:
  // Publishes DATA/t/v000001 from `tsv` with roost-load, in `format`.
  std::string Publish(const std::string& tsv,
                      const std::string& format = "cuckoo") {
    const std::string in = dir_.File("in.tsv");
    WriteFile(in, tsv);
    const LoadRun r = RoostLoad(StrCat("build -q --format ", format, " -i ", in,
                                       " --data-dir ", data_, " --table t"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return data_ + "/t/v000001";
  }
  // OpenVersion's error message, and roost-load verify's agrees.
  std::string Refusal(const std::string& version_dir) {
    VersionOpenOptions options;
    options.check_file_checksum = true;
    auto v = OpenVersion(version_dir, options);
    EXPECT_FALSE(v.ok());
    if (v.ok()) return "";
    const LoadRun r = RoostLoad("verify " + version_dir);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find(std::string(v.status().message())), std::string::npos)
        << r.out;
    return std::string(v.status().message());
  }

  ScratchDir dir_;
  const std::string data_ = dir_.File("data");
};

TEST_F(OpenVersionTest, AGoodVersionPasses) {
  for (const std::string format : {"cuckoo", "block"}) {
    fs::remove_all(data_);
    const std::string v = Publish("a\t1\nbb\t22\nccc\t333\n", format);
    VersionOpenOptions options;
    options.check_file_checksum = true;
    auto opened = OpenVersion(v, options);
    ASSERT_OK(opened) << opened.status();
    EXPECT_EQ(opened->table, "t");
    EXPECT_EQ(opened->version, 1u);
    EXPECT_EQ(opened->file->num_keys(), 3u);
    EXPECT_EQ(RoostLoad("verify " + v).exit_code, 0);
  }
}

TEST_F(OpenVersionTest, TheManifestMustNameThisTableAndVersion) {
  const std::string v = Publish("k\tv\n");
  EditManifest(v, [](Json& m) { m["table"] = "other"; });
  EXPECT_EQ(Refusal(v), v + "/MANIFEST: is for table \"other\" version 1, "
                            "not \"t\" version 1");
  EditManifest(v, [](Json& m) {
    m["table"] = "t";
    m["version"] = 7;
  });
  EXPECT_EQ(Refusal(v), v + "/MANIFEST: is for table \"t\" version 7, not "
                            "\"t\" version 1");
}

TEST_F(OpenVersionTest, OnlyTheCanonicalNameIsAVersion) {
  const std::string v = Publish("k\tv\n");
  const std::string v2 = data_ + "/t/v1";
  fs::rename(v, v2);
  EXPECT_EQ(Refusal(v2), v2 + " is not a version directory (expected a name "
                              "such as v000001)");
  EXPECT_EQ(ParseVersionDirName("v000001"), 1u);
  EXPECT_EQ(ParseVersionDirName("v1234567"), 1234567u);
  for (const char* name : {"v1", "v0000001", "v000000", "v", "v00000a",
                           "v-00001", "v18446744073709551616"}) {
    EXPECT_EQ(ParseVersionDirName(name), std::nullopt) << name;
  }
  EXPECT_EQ(ParseVersionDirName("v18446744073709551615"),
            std::numeric_limits<uint64_t>::max());
}

TEST_F(OpenVersionTest, TheManifestMustListExactlyTheTableFile) {
  const std::string v = Publish("k\tv\n");
  EditManifest(v, [](Json& m) { m["files"][0]["name"] = "other.sst"; });
  EXPECT_EQ(Refusal(v), v + "/MANIFEST: lists 1 files; a version holds "
                            "exactly one, table.sst");
  EditManifest(v, [](Json& m) {
    m["files"][0]["name"] = "table.sst";
    m["files"].push_back(m["files"][0]);
  });
  EXPECT_EQ(Refusal(v), v + "/MANIFEST: lists 2 files; a version holds "
                            "exactly one, table.sst");
}

TEST_F(OpenVersionTest, TheManifestMustAgreeWithTheFile) {
  const std::string v = Publish("aa\t1\nbb\t2\ncc\t3\n");
  const auto refused = [&](const std::function<void(Json&)>& edit,
                           const std::string& message) {
    const std::string good = ReadFile(v + "/MANIFEST");
    EditManifest(v, edit);
    EXPECT_EQ(Refusal(v), v + "/MANIFEST: " + message);
    WriteFile(v + "/MANIFEST", good);
  };
  refused([](Json& m) { m["format"] = "block"; },
          "says format block; the table file has cuckoo");
  refused([](Json& m) { m["format_version"] = "1.7"; },
          "says format version 1.7; the table file has 1.0");
  refused([](Json& m) { m["keys"] = 4; }, "says keys 4; the table file has 3");
  refused([](Json& m) { m["key_width"] = 3; },
          "says key width 3; the table file has keys of 2 to 2 bytes");
  refused([](Json& m) { m["key_width"] = nullptr; },
          "says key width none (keys of several lengths); the table file has "
          "keys of exactly 2 bytes");
  refused([](Json& m) { m["key_bytes"] = 7; },
          "says key bytes 7; the table file has 6");
  refused([](Json& m) { m["value_bytes"] = 1; },
          "says value bytes 1; the table file has 3");
  refused([](Json& m) { m["files"][0]["size"] = 100; },
          "says table.sst size 100; the table file has " +
              std::to_string(fs::file_size(v + "/table.sst")));
}

TEST_F(OpenVersionTest, AVersionStillArrivingIsIncomplete) {
  const std::string v = Publish("k\tv\n");
  const std::string bytes = ReadFile(v + "/table.sst");
  fs::permissions(v, fs::perms::owner_all, fs::perm_options::add);
  fs::remove(v + "/table.sst");
  auto opened = OpenVersion(v, {});
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(opened.status().message(),
            StrCat("incomplete version: ", v, "/table.sst has 0 of the ",
                   bytes.size(), " bytes its MANIFEST lists"));
  WriteFile(v + "/table.sst", bytes.substr(0, 100));
  EXPECT_EQ(OpenVersion(v, {}).status().code(), absl::StatusCode::kUnavailable);
  WriteFile(v + "/table.sst", bytes);
  EXPECT_OK(OpenVersion(v, {}));
}

TEST_F(OpenVersionTest, OnlyRegularFilesOfBoundedSizeAreRead) {
  const std::string v = Publish("k\tv\n");
  fs::permissions(v, fs::perms::owner_all, fs::perm_options::add);
  const std::string manifest = v + "/MANIFEST";
  // A FIFO is refused at once (reading it would wait for a writer forever).
  fs::remove(manifest);
  ASSERT_EQ(::mkfifo(manifest.c_str(), 0644), 0);
  EXPECT_EQ(Refusal(v), "cannot open " + manifest + ": not a regular file");
  // A link to a device that never ends.
  fs::remove(manifest);
  fs::create_symlink("/dev/zero", manifest);
  EXPECT_EQ(Refusal(v), "cannot open " + manifest + ": not a regular file");
  // Too large to be a MANIFEST.
  fs::remove(manifest);
  WriteFile(manifest, std::string(kMaxManifestSize + 1, ' '));
  EXPECT_EQ(Refusal(v),
            StrCat(manifest, " is larger than ", kMaxManifestSize, " bytes"));
  // ReadRegularFile without following links.
  fs::remove(manifest);
  WriteFile(dir_.File("real"), "x");
  fs::create_symlink(dir_.File("real"), manifest);
  EXPECT_EQ(ReadRegularFile(manifest, 10, /*follow_symlinks=*/false)
                .status()
                .message(),
            "cannot open " + manifest + ": a symbolic link, not a file");
  EXPECT_EQ(*ReadRegularFile(manifest, 10), "x");
}

// A MANIFEST of 300,000 members parses in linear time (the hand-written
// parser took minutes; a test of minutes would time out in ctest).
TEST_F(OpenVersionTest, AManifestOfManyMembersParses) {
  const std::string v = Publish("k\tv\n");
  size_t options = 0;
  EditManifest(v, [&](Json& m) {
    options = m["build_options"].size();
    for (int i = 0; i < 300000; ++i) {
      m["build_options"][std::string("x").append(std::to_string(i))] = i;
    }
  });
  auto opened = OpenVersion(v, {});
  ASSERT_OK(opened) << opened.status();
  EXPECT_EQ(opened->manifest.build_options.size(), options + 300000);
}

TEST_F(OpenVersionTest, ListingNeverThrowsAndNumbersNeverWrap) {
  Publish("k\tv\n");
  fs::create_directory(data_ + "/t/v2");       // not a version: ignored
  fs::create_directory(data_ + "/t/v000005");  // no MANIFEST: incomplete
  auto versions = ListVersions(data_ + "/t");
  ASSERT_OK(versions);
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_TRUE((*versions)[0].complete);
  EXPECT_FALSE((*versions)[1].complete);
  EXPECT_EQ((*versions)[1].problem, "");
  EXPECT_EQ(*NextVersion(*versions), 6u);
  EXPECT_EQ(ListVersions(data_ + "/nope").status().code(),
            absl::StatusCode::kNotFound);

  // The largest number there is: no next one, and roost-load says so
  // instead of publishing v000000.
  fs::create_directory(data_ + "/t/v18446744073709551615");
  versions = ListVersions(data_ + "/t");
  ASSERT_OK(versions);
  EXPECT_EQ(NextVersion(*versions).status().message(),
            "no version number is left after v18446744073709551615 in " +
                data_ + "/t");
  WriteFile(dir_.File("more.tsv"), "k\tv2\n");
  const LoadRun r = RoostLoad("build -q -i " + dir_.File("more.tsv") +
                              " --data-dir " + data_ + " --table t");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find("no version number is left after "
                       "v18446744073709551615"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(data_ + "/t/v000000"));
  EXPECT_FALSE(fs::exists(data_ + "/t/v0"));
}

// As root every directory can be searched, so a version directory that
// cannot be is tried in a child process that gives root up.
TEST_F(OpenVersionTest, AnUnsearchableVersionIsAProblemNotAThrow) {
  const std::string v = Publish("k\tv\n");
  fs::create_directory(data_ + "/t/v000002");
  ::chmod((data_ + "/t/v000002").c_str(), 0);
  for (std::string d = data_ + "/t"; d.size() > 1;
       d = fs::path(d).parent_path().string()) {
    ::chmod(d.c_str(), 0755);
    if (d == "/tmp") break;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::getuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      ::_exit(10);
    }
    auto versions = ListVersions(data_ + "/t");
    if (!versions.ok() || versions->size() != 2) ::_exit(11);
    const TableVersion& bad = (*versions)[1];
    if (bad.complete) ::_exit(12);
    const std::string want =
        "cannot search " + data_ + "/t/v000002: Permission denied";
    ::_exit(bad.problem == want ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ::chmod((data_ + "/t/v000002").c_str(), 0755);
}

}  // namespace
}  // namespace roost::testing
