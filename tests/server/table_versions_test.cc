// TableVersions, the registry's rules, in process: a table of cases per
// rule (build this state, apply this event, expect this decision; LevelDB's
// version_set_test.cc), and the sequences a real roost-server goes through
// (a lease break, a rollback and a new version after it). The same rules
// through a real server: server_versions_test, server_rollback_test,
// server_swap_test, server_datadir_test, server_repository_test.
#include "server/table_versions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/harness/status_matchers.h"

namespace roost {
namespace {

using ::roost::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Local = RepositoryPointer::Local;
using LoadResult = TableVersions::LoadResult;
using Readiness = TableVersions::Readiness;
using Clock = TableVersions::Clock;
using namespace std::chrono_literals;

constexpr auto kGrace = 30s;

RepositoryPointer Pointer(uint64_t version, Local local = Local::kMatches,
                          uint64_t generation = 0) {
  return {.version = version, .local = local, .generation = generation};
}

// A table's state, as a case builds it.
struct State {
  std::vector<uint64_t> on_disk{};
  uint64_t serving = 0;  // 0: none
  uint64_t generation = 0;
  std::optional<uint64_t> pinned{};
  std::set<uint64_t> rolled_back{};
  std::map<uint64_t, std::string> failed{};  // version: reason
  std::vector<uint64_t> loading{};
  size_t keep_versions = 0;
  bool repository = false;
  // With `repository`: whether the POINTERs were read, and the table's.
  bool pointers_read = false;
  std::optional<RepositoryPointer> pointer{};
  bool from_repository = false;
};

TableVersions Build(const State& s) {
  TableVersions v("t", {.keep_versions = s.keep_versions,
                        .version_grace = kGrace,
                        .repository = s.repository});
  v.Listed(s.on_disk, {});
  v.SetRollbackState({s.pinned, s.rolled_back});
  for (const auto& [version, reason] : s.failed) {
    v.Failed(version, {reason, "fp"});
  }
  if (s.pointers_read || s.pointer) v.SetPointer(s.pointer);
  if (s.from_repository) v.NoteFromRepository();
  if (s.serving != 0) v.Served(s.serving, s.generation);
  for (uint64_t l : s.loading) v.StartLoad(l);
  return v;
}

// Which version serves.

struct NextCase {
  std::string name;
  State state;
  uint64_t next;  // 0: none to load
};

class NextTest : public ::testing::TestWithParam<NextCase> {};

TEST_P(NextTest, Decides) {
  const TableVersions v = Build(GetParam().state);
  EXPECT_EQ(v.Next(), GetParam().next);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, NextTest,
    ::testing::ValuesIn(std::vector<NextCase>{
        {"NothingOnDisk", {}, 0},
        {"TheNewestServes", {.on_disk = {1, 2, 3}}, 3},
        {"TheNewestServesAlready", {.on_disk = {1, 2, 3}, .serving = 3}, 0},
        {"ANewerVersionArrives", {.on_disk = {1, 2, 3, 4}, .serving = 3}, 4},
        {"NeverBackPastTheServed", {.on_disk = {1, 2}, .serving = 3}, 0},
        {"AFailedNewerVersionLeavesTheServedServing",
         {.on_disk = {1, 2, 3}, .serving = 2, .failed = {{3, "corrupt"}}},
         0},
        {"AFailedNewestGivesTheNextNewest",
         {.on_disk = {1, 2, 3}, .failed = {{3, "corrupt"}}},
         2},
        {"RolledBackFromIsSkipped",
         {.on_disk = {1, 2, 3}, .rolled_back = {3}},
         2},
        {"APinHoldsAgainstANewerVersion",
         {.on_disk = {1, 2, 3, 4}, .serving = 2, .pinned = 2},
         0},
        {"APinnedVersionNotServedYet",
         {.on_disk = {1, 2, 3}, .serving = 3, .pinned = 2},
         2},
        {"APinOnAVersionNotOnDiskIsPassedOver",
         {.on_disk = {1, 3}, .serving = 1, .pinned = 2},
         3},
        {"APinOnAFailedVersionIsPassedOver",
         {.on_disk = {1, 2, 3},
          .pinned = 2,
          .rolled_back = {3},
          .failed = {{2, "corrupt"}}},
         1},
        {"RepositoryNothingBeforeThePointersAreRead",
         {.on_disk = {1, 2}, .repository = true},
         0},
        {"RepositoryThePointerGoesBack",
         {.on_disk = {1, 2},
          .serving = 2,
          .repository = true,
          .pointer = Pointer(1)},
         1},
        {"RepositoryThePointerGoesForward",
         {.on_disk = {1, 2, 3},
          .serving = 1,
          .repository = true,
          .pointer = Pointer(2)},
         2},
        {"RepositoryThePointersVersionServesAlready",
         {.on_disk = {1, 2, 3},
          .serving = 2,
          .repository = true,
          .pointer = Pointer(2)},
         0},
        {"RepositoryACopyNotComparedYetWaits",
         {.on_disk = {1, 2},
          .serving = 1,
          .repository = true,
          .pointer = Pointer(2, Local::kUnknown)},
         0},
        {"RepositoryACopyThatDiffersWaits",
         {.on_disk = {1, 2},
          .serving = 1,
          .repository = true,
          .pointer = Pointer(2, Local::kDiffers)},
         0},
        {"RepositoryAPointerToAVersionNotLocal",
         {.on_disk = {1, 2},
          .serving = 2,
          .repository = true,
          .pointer = Pointer(3)},
         0},
        {"RepositoryAPointerToAFailedVersion",
         {.on_disk = {1, 2},
          .serving = 1,
          .failed = {{2, "corrupt"}},
          .repository = true,
          .pointer = Pointer(2)},
         0},
        {"RepositoryANewCopyOfTheServedNumberLoadsAgain",
         {.on_disk = {1, 2},
          .serving = 2,
          .generation = 4,
          .repository = true,
          .pointer = Pointer(2, Local::kMatches, 5)},
         2},
        {"RepositoryAPinWinsOverThePointer",
         {.on_disk = {1, 2, 3},
          .serving = 3,
          .pinned = 2,
          .repository = true,
          .pointer = Pointer(3)},
         2},
        {"RepositoryNoPointerForATableFromTheRepositoryKeepsWhatItServes",
         {.on_disk = {1, 2, 3},
          .serving = 2,
          .repository = true,
          .pointers_read = true,
          .from_repository = true},
         0},
        {"RepositoryNoPointerNeverInTheRepositoryServesTheNewest",
         {.on_disk = {1, 2, 3},
          .serving = 2,
          .repository = true,
          .pointers_read = true},
         3},
    }),
    [](const auto& info) { return info.param.name; });

TEST(NextTest, LoadNextWaitsForTheLoadInFlight) {
  TableVersions v = Build({.on_disk = {1, 2}});
  EXPECT_EQ(v.LoadNext(), 2u);
  v.StartLoad(2);
  EXPECT_TRUE(v.loading());
  EXPECT_EQ(v.LoadNext(), 0u);
  EXPECT_EQ(v.Next(), 2u);
}

// A scan: failures forgotten when their files change, versions watched.

TEST(ScanTest, AFailedVersionIsTriedAgainOnceItsFilesChange) {
  TableVersions v = Build({.on_disk = {1, 2}});
  v.Failed(2, {"corrupt", "a"});
  EXPECT_TRUE(v.FailedAlike(2, "a"));
  EXPECT_FALSE(v.FailedAlike(2, "b"));
  EXPECT_FALSE(v.FailedAlike(1, "a"));
  EXPECT_EQ(v.Next(), 1u);
  v.Listed({1, 2}, {{2, "a"}});
  EXPECT_EQ(v.Next(), 1u);
  v.Listed({1, 2}, {});  // its fingerprint not read: as it was
  EXPECT_EQ(v.Next(), 1u);
  v.Listed({1, 2}, {{2, "b"}});
  EXPECT_THAT(v.failed(), IsEmpty());
  EXPECT_EQ(v.Next(), 2u);
}

TEST(ScanTest, AFailedVersionNotListedIsRemembered) {
  TableVersions v = Build({.on_disk = {1, 2}});
  v.Failed(2, {"corrupt", "a"});
  v.Listed({1}, {{2, "b"}});
  EXPECT_EQ(v.failed().count(2), 1u);
  EXPECT_THAT(v.on_disk(), ElementsAre(1));
}

struct WatchedCase {
  std::string name;
  State state;
  std::set<uint64_t> incomplete;  // from the scan
  // What happened to version 2 before the scan.
  std::function<void(TableVersions&)> before;
  std::set<uint64_t> watched;
};

class WatchedTest : public ::testing::TestWithParam<WatchedCase> {};

TEST_P(WatchedTest, Decides) {
  TableVersions v = Build(GetParam().state);
  if (GetParam().before) GetParam().before(v);
  EXPECT_EQ(v.Watched(GetParam().incomplete), GetParam().watched);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, WatchedTest,
    ::testing::ValuesIn(std::vector<WatchedCase>{
        {"NothingToWatch", {.on_disk = {1, 2}}, {}, nullptr, {}},
        {"VersionsBeingCopiedIn", {.on_disk = {1}}, {2, 3}, nullptr, {2, 3}},
        {"AVersionThatFailedIncomplete",
         {.on_disk = {1, 2}, .failed = {{2, "incomplete"}}},
         {},
         nullptr,
         {2}},
        {"NotAVersionThatFailedOtherwise",
         {.on_disk = {1, 2}, .failed = {{2, "corrupt"}}},
         {},
         nullptr,
         {}},
        {"AVersionALoadFoundOpenForWriting",
         {.on_disk = {1, 2}},
         {},
         [](TableVersions& v) {
           v.StartLoad(2);
           v.Loaded(2, LoadResult::kBusy);
         },
         {2}},
        {"NotOnceItLoaded",
         {.on_disk = {1, 2}},
         {},
         [](TableVersions& v) {
           v.StartLoad(2);
           v.Loaded(2, LoadResult::kBusy);
           v.StartLoad(2);
           v.Loaded(2, LoadResult::kLoaded);
         },
         {}},
        {"AServedVersionAWriterOpened",
         {.on_disk = {1, 2}, .serving = 2},
         {},
         [](TableVersions& v) { v.Modified(2); },
         {2}},
        {"NotOnceItsCheckFoundItChanged",
         {.on_disk = {1, 2}, .serving = 2},
         {},
         [](TableVersions& v) {
           v.Modified(2);
           v.StartLoad(2);
           v.Loaded(2, LoadResult::kFailed);
           v.Failed(2, {"corrupt", "fp"});
         },
         {}},
    }),
    [](const auto& info) { return info.param.name; });

// Loads and what follows them.

struct LoadCase {
  std::string name;
  State state;
  // Before the load starts (a writer, say).
  std::function<void(TableVersions&)> before;
  uint64_t version;
  LoadResult result;
  bool check_file_checksum;
  TableVersions::AfterLoad after;
};

class LoadTest : public ::testing::TestWithParam<LoadCase> {};

TEST_P(LoadTest, Decides) {
  const LoadCase& c = GetParam();
  TableVersions v = Build(c.state);
  if (c.before) c.before(v);
  EXPECT_EQ(v.StartLoad(c.version).check_file_checksum, c.check_file_checksum);
  const TableVersions::AfterLoad after = v.Loaded(c.version, c.result);
  EXPECT_EQ(after.rechecked, c.after.rechecked);
  EXPECT_EQ(after.first_busy, c.after.first_busy);
  EXPECT_EQ(after.serve, c.after.serve);
  EXPECT_EQ(after.load_next, c.after.load_next);
  EXPECT_FALSE(v.loading());
}

const auto kBusyOnce = [](TableVersions& v) {
  v.StartLoad(3);
  v.Loaded(3, LoadResult::kBusy);
};
const auto kWriterOpened3 = [](TableVersions& v) {
  v.Modified(3);
  v.StoppedServing();
};

INSTANTIATE_TEST_SUITE_P(
    Rules, LoadTest,
    ::testing::ValuesIn(std::vector<LoadCase>{
        {"TheNewestLoadedServes",
         {.on_disk = {1, 2, 3}, .serving = 2},
         nullptr,
         3,
         LoadResult::kLoaded,
         false,
         {.serve = true, .load_next = true}},
        {"ALoadedVersionNoLongerToServeDoesNot",
         {.on_disk = {1, 2, 3, 4}, .serving = 2},
         nullptr,
         3,
         LoadResult::kLoaded,
         false,
         {.load_next = true}},
        {"AFailedLoadAsksForTheNext",
         {.on_disk = {1, 2, 3}, .serving = 2},
         nullptr,
         3,
         LoadResult::kFailed,
         false,
         {.load_next = true}},
        {"BusyIsSaidOnceAndNotRetriedAtOnce",
         {.on_disk = {1, 2, 3}, .serving = 2},
         nullptr,
         3,
         LoadResult::kBusy,
         false,
         {.first_busy = true}},
        {"BusyAgainIsNotSaidAgain",
         {.on_disk = {1, 2, 3}, .serving = 2},
         kBusyOnce,
         3,
         LoadResult::kBusy,
         false,
         {}},
        {"AfterAWriterTheVersionIsCheckedWholeAndServesIfIntact",
         {.on_disk = {1, 2, 3}, .serving = 3},
         kWriterOpened3,
         3,
         LoadResult::kLoaded,
         true,
         {.rechecked = true, .serve = true, .load_next = true}},
        {"AfterAWriterAChangedVersionIsRechecked",
         {.on_disk = {1, 2, 3}, .serving = 3},
         kWriterOpened3,
         3,
         LoadResult::kFailed,
         true,
         {.rechecked = true, .load_next = true}},
        {"AfterAWriterStillWritingIsNotACheck",
         {.on_disk = {1, 2, 3}, .serving = 3},
         kWriterOpened3,
         3,
         LoadResult::kBusy,
         true,
         {.first_busy = true}},
    }),
    [](const auto& info) { return info.param.name; });

TEST(LoadTest, TheGenerationIsThePointersForItsVersionOnly) {
  TableVersions v = Build({.on_disk = {1, 2, 3},
                           .repository = true,
                           .pointer = Pointer(3, Local::kMatches, 7)});
  EXPECT_EQ(v.StartLoad(3).generation, 7u);
  EXPECT_EQ(v.StartLoad(2).generation, 0u);
}

TEST(LoadTest, TwoLoadsOfOneVersionAreTwoInFlight) {
  TableVersions v = Build({.on_disk = {1, 2}});
  v.StartLoad(2);
  v.StartLoad(2);
  v.Loaded(2, LoadResult::kLoaded);
  EXPECT_TRUE(v.loading());
  v.Loaded(2, LoadResult::kLoaded);
  EXPECT_FALSE(v.loading());
}

// A writer breaks the lease of the version served (the sequence the
// registry runs: tests/server/server_datadir_test.cc does it with a real
// server).

TEST(WriterTest, AVersionATouchLeftIntactServesAgainNotAnOlderOne) {
  TableVersions v = Build({.on_disk = {1, 2, 3}, .serving = 3});
  v.Modified(3);
  v.StoppedServing();
  EXPECT_EQ(v.Next(), 3u);  // not 2: a touch is not a rollback
  EXPECT_THAT(v.Watched({}), ElementsAre(3));
  ASSERT_TRUE(v.StartLoad(3).check_file_checksum);
  EXPECT_TRUE(v.Loaded(3, LoadResult::kBusy).first_busy);
  ASSERT_TRUE(v.StartLoad(3).check_file_checksum);
  const TableVersions::AfterLoad after = v.Loaded(3, LoadResult::kLoaded);
  EXPECT_TRUE(after.rechecked);
  ASSERT_TRUE(after.serve);
  v.Served(3, 0);
  EXPECT_EQ(v.Next(), 0u);
  EXPECT_THAT(v.Watched({}), IsEmpty());
  EXPECT_FALSE(v.StartLoad(3).check_file_checksum);
}

TEST(WriterTest, AChangedVersionFailsAndTheNextBestServes) {
  TableVersions v = Build({.on_disk = {1, 2, 3}, .serving = 3});
  v.Modified(3);
  v.StoppedServing();
  v.StartLoad(3);
  EXPECT_TRUE(v.Loaded(3, LoadResult::kFailed).rechecked);
  v.Failed(3, {"corrupt", "changed"});
  EXPECT_EQ(v.Next(), 2u);
  // Changed back (its fingerprint moves again): tried, and checked whole.
  v.Listed({1, 2, 3}, {{3, "back"}});
  EXPECT_EQ(v.Next(), 3u);
  EXPECT_TRUE(v.StartLoad(3).check_file_checksum);
}

TEST(WriterTest, AChangedOnlyVersionLeavesNothingToServe) {
  TableVersions v = Build({.on_disk = {3}, .serving = 3});
  v.Modified(3);
  v.StoppedServing();
  EXPECT_EQ(v.Next(), 3u);
  v.StartLoad(3);
  v.Loaded(3, LoadResult::kFailed);
  v.Failed(3, {"corrupt", "changed"});
  EXPECT_EQ(v.Next(), 0u);
  EXPECT_EQ(v.Ready(), Readiness::kStuck);
}

TEST(WriterTest, AHeldVersionAWriterOpenedIsCheckedBeforeItServesAgain) {
  TableVersions v = Build({.on_disk = {1, 2, 3}, .serving = 2});
  ASSERT_TRUE(v.HoldsOnSwap(3, /*forward=*/true, /*unmodified=*/true));
  v.Hold(Clock::time_point{});
  v.Served(3, 0);
  v.Modified(2);
  v.Release();
  EXPECT_FALSE(v.held());
  EXPECT_EQ(v.Next(), 0u);                          // 3 serves on
  EXPECT_TRUE(v.StartLoad(2).check_file_checksum);  // a rollback to it
}

// The version held for --version-grace.

struct HoldCase {
  std::string name;
  State state;
  uint64_t replacing;
  bool forward;
  bool unmodified;
  bool holds;
  Clock::duration grace = kGrace;
};

class HoldTest : public ::testing::TestWithParam<HoldCase> {};

TEST_P(HoldTest, Decides) {
  const HoldCase& c = GetParam();
  TableVersions v("t", {.version_grace = c.grace});
  v.Listed(c.state.on_disk, {});
  if (c.state.serving) v.Served(c.state.serving, 0);
  EXPECT_EQ(v.HoldsOnSwap(c.replacing, c.forward, c.unmodified), c.holds);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, HoldTest,
    ::testing::ValuesIn(std::vector<HoldCase>{
        {"AStepForward", {.serving = 2}, 3, true, true, true},
        {"NoGrace", {.serving = 2}, 3, true, true, false, {}},
        {"NothingServed", {}, 3, true, true, false},
        {"ARollback", {.serving = 3}, 2, false, true, false},
        {"AnOlderVersionOtherwise", {.serving = 3}, 2, true, true, false},
        {"ANewCopyOfTheSameNumber", {.serving = 3}, 3, true, true, false},
        {"AFileAWriterOpened", {.serving = 2}, 3, true, false, false},
    }),
    [](const auto& info) { return info.param.name; });

TEST(HoldTest, TheGraceEndsOnTime) {
  TableVersions v = Build({.on_disk = {1, 2}, .serving = 1});
  const Clock::time_point t0 = Clock::now();
  v.Hold(t0);
  v.Served(2, 0);
  ASSERT_TRUE(v.held());
  EXPECT_EQ(v.held()->version, 1u);
  EXPECT_EQ(v.Expired(t0), 0u);
  EXPECT_EQ(v.Expired(t0 + kGrace - 1ms), 0u);
  EXPECT_EQ(v.Expired(t0 + kGrace), 1u);
  // A swap that did not happen puts back what was held before it.
  const std::optional<TableVersions::Held> before = v.held();
  v.Release();
  EXPECT_EQ(v.Expired(t0 + kGrace), 0u);
  v.Restore(before);
  EXPECT_EQ(v.Expired(t0 + kGrace), 1u);
}

// Retention (--keep-versions).

struct PruneCase {
  std::string name;
  State state;
  std::vector<uint64_t> prunable;
};

class PruneTest : public ::testing::TestWithParam<PruneCase> {};

TEST_P(PruneTest, Decides) {
  const TableVersions v = Build(GetParam().state);
  EXPECT_THAT(v.Prunable(), ElementsAreArray(GetParam().prunable));
}

INSTANTIATE_TEST_SUITE_P(
    Rules, PruneTest,
    ::testing::ValuesIn(std::vector<PruneCase>{
        {"KeepingEveryVersion", {.on_disk = {1, 2, 3, 4, 5}, .serving = 5}, {}},
        {"AllButTheNewest",
         {.on_disk = {1, 2, 3, 4, 5}, .serving = 5, .keep_versions = 2},
         {1, 2, 3}},
        {"NoMoreThanKept",
         {.on_disk = {1, 2}, .serving = 2, .keep_versions = 2},
         {}},
        {"AndTheServed",
         {.on_disk = {1, 2, 3, 4, 5}, .serving = 2, .keep_versions = 2},
         {1, 3}},
        {"AndThePinned",
         {.on_disk = {1, 2, 3, 4, 5},
          .serving = 2,
          .pinned = 2,
          .keep_versions = 2},
         {1, 3}},
        {"AndAPinNotServedYet",
         {.on_disk = {1, 2, 3, 4, 5},
          .serving = 5,
          .pinned = 1,
          .keep_versions = 2},
         {2, 3}},
        {"AndOneLoading",
         {.on_disk = {1, 2, 3, 4, 5},
          .serving = 5,
          .loading = {2},
          .keep_versions = 2},
         {1, 3}},
        {"AndThePointers",
         {.on_disk = {1, 2, 3, 4, 5},
          .serving = 5,
          .keep_versions = 2,
          .repository = true,
          .pointer = Pointer(1, Local::kUnknown)},
         {2, 3}},
        {"NoneBeforeThePointersAreRead",
         {.on_disk = {1, 2, 3, 4, 5}, .keep_versions = 2, .repository = true},
         {}},
    }),
    [](const auto& info) { return info.param.name; });

TEST(PruneTest, RemovedVersionsAreNoLongerOnDisk) {
  TableVersions v = Build({.on_disk = {1, 2, 3}, .keep_versions = 1});
  v.Removed(2);
  v.Removed(9);
  EXPECT_THAT(v.on_disk(), ElementsAre(1, 3));
}

// Rollback and unpin.

struct RollbackCase {
  std::string name;
  State state;
  std::string version_text;
  absl::StatusOr<uint64_t> target;
};

class RollbackTest : public ::testing::TestWithParam<RollbackCase> {};

TEST_P(RollbackTest, Decides) {
  const RollbackCase& c = GetParam();
  const absl::StatusOr<uint64_t> target =
      Build(c.state).RollbackTarget(c.version_text);
  if (c.target.ok()) {
    ASSERT_OK(target);
    EXPECT_EQ(*target, *c.target);
  } else {
    EXPECT_THAT(target, StatusIs(c.target.status().code(),
                                 std::string(c.target.status().message())));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rules, RollbackTest,
    ::testing::ValuesIn(std::vector<RollbackCase>{
        {"ServingNothing",
         {.on_disk = {1, 2}},
         "1",
         absl::FailedPreconditionError(
             "table \"t\" serves no version to roll back from")},
        {"ToTheNewestOlder", {.on_disk = {1, 2, 3}, .serving = 3}, "", 2},
        {"ToTheNewestOlderThatDidNotFail",
         {.on_disk = {1, 2, 3}, .serving = 3, .failed = {{2, "corrupt"}}},
         "",
         1},
        {"NoneOlder",
         {.on_disk = {3, 4}, .serving = 3},
         "",
         absl::FailedPreconditionError(
             "table \"t\" has no complete version older than v000003 on "
             "disk")},
        {"ToANumber", {.on_disk = {1, 2, 3}, .serving = 3}, "2", 2},
        {"ToADirectoryName",
         {.on_disk = {1, 2, 3}, .serving = 3},
         "v000001",
         1},
        {"ToAFailedVersionNamed",
         {.on_disk = {1, 2, 3}, .serving = 3, .failed = {{2, "corrupt"}}},
         "2",
         2},
        {"ToANewerVersion", {.on_disk = {1, 2, 3}, .serving = 2}, "3", 3},
        {"ToTheServedVersion", {.on_disk = {1, 2, 3}, .serving = 3}, "3", 3},
        {"ToAMissingVersion",
         {.on_disk = {1, 3}, .serving = 3},
         "2",
         absl::NotFoundError(
             "table \"t\" has no complete version v000002 on disk")},
        {"ToTextThatNamesNoVersion",
         {.on_disk = {1, 2, 3}, .serving = 3},
         "v2",
         absl::InvalidArgumentError(
             "bad version \"v2\" (expected v000003 or 3)")},
    }),
    [](const auto& info) { return info.param.name; });

TEST(RollbackTest, APinHoldsAgainstNewVersionsUntilUnpinned) {
  TableVersions v = Build({.on_disk = {1, 2, 3}, .serving = 3});
  ASSERT_EQ(v.RollbackTarget("2").value_or(0), 2u);
  v.Failed(2, {"corrupt", "fp"});
  v.Retry(2);  // named: tried again
  v.StartLoad(2);
  // Loaded for the rollback, which serves it whatever Next() says.
  EXPECT_FALSE(v.Loaded(2, LoadResult::kLoaded).serve);
  ASSERT_FALSE(v.HoldsOnSwap(2, /*forward=*/false, /*unmodified=*/true));
  v.Served(2, 0);
  v.Pin(2, 3);
  EXPECT_EQ(v.pinned(), 2u);
  EXPECT_THAT(v.rolled_back(), ElementsAre(3));
  EXPECT_EQ(v.Next(), 0u);
  // A new version arrives: the pin holds.
  v.Listed({1, 2, 3, 4}, {});
  EXPECT_EQ(v.Next(), 0u);
  // Unpinned: the newest not rolled back from.
  v.Unpin();
  EXPECT_EQ(v.Next(), 4u);
  const RollbackState saved = v.rollback_state();
  EXPECT_FALSE(saved.pinned);
  EXPECT_THAT(saved.rolled_back, ElementsAre(3));
}

TEST(RollbackTest, UnpinnedWithNothingNewerTheRolledBackFromStaysOut) {
  TableVersions v = Build({.on_disk = {1, 2, 3}, .serving = 3});
  v.Served(2, 0);
  v.Pin(2, 3);
  v.Unpin();
  EXPECT_EQ(v.Next(), 0u);
}

TEST(RollbackTest, RollingBackToARolledBackFromVersionClearsIt) {
  TableVersions v = Build(
      {.on_disk = {1, 2, 3}, .serving = 2, .pinned = 2, .rolled_back = {3}});
  v.Served(3, 0);
  v.Pin(3, 2);
  EXPECT_EQ(v.pinned(), 3u);
  EXPECT_THAT(v.rolled_back(), ElementsAre(2));
  v.Pin(3, 3);  // to the version served: nothing more rolled back from
  EXPECT_THAT(v.rolled_back(), ElementsAre(2));
}

// A repository's POINTER.

struct PointerCase {
  std::string name;
  State state;
  uint64_t stale_copy;
  bool serves_pointer;
};

class PointerTest : public ::testing::TestWithParam<PointerCase> {};

TEST_P(PointerTest, Decides) {
  const TableVersions v = Build(GetParam().state);
  EXPECT_EQ(v.StaleCopy(), GetParam().stale_copy);
  EXPECT_EQ(v.ServesPointer(), GetParam().serves_pointer);
}

INSTANTIATE_TEST_SUITE_P(Rules, PointerTest,
                         ::testing::ValuesIn(std::vector<PointerCase>{
                             {"NoPointer",
                              {.on_disk = {1},
                               .serving = 1,
                               .repository = true,
                               .pointers_read = true},
                              0,
                              false},
                             {"ServesTheMatchedCopy",
                              {.on_disk = {1},
                               .serving = 1,
                               .generation = 2,
                               .repository = true,
                               .pointer = Pointer(1, Local::kMatches, 2)},
                              0,
                              true},
                             {"ServesAnotherCopyOfTheNumber",
                              {.on_disk = {1},
                               .serving = 1,
                               .generation = 1,
                               .repository = true,
                               .pointer = Pointer(1, Local::kMatches, 2)},
                              0,
                              false},
                             {"ServesACopyNotComparedYet",
                              {.on_disk = {1},
                               .serving = 1,
                               .repository = true,
                               .pointer = Pointer(1, Local::kUnknown)},
                              0,
                              false},
                             {"ServesAnotherVersion",
                              {.on_disk = {1, 2},
                               .serving = 1,
                               .repository = true,
                               .pointer = Pointer(2)},
                              0,
                              false},
                             {"ACopyThatDiffersStops",
                              {.on_disk = {1, 2},
                               .serving = 2,
                               .repository = true,
                               .pointer = Pointer(2, Local::kDiffers)},
                              2,
                              false},
                             {"ACopyThatDiffersStopsThoughAnotherIsPinned",
                              {.on_disk = {1, 2},
                               .serving = 1,
                               .pinned = 1,
                               .repository = true,
                               .pointer = Pointer(2, Local::kDiffers)},
                              2,
                              false},
                             {"APinnedCopyThatDiffersServesOn",
                              {.on_disk = {1, 2},
                               .serving = 2,
                               .pinned = 2,
                               .repository = true,
                               .pointer = Pointer(2, Local::kDiffers)},
                              0,
                              false},
                         }),
                         [](const auto& info) { return info.param.name; });

TEST(PointerTest, APointerKnownOnlyOnceRead) {
  TableVersions v = Build({.on_disk = {1, 2}, .repository = true});
  EXPECT_EQ(v.pointer(), nullptr);
  EXPECT_EQ(v.pointer_version(), 0u);
  EXPECT_EQ(v.Next(), 0u);
  v.SetPointer(Pointer(1));
  ASSERT_NE(v.pointer(), nullptr);
  EXPECT_EQ(v.pointer_version(), 1u);
  EXPECT_EQ(v.Next(), 1u);
  EXPECT_FALSE(v.from_repository());
  // Gone from the repository: a table whose versions came from it keeps
  // what it serves.
  v.Served(1, 0);
  v.NoteFromRepository();
  v.SetPointer(std::nullopt);
  EXPECT_EQ(v.pointer(), nullptr);
  EXPECT_EQ(v.Next(), 0u);
}

// Readiness.

struct ReadyCase {
  std::string name;
  State state;
  Readiness ready;
};

class ReadyTest : public ::testing::TestWithParam<ReadyCase> {};

TEST_P(ReadyTest, Decides) {
  EXPECT_EQ(Build(GetParam().state).Ready(), GetParam().ready);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, ReadyTest,
    ::testing::ValuesIn(std::vector<ReadyCase>{
        {"Serving", {.on_disk = {1}, .serving = 1}, Readiness::kServes},
        {"AVersionToLoad", {.on_disk = {1}}, Readiness::kWaiting},
        {"AVersionLoading",
         {.on_disk = {1}, .loading = {1}},
         Readiness::kWaiting},
        {"NothingThatCouldLoad",
         {.on_disk = {1}, .failed = {{1, "corrupt"}}},
         Readiness::kStuck},
        {"RepositoryWithAPointer",
         {.on_disk = {1},
          .repository = true,
          .pointer = Pointer(1, Local::kUnknown)},
         Readiness::kElsewhere},
        {"RepositoryFromItWithoutAPointer",
         {.on_disk = {1},
          .repository = true,
          .pointers_read = true,
          .from_repository = true},
         Readiness::kElsewhere},
        {"RepositoryNeverInIt",
         {.on_disk = {1}, .repository = true, .pointers_read = true},
         Readiness::kWaiting},
    }),
    [](const auto& info) { return info.param.name; });

// The reasons of roost_table_load_failures_total.

TEST(LoadFailureReasonTest, ByStatusCode) {
  EXPECT_EQ(LoadFailureReason(absl::DataLossError("")), "corrupt");
  EXPECT_EQ(LoadFailureReason(absl::FailedPreconditionError("")),
            "unsupported");
  EXPECT_EQ(LoadFailureReason(absl::InvalidArgumentError("")), "manifest");
  EXPECT_EQ(LoadFailureReason(absl::UnavailableError("")), "incomplete");
  EXPECT_EQ(LoadFailureReason(absl::NotFoundError("")), "open");
  EXPECT_EQ(LoadFailureReason(absl::PermissionDeniedError("")), "open");
}

}  // namespace
}  // namespace roost
