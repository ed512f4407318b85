// Destination (loader/destination.h), in process: each of roost-load
// build's three places (a file, a data directory, a table repository in a
// local directory) stages an empty private directory, publishes what was
// written into it and nothing else, and leaves nothing published and no
// staging directory behind when it is destroyed unpublished or its Publish
// fails mid-way. One behaviour suite runs over the three; what only one
// place does (versions numbered on, --max-shrink, retention) follows.

#include "loader/destination.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "loader/data_dir_destination.h"
#include "loader/file_destination.h"
#include "loader/repository_destination.h"
#include "repository/object_store.h"
#include "repository/repository.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Every path under `root`, relative to it, sorted: what a place holds,
// staging directories included.
std::vector<std::string> Tree(const std::filesystem::path& root) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    paths.push_back(std::filesystem::relative(it->path(), root).string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Writes `bytes` into the staging directory as table.sst, and the MANIFEST
// a build would hand to Publish for it: `keys` keys.
Manifest Staged(const Destination& destination, const std::string& bytes,
                uint64_t keys) {
  const std::string path =
      StrCat(destination.staging_dir(), "/", kTableFileName);
  WriteFile(path, bytes);
  Manifest m;
  m.table = "users";
  m.format = "cuckoo";
  m.format_version = "1.0";
  m.keys = keys;
  ManifestFile file;
  file.name = std::string(kTableFileName);
  file.size = bytes.size();
  absl::StatusOr<uint64_t> xxh3 = ChecksumFile(path);
  EXPECT_OK(xxh3);
  file.xxh3 = xxh3.value_or(0);
  m.files.push_back(file);
  m.loader = "destination_test";
  return m;
}

// A place, in a scratch directory of its own: how to stage a Destination
// there, what a reader of the place sees, and how to make the next
// Publish fail mid-way.
class Place {
 public:
  virtual ~Place() = default;
  virtual absl::StatusOr<std::unique_ptr<Destination>> Stage(
      std::optional<double> max_shrink = std::nullopt) = 0;
  // What the place holds, for comparing before and after: its published
  // files or complete versions, what names the served one, and any
  // staging directory left.
  virtual std::vector<std::string> Held() = 0;
  // The bytes of the table file `published` names.
  virtual std::string PublishedBytes(const Publication& published) = 0;
  // What the first Publish into the place answers.
  virtual std::string FirstPath() = 0;
  virtual std::optional<uint64_t> FirstVersion() = 0;
  // Held() after the first Publish, once the Destination is gone.
  virtual std::vector<std::string> HeldAfterFirst() = 0;
  // Breaks `staged` so that its Publish fails after it has begun.
  virtual void Sabotage(const Destination& staged) = 0;
  // Whether the place keeps versions (and so --max-shrink applies).
  virtual bool versioned() const = 0;

 protected:
  ScratchDir dir_;
};

// --output DIR/out/users.sst
class FilePlace : public Place {
 public:
  FilePlace() { std::filesystem::create_directory(dir_.path() / "out"); }
  absl::StatusOr<std::unique_ptr<Destination>> Stage(
      std::optional<double>) override {
    return FileDestination::Stage(Output());
  }
  std::vector<std::string> Held() override { return Tree(dir_.path()); }
  std::string PublishedBytes(const Publication& published) override {
    return ReadFile(published.path);
  }
  std::string FirstPath() override { return Output(); }
  std::optional<uint64_t> FirstVersion() override { return std::nullopt; }
  std::vector<std::string> HeldAfterFirst() override {
    return {"out", "out/users.sst"};
  }
  // The staged file is gone before it is renamed into place.
  void Sabotage(const Destination& staged) override {
    std::filesystem::remove(StrCat(staged.staging_dir(), "/", kTableFileName));
  }
  bool versioned() const override { return false; }

 private:
  std::string Output() const { return dir_.File("out/users.sst"); }
};

// --data-dir DIR/data --table users
class DataDirPlace : public Place {
 public:
  DataDirPlace() { std::filesystem::create_directory(dir_.path() / "data"); }
  absl::StatusOr<std::unique_ptr<Destination>> Stage(
      std::optional<double> max_shrink) override {
    return DataDirDestination::Stage(dir_.File("data"), "users", max_shrink);
  }
  std::vector<std::string> Held() override { return Tree(dir_.path()); }
  std::string PublishedBytes(const Publication& published) override {
    return ReadFile(StrCat(published.path, "/", kTableFileName));
  }
  std::string FirstPath() override { return dir_.File("data/users/v000001"); }
  std::optional<uint64_t> FirstVersion() override { return 1; }
  std::vector<std::string> HeldAfterFirst() override {
    return {"data", "data/users", "data/users/v000001",
            "data/users/v000001/MANIFEST", "data/users/v000001/table.sst"};
  }
  // The MANIFEST cannot be written: a directory has its name.
  void Sabotage(const Destination& staged) override {
    std::filesystem::create_directory(
        StrCat(staged.staging_dir(), "/", kManifestName));
  }
  bool versioned() const override { return true; }
};

// --repository DIR/repo --table users --temp-dir DIR/tmp
class RepositoryPlace : public Place {
 public:
  RepositoryPlace() {
    std::filesystem::create_directory(dir_.path() / "tmp");
    store_ = *OpenObjectStore(dir_.File("repo"));
    repository_ = std::make_unique<TableRepository>(store_.get());
  }
  absl::StatusOr<std::unique_ptr<Destination>> Stage(
      std::optional<double> max_shrink) override {
    return RepositoryDestination::Stage(Options(max_shrink));
  }
  // The complete versions, the pointer, and the temporary directory's
  // tree (a claimed, incomplete version is no version).
  std::vector<std::string> Held() override {
    std::vector<std::string> held;
    auto versions = repository_->ListVersions("users");
    EXPECT_OK(versions);
    if (versions.ok()) {
      for (const RepositoryVersion& v : *versions) {
        if (v.complete) held.push_back(VersionDirName(v.version));
      }
    }
    auto pointer = repository_->ReadPointer("users");
    EXPECT_OK(pointer);
    if (pointer.ok() && *pointer) {
      held.push_back(StrCat("POINTER ", VersionDirName((*pointer)->version)));
    }
    for (const std::string& path : Tree(dir_.path() / "tmp")) {
      held.push_back(StrCat("tmp/", path));
    }
    return held;
  }
  std::string PublishedBytes(const Publication& published) override {
    auto bytes = store_->Get(TableRepository::VersionKey(
        "users", published.version.value_or(0), kTableFileName));
    EXPECT_OK(bytes);
    return bytes.value_or("");
  }
  std::string FirstPath() override {
    return StrCat(store_->uri(), "/users/v000001");
  }
  std::optional<uint64_t> FirstVersion() override { return 1; }
  std::vector<std::string> HeldAfterFirst() override {
    return {"v000001", "POINTER v000001"};
  }
  // The staged file is gone before it is uploaded: after the claim.
  void Sabotage(const Destination& staged) override {
    std::filesystem::remove(StrCat(staged.staging_dir(), "/", kTableFileName));
  }
  bool versioned() const override { return true; }

  RepositoryDestinationOptions Options(std::optional<double> max_shrink) {
    RepositoryDestinationOptions options;
    options.uri = dir_.File("repo");
    options.table = "users";
    options.temp_dir = dir_.File("tmp");
    options.max_shrink = max_shrink;
    return options;
  }
  TableRepository& repository() { return *repository_; }
  std::string tmp() const { return dir_.File("tmp"); }

 private:
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<TableRepository> repository_;
};

struct PlaceCase {
  std::string name;
  std::function<std::unique_ptr<Place>()> make;
};

// Names the case in gtest's messages.
void PrintTo(const PlaceCase& c, std::ostream* os) { *os << c.name; }

class DestinationTest : public ::testing::TestWithParam<PlaceCase> {
 protected:
  void SetUp() override { place_ = GetParam().make(); }

  // Stages, writes `bytes` as a table of `keys` keys and publishes them.
  absl::StatusOr<Publication> PublishOnce(
      const std::string& bytes, uint64_t keys,
      std::optional<double> max_shrink = std::nullopt) {
    auto destination = place_->Stage(max_shrink);
    if (!destination.ok()) return destination.status();
    return (*destination)->Publish(Staged(**destination, bytes, keys));
  }

  std::unique_ptr<Place> place_;
};

TEST_P(DestinationTest, StagesAPrivateEmptyDirectory) {
  const std::vector<std::string> before = place_->Held();
  auto destination = place_->Stage();
  ASSERT_OK(destination);
  const std::string staging = (*destination)->staging_dir();
  EXPECT_TRUE(std::filesystem::is_directory(staging));
  EXPECT_THAT(Tree(staging), IsEmpty());
  destination->reset();
  EXPECT_FALSE(std::filesystem::exists(staging));
  EXPECT_EQ(place_->Held(), before);
}

TEST_P(DestinationTest, PublishesWhatWasStaged) {
  auto published = PublishOnce("the first table", 3);
  ASSERT_OK(published);
  EXPECT_EQ(published->path, place_->FirstPath());
  EXPECT_EQ(published->version, place_->FirstVersion());
  EXPECT_EQ(place_->PublishedBytes(*published), "the first table");
  // The staging directory went with the Destination.
  EXPECT_EQ(place_->Held(), place_->HeldAfterFirst());
}

TEST_P(DestinationTest, DestroyedUnpublishedLeavesNothing) {
  const std::vector<std::string> before = place_->Held();
  {
    auto destination = place_->Stage();
    ASSERT_OK(destination);
    Staged(**destination, "never published", 3);
  }
  // A data directory's table directory, made by Stage, went too.
  EXPECT_EQ(place_->Held(), before);
}

TEST_P(DestinationTest, FailureMidwayLeavesNothingPublished) {
  auto first = PublishOnce("the first table", 3);
  ASSERT_OK(first);
  {
    auto destination = place_->Stage();
    ASSERT_OK(destination);
    Manifest m = Staged(**destination, "the second table", 3);
    place_->Sabotage(**destination);
    EXPECT_FALSE((*destination)->Publish(std::move(m)).ok());
  }
  EXPECT_EQ(place_->Held(), place_->HeldAfterFirst());
  EXPECT_EQ(place_->PublishedBytes(*first), "the first table");
}

TEST_P(DestinationTest, MaxShrinkRefusesASmallerVersion) {
  if (!place_->versioned()) GTEST_SKIP() << "a file has no versions";
  ASSERT_OK(PublishOnce("ten keys", 10));
  // 10% of 10 allows no fewer than 9.
  EXPECT_THAT(PublishOnce("eight keys", 8, 0.1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--max-shrink 10% allows no fewer than 9; "
                                 "nothing was published")));
  EXPECT_EQ(place_->Held(), place_->HeldAfterFirst());
  auto second = PublishOnce("nine keys", 9, 0.1);
  ASSERT_OK(second);
  EXPECT_EQ(second->version, 2u);
}

