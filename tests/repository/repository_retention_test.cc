// What the loader's repository commands need of the repository beyond
// publishing (repository/repository.h, repository/retention.h): uploads
// checked against their checksum, versions listed with their objects and
// times, versions deleted MANIFEST first, and the retention policy — over a
// local directory and a real MinIO on loopback.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <ctime>

#include "repository/repository.h"
#include "repository/retention.h"
#include "repository/s3_xml.h"
#include "tests/harness/object_store_fixture.h"

namespace roost::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

uint64_t Xxh3(const std::string& bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

class RetentionStoreTest : public ObjectStoreTest {
 protected:
  // Publishes one version of `table` holding `contents` as table.sst.
  uint64_t PublishOne(TableRepository& repository, const std::string& table,
                      const std::string& contents) {
    const std::string path = dir_.File(StrCat("build-", next_file_++));
    WriteFile(path, contents);
    auto v = repository.Publish(table, {{"table.sst", path, Xxh3(contents)}},
                                [&](uint64_t v) -> absl::StatusOr<std::string> {
                                  return StrCat("{\"version\": ", v, "}");
                                });
    EXPECT_OK(v);
    return v.ok() ? *v : 0;
  }
  std::vector<uint64_t> Numbers(TableRepository& repository,
                                const std::string& table) {
    std::vector<uint64_t> out;
    absl::StatusOr<std::vector<RepositoryVersion>> versions =
        repository.ListVersions(table);
    EXPECT_OK(versions);
    if (!versions.ok()) return out;
    for (const RepositoryVersion& v : *versions) out.push_back(v.version);
    return out;
  }
  int next_file_ = 0;
};

TEST_P(RetentionStoreTest, AnUploadIsReadBackAndAMismatchIsRefused) {
  TableRepository repository(store_.get());
  // Above the test multipart threshold and the 8 MiB read-back range: the
  // whole of a multipart upload is checked, in several reads.
  const std::string contents = Bytes(10 << 20, 7);
  const std::string path = dir_.File("table.sst");
  WriteFile(path, contents);
  ASSERT_EQ(repository.ClaimVersion("t", "me").value(), 1u);
  ASSERT_OK(repository.UploadFile("t", 1, {"table.sst", path, Xxh3(contents)}));
  // The checksum the MANIFEST would record, but of other bytes: refused,
  // naming the object and both checksums.
  EXPECT_THAT(
      repository.UploadFile("t", 1, {"table.sst", path, Xxh3(contents) ^ 1}),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("t/v000001/table.sst: checksum mismatch")));
  // What the store holds changed after the upload (a corrupting store, or
  // another writer): the read-back sees it.
  std::string changed = contents;
  changed[contents.size() / 2] ^= 0x40;
  ASSERT_OK(store_->Put("t/v000001/table.sst", changed));
  EXPECT_THAT(repository.VerifyObject("t", 1, "table.sst", contents.size(),
                                      Xxh3(contents)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("mismatch")));
  ASSERT_OK(store_->Put("t/v000001/table.sst", contents.substr(0, 100)));
  EXPECT_THAT(repository.VerifyObject("t", 1, "table.sst", contents.size(),
                                      Xxh3(contents)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("shorter")));
  EXPECT_THAT(repository.VerifyObject("t", 1, "missing.sst", 1, 1),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(RetentionStoreTest, VersionsAreListedWithTheirObjectsAndTimes) {
  TableRepository repository(store_.get());
  const int64_t before = static_cast<int64_t>(std::time(nullptr)) - 5;
  PublishOne(repository, "users", "first");
  ASSERT_EQ(repository.ClaimVersion("users", "killed").value(), 2u);
  auto versions = repository.ListVersionObjects("users");
  ASSERT_OK(versions);
  ASSERT_EQ(versions->size(), 2u);
  const VersionObjects& v1 = (*versions)[0];
  EXPECT_EQ(v1.version, 1u);
  EXPECT_TRUE(v1.complete);
  EXPECT_EQ(v1.FileCount(), 1u);
  EXPECT_EQ(v1.FileBytes(), 5u);
  EXPECT_GE(v1.ClaimedAt(), before);
  EXPECT_GE(v1.CompletedAt(), v1.ClaimedAt());
  const VersionObjects& v2 = (*versions)[1];
  EXPECT_FALSE(v2.complete);
  EXPECT_EQ(v2.FileCount(), 0u);
  EXPECT_EQ(v2.CompletedAt(), 0);
  EXPECT_GE(v2.LastWrittenAt(), before);
}

TEST_P(RetentionStoreTest, DeleteVersionRemovesEverythingButNotThePointers) {
  TableRepository repository(store_.get());
  PublishOne(repository, "users", "first");
  PublishOne(repository, "users", "second");
  EXPECT_THAT(repository.DeleteVersion("users", 2),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("the pointer names it")));
  EXPECT_THAT(Numbers(repository, "users"), ElementsAre(1, 2));
  ASSERT_OK(repository.DeleteVersion("users", 1));
  EXPECT_THAT(Numbers(repository, "users"), ElementsAre(2));
  EXPECT_THAT(store_->ListAll("users/v000001/").value(), IsEmpty());
  // A half-deleted version (its MANIFEST gone first) is merely incomplete:
  // never pointed to, and deleted whole by the next attempt.
  PublishOne(repository, "users", "third");
  ASSERT_OK(store_->Delete("users/v000002/MANIFEST"));
  EXPECT_THAT(repository.MovePointer("users", 2),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_OK(repository.DeleteVersion("users", 2));
  EXPECT_THAT(Numbers(repository, "users"), ElementsAre(3));
  // The next version still gets a number of its own.
  EXPECT_EQ(PublishOne(repository, "users", "fourth"), 4u);
}

TEST_P(RetentionStoreTest, PruneKeepsTheNewestThePointersAndClaimsInProgress) {
  TableRepository repository(store_.get());
  for (int i = 1; i <= 4; ++i) PublishOne(repository, "users", "v");
  ASSERT_EQ(repository.ClaimVersion("users", "in progress").value(), 5u);
  PublishOne(repository, "users", "v");           // v6
  ASSERT_OK(repository.MovePointer("users", 3));  // a rollback
  RetentionOptions options;
  options.keep_versions = 1;
  auto pruned = PruneTable(&repository, "users", options);
  ASSERT_OK(pruned);
  // v3 is pointed to, v4 to v6 are newer than it; v5's claim is fresh.
  EXPECT_THAT(pruned->deleted, ElementsAre(1, 2));
  EXPECT_THAT(pruned->abandoned, IsEmpty());
  EXPECT_THAT(Numbers(repository, "users"), ElementsAre(3, 4, 5, 6));

  ASSERT_OK(repository.MovePointer("users", 6));
  options.keep_versions = 2;
  // Judged a day later: v5's claim is abandoned by then.
  options.now_unix = static_cast<int64_t>(std::time(nullptr)) + 25 * 3600;
  pruned = PruneTable(&repository, "users", options);
  ASSERT_OK(pruned);
  EXPECT_THAT(pruned->deleted, ElementsAre(3));
  EXPECT_THAT(pruned->abandoned, ElementsAre(5));
  EXPECT_THAT(Numbers(repository, "users"), ElementsAre(4, 6));
  EXPECT_THAT(repository.ReadPointer("users").value()->version, 6u);
  options.keep_versions = 0;
  EXPECT_THAT(PruneTable(&repository, "users", options),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(RetentionStoreTest, MovePointerRepairsADamagedPointer) {
  TableRepository repository(store_.get());
  PublishOne(repository, "users", "first");
  ASSERT_OK(store_->Put("users/POINTER", "garbage"));
  EXPECT_THAT(repository.ReadPointer("users"),
              StatusIs(absl::StatusCode::kDataLoss));
  ASSERT_OK(repository.MovePointer("users", 1));
  EXPECT_EQ(repository.ReadPointer("users").value()->version, 1u);
}

INSTANTIATE_TEST_SUITE_P(Stores, RetentionStoreTest,
                         ::testing::ValuesIn(AllStoreKinds()), StoreKindName);

// The policy alone, on made-up listings.
VersionObjects Made(uint64_t version, bool complete, int64_t written) {
  VersionObjects v;
  v.version = version;
  v.complete = complete;
  v.objects.push_back({StrCat("t/", version, "/CLAIM"), 1, "e", written});
  return v;
}

TEST(PlanPruneTest, TheNewestVersionNeverGoesEvenWhenAbandoned) {
  RetentionOptions options;
  options.keep_versions = 1;
  options.now_unix = 1'000'000;
  const std::vector<VersionObjects> versions = {Made(1, true, 10),
                                                Made(2, false, 10)};
  const PruneResult plan = PlanPrune(versions, 1, options);
  EXPECT_THAT(plan.deleted, IsEmpty());
  EXPECT_THAT(plan.abandoned, IsEmpty());  // its number must stay taken
}

TEST(PlanPruneTest, AClaimOfUnknownTimeIsNeverAbandoned) {
  RetentionOptions options;
  options.keep_versions = 5;
  options.now_unix = 1'000'000;
  const std::vector<VersionObjects> versions = {
      Made(1, false, 0), Made(2, false, 10), Made(3, false, 999'999),
      Made(4, true, 10)};
  const PruneResult plan = PlanPrune(versions, 4, options);
  EXPECT_THAT(plan.abandoned, ElementsAre(2));
  EXPECT_THAT(plan.deleted, IsEmpty());
}

TEST(PlanPruneTest, WithoutAPointerTheNewestCompleteAreKept) {
  RetentionOptions options;
  options.keep_versions = 2;
  options.now_unix = 1'000'000;
  const std::vector<VersionObjects> versions = {
      Made(1, true, 10), Made(2, true, 10), Made(3, true, 10),
      Made(4, true, 10)};
  EXPECT_THAT(PlanPrune(versions, std::nullopt, options).deleted,
              ElementsAre(1, 2));
  EXPECT_THAT(PlanPrune({}, std::nullopt, options).deleted, IsEmpty());
}

TEST(S3TimeTest, LastModifiedIsReadAsUnixSeconds) {
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:00.000Z"), 0);
  EXPECT_EQ(ParseIso8601("2026-11-26T06:10:00.000Z"), 1795673400);
  EXPECT_EQ(ParseIso8601("2026-11-26T06:10:00Z"), 1795673400);
  for (const char* bad : {"", "yesterday", "2026-13-01T00:00:00Z",
                          "2026-11-26 06:10:00", "2026-11-26T06:10"}) {
    EXPECT_EQ(ParseIso8601(bad), 0) << bad;
  }
}

}  // namespace
}  // namespace roost::testing
