// The repository protocol (repository/repository.h) over every ObjectStore:
// a local directory and a real MinIO on loopback.

#include "repository/repository.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "storage/version/manifest.h"
#include "tests/harness/object_store_fixture.h"

namespace roost::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RepositoryTest : public ObjectStoreTest {
 protected:
  // Publishes one version of `table` holding `contents` as table.sst.
  absl::StatusOr<uint64_t> PublishOne(TableRepository& repository,
                                      const std::string& table,
                                      const std::string& contents) {
    const std::string path = dir_.File(StrCat("build-", next_file_++));
    WriteFile(path, contents);
    return repository.Publish(table, {{"table.sst", path}},
                              [&](uint64_t v) -> absl::StatusOr<std::string> {
                                return StrCat("{\"version\": ", v, "}");
                              });
  }

  std::optional<uint64_t> PointedVersion(TableRepository& repository,
                                         const std::string& table) {
    auto pointer = repository.ReadPointer(table);
    EXPECT_OK(pointer);
    if (!pointer.ok() || !*pointer) return std::nullopt;
    return (*pointer)->version;
  }

  std::atomic<int> next_file_{0};
};

TEST_P(RepositoryTest, PublishNumbersVersionsAndMovesThePointer) {
  TableRepository repository(store_.get());
  EXPECT_THAT(repository.ListVersions("users").value(), ::testing::IsEmpty());
  EXPECT_EQ(repository.ReadPointer("users").value(), std::nullopt);

  EXPECT_EQ(PublishOne(repository, "users", "first").value(), 1u);
  EXPECT_EQ(PointedVersion(repository, "users"), 1u);
  EXPECT_EQ(PublishOne(repository, "users", "second").value(), 2u);
  EXPECT_EQ(PointedVersion(repository, "users"), 2u);
  EXPECT_EQ(PublishOne(repository, "other", "x").value(), 1u);

  EXPECT_THAT(
      repository.ListVersions("users").value(),
      ElementsAre(RepositoryVersion{1, true}, RepositoryVersion{2, true}));
  EXPECT_EQ(repository.ReadManifest("users", 2).value(), "{\"version\": 2}");
  EXPECT_EQ(store_->Get("users/v000001/table.sst").value(), "first");
  EXPECT_EQ(store_->Get("users/v000002/table.sst").value(), "second");
  EXPECT_EQ(store_->Get("users/POINTER").value(), "v000002\n");
}