INSTANTIATE_TEST_SUITE_P(
    Places, DestinationTest,
    ::testing::Values(
        PlaceCase{"File", [] { return std::make_unique<FilePlace>(); }},
        PlaceCase{"DataDir", [] { return std::make_unique<DataDirPlace>(); }},
        PlaceCase{"Repository",
                  [] { return std::make_unique<RepositoryPlace>(); }}),
    [](const auto& info) { return info.param.name; });

TEST(DataDirDestinationTest, NumbersVersionsOn) {
  DataDirPlace place;
  for (uint64_t expected = 1; expected <= 3; ++expected) {
    auto destination = place.Stage(std::nullopt);
    ASSERT_OK(destination);
    auto published =
        (*destination)->Publish(Staged(**destination, "a table", 3));
    ASSERT_OK(published);
    EXPECT_EQ(published->version, expected);
    EXPECT_THAT(published->path, HasSubstr(VersionDirName(expected)));
    auto manifest = ReadManifest(StrCat(published->path, "/", kManifestName));
    ASSERT_OK(manifest);
    EXPECT_EQ(manifest->version, expected);
    EXPECT_TRUE(published->repository.empty());
  }
}

TEST(RepositoryDestinationTest, PublishesTheManifestWithItsVersion) {
  RepositoryPlace place;
  auto destination = place.Stage(std::nullopt);
  ASSERT_OK(destination);
  auto published = (*destination)->Publish(Staged(**destination, "abc", 3));
  ASSERT_OK(published);
  EXPECT_THAT(published->repository, StartsWith("file://"));
  EXPECT_FALSE(published->pruned);
  auto text = place.repository().ReadManifest("users", 1);
  ASSERT_OK(text);
  auto manifest = Manifest::Parse(*text);
  ASSERT_OK(manifest);
  EXPECT_EQ(manifest->version, 1u);
  EXPECT_EQ(manifest->keys, 3u);
}

