// What the roost-load repository suites share: the real roost-load binary
// (tests/loader/roost_load_fixture.h) publishing into a fresh repository root
// for each test — a local directory, or a prefix of its own in a real MinIO on
// loopback (tests/harness/object_store_fixture.h) — and a store and
// TableRepository over the same root, to look at what roost-load left there.
//   roost_load_repository_test.cc         build --repository, versions,
//                                         rollback, --keep-versions, prune
//   roost_load_repository_errors_test.cc  usage errors, an unreachable
//                                         store, bad credentials, a missing
//                                         bucket, a killed publisher
//   roost_load_shard_publish_test.cc      claim, build --shard on many
//                                         processes, publish, and every
//                                         refusal
#ifndef ROOST_TESTS_LOADER_ROOST_LOAD_REPOSITORY_FIXTURE_H_
#define ROOST_TESTS_LOADER_ROOST_LOAD_REPOSITORY_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "repository/repository.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "tests/harness/object_store_fixture.h"
#include "tests/loader/roost_load_fixture.h"

namespace roost::testing {

// Downloads `version` of `table` into DIR/<table>/v<N>/ (checking every
// file against its MANIFEST, as a server pulls it) and returns the
// version directory, for roost-load verify and get.
inline std::string Download(ObjectStore& store, const ScratchDir& dir,
                            const std::string& table, uint64_t version) {
  const std::string local =
      dir.File(StrCat("pulled/", table, "/", VersionDirName(version)));
  std::filesystem::create_directories(local);
  TableRepository repository(&store);
  auto text = repository.ReadManifest(table, version);
  EXPECT_OK(text);
  auto manifest = Manifest::Parse(text.value_or("{}"));
  EXPECT_OK(manifest);
  if (!manifest.ok()) return local;
  for (const ManifestFile& f : manifest->files) {
    DownloadOptions expect;
    expect.expected_size = f.size;
    expect.expected_xxh3 = f.xxh3;
    EXPECT_OK(
        store.GetToFile(TableRepository::VersionKey(table, version, f.name),
                        StrCat(local, "/", f.name), expect));
  }
  WriteFile(StrCat(local, "/MANIFEST"), *text);
  return local;
}

class RoostLoadRepositoryTest : public ObjectStoreTest {
 protected:
  void SetUp() override {
    root_ = GetParam().new_root(dir_);
    ASSERT_FALSE(root_.empty());
    auto store = OpenObjectStore(root_, TestStoreOptions());
    ASSERT_OK(store);
    store_ = *std::move(store);
    repository_ = std::make_unique<TableRepository>(store_.get());
    input_ = Write("in.tsv", "apple\tred\nbanana\tyellow\ncherry\tdark red\n");
  }

  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.File(name);
    WriteFile(path, bytes);
    return path;
  }

  // `roost-load build -q -i INPUT --repository ROOT --table T EXTRA`.
  Result Build(const std::string& table, const std::string& extra = "") {
    return RoostLoad(StrCat("build -q -i ", input_, " --repository ", root_,
                            " --table ", table, " ", extra));
  }
  // `roost-load COMMAND --repository ROOT --table T EXTRA`.
  Result Command(const std::string& command, const std::string& table,
                 const std::string& extra = "") {
    return RoostLoad(StrCat(command, " --repository ", root_, " --table ",
                            table, " ", extra));
  }

  std::optional<uint64_t> Pointed(const std::string& table) {
    auto pointer = repository_->ReadPointer(table);
    EXPECT_OK(pointer);
    if (!pointer.ok() || !*pointer) return std::nullopt;
    return (*pointer)->version;
  }
  std::vector<RepositoryVersion> Versions(const std::string& table) {
    auto versions = repository_->ListVersions(table);
    EXPECT_OK(versions);
    return versions.ok() ? *versions : std::vector<RepositoryVersion>{};
  }

  std::string root_;
  std::string input_;
  std::unique_ptr<TableRepository> repository_;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_LOADER_ROOST_LOAD_REPOSITORY_FIXTURE_H_