TEST_P(RepositoryTest, AnIncompleteVersionHoldsItsNumberAndIsNeverPointedTo) {
  TableRepository repository(store_.get());
  ASSERT_EQ(repository.ClaimVersion("users", "a killed publisher").value(), 1u);
  EXPECT_THAT(repository.ListVersions("users").value(),
              ElementsAre(RepositoryVersion{1, false}));
  EXPECT_THAT(repository.MovePointer("users", 1),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not a complete version")));
  EXPECT_THAT(repository.ReadManifest("users", 1),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(PublishOne(repository, "users", "next").value(), 2u);
  EXPECT_EQ(PointedVersion(repository, "users"), 2u);
  // The MANIFEST of a version never claimed is refused.
  EXPECT_THAT(repository.CompleteVersion("users", 7, "{}"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("never claimed")));
}

TEST_P(RepositoryTest, RollbackMovesThePointerToAnyCompleteVersion) {
  TableRepository repository(store_.get());
  ASSERT_OK(PublishOne(repository, "users", "one"));
  ASSERT_OK(PublishOne(repository, "users", "two"));
  ASSERT_OK(repository.MovePointer("users", 1));
  EXPECT_EQ(PointedVersion(repository, "users"), 1u);
  ASSERT_OK(repository.MovePointer("users", 1));  // already there
  ASSERT_OK(repository.MovePointer("users", 2));
  EXPECT_EQ(PointedVersion(repository, "users"), 2u);
  EXPECT_THAT(repository.MovePointer("users", 3),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(PointedVersion(repository, "users"), 2u);
}

TEST_P(RepositoryTest, SwapPointerFailsOnAStaleExpectation) {
  TableRepository repository(store_.get());
  ASSERT_OK(PublishOne(repository, "users", "one"));
  ASSERT_OK(PublishOne(repository, "users", "two"));
  auto seen = repository.ReadPointer("users").value();
  ASSERT_OK(repository.SwapPointer("users", 1, seen));
  EXPECT_THAT(repository.SwapPointer("users", 2, seen),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(repository.SwapPointer("users", 2, std::nullopt),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(PointedVersion(repository, "users"), 1u);
}

TEST_P(RepositoryTest, APublisherNeverMovesThePointerBack) {
  TableRepository repository(store_.get());
  // As if another publisher had pointed at a newer version already.
  ASSERT_OK(store_->Put("users/POINTER", "v000009\n"));
  EXPECT_EQ(PublishOne(repository, "users", "older").value(), 1u);
  EXPECT_EQ(PointedVersion(repository, "users"), 9u);
}

TEST_P(RepositoryTest, RacingPublishersGetDistinctVersions) {
  constexpr int kPublishers = 4;
  std::vector<std::unique_ptr<ObjectStore>> stores;
  for (int i = 0; i < kPublishers; ++i) {
    stores.push_back(
        OpenObjectStore(store_->uri(), TestStoreOptions()).value());
  }
  std::vector<absl::StatusOr<uint64_t>> results(kPublishers, 0u);
  std::vector<std::thread> threads;
  for (int i = 0; i < kPublishers; ++i) {
    threads.emplace_back([&, i] {
      TableRepository repository(stores[i].get());
      results[i] = PublishOne(repository, "users", StrCat("publisher ", i));
    });
  }
  for (auto& t : threads) t.join();
  std::set<uint64_t> versions;
  for (int i = 0; i < kPublishers; ++i) {
    ASSERT_OK(results[i]);
    versions.insert(*results[i]);
    EXPECT_EQ(
        store_->Get(StrCat("users/v00000", *results[i], "/table.sst")).value(),
        StrCat("publisher ", i));
  }
  EXPECT_THAT(versions, ElementsAre(1, 2, 3, 4));
  TableRepository repository(store_.get());
  // Forward only: the pointer ends on the newest.
  EXPECT_EQ(PointedVersion(repository, "users"), 4u);
}

TEST_P(RepositoryTest, BadPointersAndNamesAreRefused) {
  TableRepository repository(store_.get());
  ASSERT_OK(store_->Put("users/POINTER", "v7"));
  EXPECT_THAT(repository.ReadPointer("users"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("v7")));
  EXPECT_THAT(repository.ListVersions("../x"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string path = dir_.File("f");
  WriteFile(path, "x");
  ASSERT_EQ(repository.ClaimVersion("t", "me").value(), 1u);
  for (const char* name : {"MANIFEST", "CLAIM", "a/b", ""}) {
    EXPECT_THAT(repository.UploadFile("t", 1, {name, path}),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << name;
  }
}

// The real store underneath, with every Get's range recorded: what a
// reader of the protocol asked the store for.
class RecordingStore : public ObjectStore {
 public:
  explicit RecordingStore(ObjectStore* store) : store_(store) {}
  std::string uri() const override { return store_->uri(); }
  absl::Status Put(std::string_view key, std::string_view contents,
                   const PutOptions& options) override {
    return store_->Put(key, contents, options);
  }
  absl::Status PutFile(std::string_view key, const std::string& path,
                       const PutOptions& options) override {
    return store_->PutFile(key, path, options);
  }
  absl::StatusOr<std::string> Get(std::string_view key,
                                  std::optional<ByteRange> range) override {
    gets.push_back({std::string(key), range});
    return store_->Get(key, range);
  }
  absl::Status GetToFile(std::string_view key, const std::string& path,
                         const DownloadOptions& options) override {
    return store_->GetToFile(key, path, options);
  }
  absl::StatusOr<ObjectInfo> Head(std::string_view key) override {
    return store_->Head(key);
  }
  absl::StatusOr<ListPage> List(const ListOptions& options) override {
    return store_->List(options);
  }
  absl::Status Delete(std::string_view key) override {
    return store_->Delete(key);
  }

  struct Read {
    std::string key;
    std::optional<ByteRange> range;
  };
  std::vector<Read> gets;

 private:
  ObjectStore* store_;
};

// Issue 30, defect 1: a POINTER or MANIFEST object of 1 GB (the wrong file
// uploaded) was read whole into memory by every server, on every poll, and
// by `roost-load versions` and `rollback`. Both are read by a bounded
// range: a larger object is refused, naming its size and the bound.
TEST_P(RepositoryTest, AHugePointerOrManifestIsRefusedUnread) {
  RecordingStore recording(store_.get());
  TableRepository repository(&recording);
  const std::string huge(kMaxManifestSize + (4 << 20), ' ');

  ASSERT_OK(store_->Put("users/POINTER", huge));
  EXPECT_THAT(repository.ReadPointer("users"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(StrCat("users/POINTER is ", huge.size(),
                                        " bytes, more than a POINTER holds (",
                                        kMaxPointerSize, ")"))));
  ASSERT_EQ(repository.ClaimVersion("users", "a test").value(), 1u);
  ASSERT_OK(repository.CompleteVersion("users", 1, huge));
  EXPECT_THAT(repository.ReadManifest("users", 1),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr(StrCat("users/v000001/MANIFEST is larger "
                                        "than ",
                                        kMaxManifestSize, " bytes"))));
  ASSERT_OK(repository.MovePointer("users", 1));
  EXPECT_EQ(PointedVersion(repository, "users"), 1u);

  ASSERT_FALSE(recording.gets.empty());
  for (const RecordingStore::Read& read : recording.gets) {
    ASSERT_TRUE(read.range.has_value()) << read.key << " was read whole";
    EXPECT_LE(read.range->length, kMaxManifestSize + 1) << read.key;
    if (read.key.ends_with("POINTER")) {
      EXPECT_LE(read.range->length, kMaxPointerSize + 1) << read.key;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, RepositoryTest,
                         ::testing::ValuesIn(AllStoreKinds()), StoreKindName);

}  // namespace
}  // namespace roost::testing