TEST(RepositoryDestinationTest, AFailedUploadLeavesItsClaimIncomplete) {
  RepositoryPlace place;
  auto destination = place.Stage(std::nullopt);
  ASSERT_OK(destination);
  Manifest m = Staged(**destination, "abc", 3);
  m.files[0].xxh3 ^= 1;  // the upload is read back against another checksum
  EXPECT_THAT((*destination)->Publish(std::move(m)),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("cannot publish users to file://")));
  auto versions = place.repository().ListVersions("users");
  ASSERT_OK(versions);
  ASSERT_EQ(versions->size(), 1u);
  EXPECT_FALSE((*versions)[0].complete);
  destination->reset();
  EXPECT_THAT(place.Held(), IsEmpty());
}

TEST(RepositoryDestinationTest, RetentionRunsAfterPublishing) {
  RepositoryPlace place;
  RepositoryDestinationOptions options = place.Options(std::nullopt);
  options.retention = RetentionOptions{.keep_versions = 1};
  for (uint64_t version = 1; version <= 2; ++version) {
    auto destination = RepositoryDestination::Stage(options);
    ASSERT_OK(destination);
    auto published =
        (*destination)->Publish(Staged(**destination, "a table", 3));
    ASSERT_OK(published);
    ASSERT_TRUE(published->pruned);
    EXPECT_TRUE(published->retention_error.empty());
    if (version == 1) {
      EXPECT_THAT(published->pruned->deleted, IsEmpty());
    } else {
      EXPECT_THAT(published->pruned->deleted, ElementsAre(1));
    }
  }
  EXPECT_THAT(place.Held(), ElementsAre("v000002", "POINTER v000002"));
}

TEST(RepositoryDestinationTest, AnUnopenableRepositoryStagesNothing) {
  RepositoryPlace place;
  RepositoryDestinationOptions options = place.Options(std::nullopt);
  options.uri = "ftp://tables/prod";
  EXPECT_THAT(RepositoryDestination::Stage(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unsupported scheme \"ftp\"")));
  EXPECT_THAT(Tree(place.tmp()), IsEmpty());
}

TEST(RepositoryDestinationTest, NoStagingDirectoryStagesNothing) {
  RepositoryPlace place;
  // --temp-dir is a regular file: no directory can be made in it.
  WriteFile(StrCat(place.tmp(), "/file"), "not a directory");
  RepositoryDestinationOptions options = place.Options(std::nullopt);
  options.temp_dir = StrCat(place.tmp(), "/file");
  EXPECT_FALSE(RepositoryDestination::Stage(options).ok());
  EXPECT_THAT(place.Held(), ElementsAre("tmp/file"));
}

}  // namespace
}  // namespace roost::testing
