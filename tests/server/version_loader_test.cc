// LoadVersion's trust in files the puller verified as it wrote them
// (server/verified_files.h): a noted file that is still as it was opens
// without the pass over its region checksums; one changed since, or not
// noted, or rechecked after a change, is verified in full.

#include "server/version_loader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "server/verified_files.h"
#include "storage/version/data_dir.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct stat StatOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st;
}

// File times move by the filesystem clock's tick (a few ms on kernels
// without fine-grained timestamps): wait one out between a note and a
// change, as any pull and a later write are apart.
void NextTick() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

// Flips the byte at `offset` of the read-only file `path` in place.
void FlipByte(const std::string& path, uint64_t offset) {
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  char c;
  ASSERT_EQ(::pread(fd, &c, 1, static_cast<off_t>(offset)), 1);
  c ^= 0x40;
  ASSERT_EQ(::pwrite(fd, &c, 1, static_cast<off_t>(offset)), 1);
  ::close(fd);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
}

TEST(VerifiedFilesTest, MatchesOnlyTheFileAsItWasNoted) {
  ScratchDir dir;
  const std::string path = dir.File("f");
  WriteFile(path, "table bytes");
  VerifiedFiles verified;
  EXPECT_FALSE(verified.Matches(path));
  verified.Note(path, StatOf(path));
  EXPECT_TRUE(verified.Matches(path));
  EXPECT_FALSE(verified.Matches(dir.File("other")));

  // A chmod moves only the change time.
  NextTick();
  ASSERT_EQ(::chmod(path.c_str(), 0400), 0);
  EXPECT_FALSE(verified.Matches(path));

  // A write of the same size, with the modification time put back: the
  // change time still shows it.
  verified.Note(path, StatOf(path));
  const struct stat before = StatOf(path);
  NextTick();
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  WriteFile(path, "TABLE bytes");
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  ASSERT_EQ(StatOf(path).st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  EXPECT_FALSE(verified.Matches(path));

  // Another file renamed over the path.
  verified.Note(path, StatOf(path));
  WriteFile(dir.File("copy"), ReadFile(path));
  ASSERT_EQ(::rename(dir.File("copy").c_str(), path.c_str()), 0);
  EXPECT_FALSE(verified.Matches(path));
  // And a file gone.
  verified.Note(path, StatOf(path));
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_FALSE(verified.Matches(path));
}

TEST(VerifiedFilesTest, KeepsTheNewestNotes) {
  ScratchDir dir;
  VerifiedFiles verified;
  std::vector<std::string> paths;
  for (size_t i = 0; i <= VerifiedFiles::kCapacity; ++i) {
    paths.push_back(dir.File(StrCat("f", i)));
    WriteFile(paths.back(), "x");
    verified.Note(paths.back(), StatOf(paths.back()));
  }
  EXPECT_FALSE(verified.Matches(paths.front()));
  EXPECT_TRUE(verified.Matches(paths[1]));
  EXPECT_TRUE(verified.Matches(paths.back()));
  // Noting a path again replaces its note, and makes it the newest.
  verified.Note(paths[1], StatOf(paths[1]));
  WriteFile(dir.File("g"), "x");
  verified.Note(dir.File("g"), StatOf(dir.File("g")));
  EXPECT_TRUE(verified.Matches(paths[1]));
  EXPECT_FALSE(verified.Matches(paths[2]));
}

class LoadVersionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string in = dir_.File("in.tsv");
    std::string tsv;
    for (int i = 0; i < 2000; ++i) tsv += StrCat("key", i, "\tvalue", i, "\n");
    WriteFile(in, tsv);
    const std::string command =
        StrCat(ROOST_LOAD_BINARY, " build -q --format cuckoo -i ", in,
               " --data-dir ", dir_.File("data"), " --table t 2>&1");
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    version_dir_ = dir_.File("data/t/v000001");
    table_ = StrCat(version_dir_, "/", kTableFileName);
    verified_ = std::make_shared<VerifiedFiles>();
  }

  LoadOutcome Load(bool trust, bool recheck = false) {
    LoadOptions options;
    if (trust) options.verified = verified_;
    options.open.check_file_checksum = recheck;
    return LoadVersion(version_dir_, 1, options);
  }

  // A byte in the middle of the buckets, which a region checksum covers.
  uint64_t Middle() const { return fs::file_size(table_) / 2; }

  ScratchDir dir_;
  std::string version_dir_;
  std::string table_;
  std::shared_ptr<VerifiedFiles> verified_;
};

TEST_F(LoadVersionTest, ANotedUnchangedFileSkipsOnlyTheRegionPass) {
  LoadOutcome plain = Load(true);
  ASSERT_OK(plain.version);
  EXPECT_FALSE((*plain.version)->verified_when_pulled);

  verified_->Note(table_, StatOf(table_));
  LoadOutcome trusted = Load(true);
  ASSERT_OK(trusted.version);
  EXPECT_TRUE((*trusted.version)->verified_when_pulled);
  EXPECT_EQ((*trusted.version)->table().num_keys(), 2000u);
}

TEST_F(LoadVersionTest, TheRegionPassIsWhatANoteSkips) {
  // A corrupt file noted as verified (which the puller never does: its
  // bytes would not match the MANIFEST's XXH3) opens: the region pass was
  // skipped. Without the note the same file is refused.
  NextTick();
  FlipByte(table_, Middle());
  EXPECT_THAT(Load(false).version,
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum")));
  verified_->Note(table_, StatOf(table_));
  EXPECT_OK(Load(true).version);
  // A version rechecked after a change is checked whole, note or not.
  EXPECT_THAT(Load(true, /*recheck=*/true).version,
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST_F(LoadVersionTest, AFileChangedAfterItsNoteIsVerifiedInFull) {
  verified_->Note(table_, StatOf(table_));
  NextTick();
  FlipByte(table_, Middle());
  LoadOutcome outcome = Load(true);
  EXPECT_THAT(outcome.version,
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum")));
}

}  // namespace
}  // namespace roost::testing
