// What the object-storage suites share: the stores they run over (a local
// directory, and a real MinIO on loopback) and the options that make S3's
// multipart uploads and retries happen on small objects and quickly.
#ifndef ROOST_TESTS_HARNESS_OBJECT_STORE_FIXTURE_H_
#define ROOST_TESTS_HARNESS_OBJECT_STORE_FIXTURE_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "repository/object_store.h"
#include "tests/harness/minio_server.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {

// Parts of 5 MiB (the least S3 takes) above 6 MiB: a 12 MiB object goes up
// in three parts. Retries after 20 ms, at most three attempts.
inline ObjectStoreOptions TestStoreOptions() {
  ObjectStoreOptions options;
  options.multipart_threshold = 6 << 20;
  options.part_size = 5 << 20;
  options.max_attempts = 3;
  options.initial_backoff = std::chrono::milliseconds(20);
  options.max_backoff = std::chrono::milliseconds(100);
  options.connect_timeout = std::chrono::milliseconds(2000);
  return options;
}

// A fresh, empty root for each test: a scratch directory, or a prefix of
// its own in the shared MinIO's bucket.
struct StoreKind {
  std::string name;
  // The URI of a new empty root; "" and a test failure if there can be
  // none (MinIO missing).
  std::function<std::string(const ScratchDir&)> new_root;
};

inline std::string NewMinioRoot() {
  static std::atomic<int> next{0};
  MinioServer* minio = SharedMinio();
  if (minio == nullptr) {
    ADD_FAILURE() << MinioStartError();
    return "";
  }
  minio->SetEnvironment();
  return StrCat("s3://", minio->bucket(), "/test-", ::getpid(), "-", next++);
}

inline std::vector<StoreKind> AllStoreKinds() {
  return {
      {"Local",
       [](const ScratchDir& dir) {
         return StrCat("file://", dir.File("repository"));
       }},
      {"S3", [](const ScratchDir&) { return NewMinioRoot(); }},
  };
}

inline std::string StoreKindName(
    const ::testing::TestParamInfo<StoreKind>& info) {
  return info.param.name;
}

class ObjectStoreTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    const std::string root = GetParam().new_root(dir_);
    ASSERT_FALSE(root.empty());
    auto store = OpenObjectStore(root, TestStoreOptions());
    ASSERT_OK(store);
    store_ = *std::move(store);
  }

  ScratchDir dir_;
  std::unique_ptr<ObjectStore> store_;
};

inline PutOptions IfAbsent() {
  PutOptions options;
  options.if_absent = true;
  return options;
}

// `size` bytes that differ from those of another seed.
inline std::string Bytes(size_t size, uint32_t seed = 1) {
  std::string s(size, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_OBJECT_STORE_FIXTURE_H_
