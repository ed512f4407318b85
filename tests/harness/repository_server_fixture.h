// What the suites of roost-server --repository share: a repository root of
// their own in a real MinIO (tests/harness/minio_server.h) or a local
// directory, versions built by the real roost-load and published into it with
// TableRepository, and the flags that make the server pull from it.
//
// Example:
//   class MyTest : public RepositoryServerTest {};
//   TEST_F(MyTest, Pulls) {
//     ASSERT_EQ(Publish(1, Keys(100)), 1u);
//     ServerProcess server(PullFlags(), LogFile());
//     ASSERT_TRUE(server.WaitReady());
//   }
#ifndef ROOST_TESTS_HARNESS_REPOSITORY_SERVER_FIXTURE_H_
#define ROOST_TESTS_HARNESS_REPOSITORY_SERVER_FIXTURE_H_

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "repository/object_store.h"
#include "repository/repository.h"
#include "storage/partition.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "tests/harness/object_store_fixture.h"
#include "tests/harness/server_harness.h"

namespace roost::testing {

class RepositoryServerTest : public ServerFixture {
 protected:
  void SetUp() override {
    uri_ = NewMinioRoot();
    ASSERT_NE(uri_, "");
    auto store = OpenObjectStore(uri_, TestStoreOptions());
    ASSERT_OK(store);
    store_ = *std::move(store);
    std::filesystem::create_directories(data_);
  }

  // Builds Versioned(`value_version`, keys) with roost-load (sharded when
  // `shards` > 1) and publishes it as the next version of `table`, moving
  // the POINTER to it unless `point` is false; the version published, or 0
  // after a test failure.
  uint64_t Publish(int value_version, const std::vector<std::string>& keys,
                   uint32_t shards = 0, const std::string& table = "t",
                   bool point = true) {
    const std::string build = scratch_.File("build");
    std::vector<std::string> flags;
    if (shards > 1) flags = {"--shards", StrCat(shards)};
    const std::string dir = BuildTable(
        build, table, Versioned(value_version, keys), "cuckoo", flags);
    if (dir.empty()) return 0;
    auto manifest = ReadManifest(dir + "/MANIFEST");
    EXPECT_OK(manifest);
    if (!manifest.ok()) return 0;
    TableRepository repository(store_.get());
    auto version = repository.ClaimVersion(table, "a test");
    EXPECT_OK(version);
    if (!version.ok()) return 0;
    for (const ManifestFile& f : manifest->files) {
      absl::Status s =
          repository.UploadFile(table, *version, {f.name, dir + "/" + f.name});
      EXPECT_OK(s);
      if (!s.ok()) return 0;
    }
    Manifest m = *manifest;
    m.version = *version;
    absl::Status s = repository.CompleteVersion(table, *version, m.ToJson());
    if (s.ok() && point) s = repository.MovePointer(table, *version);
    EXPECT_OK(s);
    return s.ok() ? *version : 0;
  }

  // The harness's flags with --repository, polling often, /metrics on.
  ServerFlags PullFlags(std::optional<uint32_t> shard = std::nullopt,
                        std::vector<std::string> more = {}) const {
    ServerFlags flags = Flags();
    flags.metrics_listen = "127.0.0.1:0";
    flags.extra = {"--repository", uri_, "--repository-poll", "0.2"};
    if (shard) {
      flags.extra.push_back("--shard");
      flags.extra.push_back(StrCat(*shard));
    }
    flags.extra.insert(flags.extra.end(), more.begin(), more.end());
    return flags;
  }

  // The keys of Keys(n) in `shard` of `shards`.
  static std::vector<std::string> ShardKeys(int n, uint32_t shard,
                                            uint32_t shards) {
    std::vector<std::string> out;
    for (const std::string& key : Keys(n)) {
      if (PartitionOf(key, shards) == shard) out.push_back(key);
    }
    return out;
  }

  // The names in DATA_DIR/`table` (versions, staging directories...), but
  // for the REPOSITORY file a puller writes there.
  std::vector<std::string> Entries(const std::string& table = "t") const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e :
         std::filesystem::directory_iterator(TableDir(table), ec)) {
      if (e.path().filename() == "REPOSITORY") continue;
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // A failure counter of `table` for `reason`.
  static double Failures(const Metrics& metrics, const std::string& reason,
                         const std::string& table = "t") {
    return MetricOr(metrics,
                    StrCat("roost_repository_pull_failures_total{reason=\"",
                           reason, "\",table=\"", table, "\"}"));
  }

  std::string uri_;
  std::unique_ptr<ObjectStore> store_;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_REPOSITORY_SERVER_FIXTURE_H_
