// The behaviour suite every ObjectStore runs: a local directory and a real
// MinIO on loopback (tests/harness/object_store_fixture.h).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "storage/hash.h"
#include "tests/harness/object_store_fixture.h"

namespace roost::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

uint64_t Xxh3(const std::string& s) {
  StreamingChecksum sum;
  sum.Update(s.data(), s.size());
  return sum.Digest();
}

DownloadOptions Expect(std::optional<uint64_t> size,
                       std::optional<uint64_t> xxh3 = std::nullopt) {
  DownloadOptions options;
  options.expected_size = size;
  options.expected_xxh3 = xxh3;
  return options;
}

ListOptions Listing(std::string prefix, bool group_by_slash = false,
                    int max_keys = 1000) {
  ListOptions options;
  options.prefix = std::move(prefix);
  options.group_by_slash = group_by_slash;
  options.max_keys = max_keys;
  return options;
}

// The names of the entries of `dir`.
std::set<std::string> Entries(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

std::vector<std::string> Keys(const std::vector<ObjectInfo>& objects) {
  std::vector<std::string> keys;
  for (const ObjectInfo& o : objects) keys.push_back(o.key);
  return keys;
}

TEST_P(ObjectStoreTest, PutThenGetRoundTrips) {
  const std::string binary = Bytes(1000);
  ASSERT_OK(store_->Put("t/v1/table.sst", binary));
  ASSERT_OK(store_->Put("t/v1/empty", ""));
  ASSERT_OK(store_->Put("odd name+with=chars~&%", "x"));
  EXPECT_EQ(store_->Get("t/v1/table.sst").value(), binary);
  EXPECT_EQ(store_->Get("t/v1/empty").value(), "");
  EXPECT_EQ(store_->Get("odd name+with=chars~&%").value(), "x");
}

TEST_P(ObjectStoreTest, PutReplacesWholeObject) {
  ASSERT_OK(store_->Put("k", "first, longer"));
  ASSERT_OK(store_->Put("k", "second"));
  EXPECT_EQ(store_->Get("k").value(), "second");
}

TEST_P(ObjectStoreTest, PutIfAbsentRefusesATakenKey) {
  ASSERT_OK(store_->Put("t/v1/MANIFEST", "mine", IfAbsent()));
  EXPECT_THAT(
      store_->Put("t/v1/MANIFEST", "theirs", IfAbsent()),
      StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("MANIFEST")));
  EXPECT_EQ(store_->Get("t/v1/MANIFEST").value(), "mine");
}

TEST_P(ObjectStoreTest, PutIfMatchIsACompareAndSwap) {
  ASSERT_OK(store_->Put("t/POINTER", "v1"));
  const std::string etag = store_->Head("t/POINTER").value().etag;
  PutOptions cas;
  cas.if_match = etag;
  ASSERT_OK(store_->Put("t/POINTER", "v2", cas));
  EXPECT_EQ(store_->Get("t/POINTER").value(), "v2");
  // The ETag read before the swap is stale now.
  EXPECT_THAT(
      store_->Put("t/POINTER", "v3", cas),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("t/POINTER")));
  EXPECT_EQ(store_->Get("t/POINTER").value(), "v2");
  cas.if_match = "0123";
  EXPECT_THAT(store_->Put("t/ABSENT", "v1", cas),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store_->Get("t/ABSENT"), StatusIs(absl::StatusCode::kNotFound));
  cas.if_absent = true;
  EXPECT_THAT(store_->Put("t/POINTER", "v4", cas),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(ObjectStoreTest, OfRacingCompareAndSwapsExactlyOneWins) {
  ASSERT_OK(store_->Put("t/POINTER", "start"));
  const std::string etag = store_->Head("t/POINTER").value().etag;
  constexpr int kWriters = 6;
  std::vector<std::unique_ptr<ObjectStore>> stores;
  for (int i = 0; i < kWriters; ++i) {
    stores.push_back(
        OpenObjectStore(store_->uri(), TestStoreOptions()).value());
  }
  std::vector<absl::Status> results(kWriters);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      PutOptions cas;
      cas.if_match = etag;
      results[i] = stores[i]->Put("t/POINTER", StrCat("writer ", i), cas);
    });
  }
  for (auto& t : threads) t.join();
  int winners = 0;
  for (int i = 0; i < kWriters; ++i) {
    if (results[i].ok()) {
      ++winners;
      EXPECT_EQ(store_->Get("t/POINTER").value(), StrCat("writer ", i));
    } else {
      EXPECT_THAT(results[i], StatusIs(absl::StatusCode::kFailedPrecondition));
    }
  }
  EXPECT_EQ(winners, 1);
}

TEST_P(ObjectStoreTest, MissingObjectIsNotFound) {
  ASSERT_OK(store_->Put("t/present", "x"));
  EXPECT_THAT(store_->Get("t/absent"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("t/absent")));
  EXPECT_THAT(store_->Head("t/absent"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(store_->Get("t/present/below"),
              StatusIs(absl::StatusCode::kNotFound));
  const std::string dest = dir_.File("dest");
  EXPECT_THAT(store_->GetToFile("t/absent", dest),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(
      Entries(dir_.path()),
      ::testing::Not(::testing::Contains(::testing::StartsWith(".dest"))));
  EXPECT_FALSE(std::filesystem::exists(dest));
}

TEST_P(ObjectStoreTest, HeadGivesSizeAndAnEtagThatChanges) {
  ASSERT_OK(store_->Put("k", Bytes(321)));
  auto first = store_->Head("k");
  ASSERT_OK(first);
  EXPECT_EQ(first->key, "k");
  EXPECT_EQ(first->size, 321u);
  EXPECT_FALSE(first->etag.empty());
  ASSERT_OK(store_->Put("k", Bytes(321, 2)));
  auto second = store_->Head("k");
  ASSERT_OK(second);
  EXPECT_NE(second->etag, first->etag);
}

TEST_P(ObjectStoreTest, GetRange) {
  const std::string data = Bytes(100);
  ASSERT_OK(store_->Put("k", data));
  EXPECT_EQ(store_->Get("k", ByteRange{10, 5}).value(), data.substr(10, 5));
  EXPECT_EQ(store_->Get("k", ByteRange{0, 100}).value(), data);
  // Clipped at the end, as S3 does.
  EXPECT_EQ(store_->Get("k", ByteRange{90, 50}).value(), data.substr(90));
  EXPECT_THAT(store_->Get("k", ByteRange{100, 1}),
              StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(store_->Get("k", ByteRange{5, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(ObjectStoreTest, LargeFileRoundTripsVerified) {
  // 12 MiB: three parts of a multipart upload on S3 (TestStoreOptions).
  const std::string data = Bytes(12 << 20, 7);
  const std::string source = dir_.File("source");
  WriteFile(source, data);
  ASSERT_OK(store_->PutFile("t/v1/table.sst", source));
  auto info = store_->Head("t/v1/table.sst");
  ASSERT_OK(info);
  EXPECT_EQ(info->size, data.size());
  const std::string dest = dir_.File("dest.sst");
  ASSERT_OK(store_->GetToFile("t/v1/table.sst", dest,
                              Expect(data.size(), Xxh3(data))));
  EXPECT_TRUE(ReadFile(dest) == data);
  EXPECT_EQ(std::filesystem::status(dest).permissions() &
                std::filesystem::perms::others_read,
            std::filesystem::perms::others_read);
}

TEST_P(ObjectStoreTest, LargePutIfAbsentRefusesATakenKey) {
  const std::string source = dir_.File("source");
  WriteFile(source, Bytes(7 << 20, 3));
  ASSERT_OK(store_->PutFile("big", source, IfAbsent()));
  WriteFile(source, Bytes(7 << 20, 4));
  EXPECT_THAT(store_->PutFile("big", source, IfAbsent()),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_TRUE(store_->Get("big").value() == Bytes(7 << 20, 3));
  // A large Put from memory goes in parts too.
  const std::string data = Bytes(13 << 20, 5);
  ASSERT_OK(store_->Put("big2", data));
  EXPECT_TRUE(store_->Get("big2").value() == data);
}

TEST_P(ObjectStoreTest, GetToFileReplacesTheDestination) {
  ASSERT_OK(store_->Put("k", "new"));
  const std::string dest = dir_.File("dest");
  WriteFile(dest, "old contents");
  ASSERT_OK(store_->GetToFile("k", dest, Expect(3)));
  EXPECT_EQ(ReadFile(dest), "new");
}

TEST_P(ObjectStoreTest, MismatchedDownloadIsDataLossAndLeavesNothing) {
  const std::string data = Bytes(5000);
  ASSERT_OK(store_->Put("k", data));
  const std::string dest = dir_.File("dest");
  EXPECT_THAT(
      store_->GetToFile("k", dest, Expect(std::nullopt, Xxh3(data) ^ 1)),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum mismatch")));
  EXPECT_THAT(store_->GetToFile("k", dest, Expect(4999)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("size")));
  EXPECT_THAT(store_->GetToFile("k", dest, Expect(5001)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("size")));
  // No destination, and no staging file beside it.
  EXPECT_THAT(
      Entries(dir_.path()),
      ::testing::Not(::testing::Contains(::testing::HasSubstr("dest"))));
  // An existing destination is left as it was.
  WriteFile(dest, "kept");
  EXPECT_THAT(store_->GetToFile("k", dest, Expect(std::nullopt, 1)),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_EQ(ReadFile(dest), "kept");
  EXPECT_THAT(Entries(dir_.path()),
              ::testing::Not(::testing::Contains(HasSubstr(".dest"))));
}

TEST_P(ObjectStoreTest, ALargeMismatchedDownloadIsDataLossAndLeavesNothing) {
  // 20 MiB: the download's disk writes start (every 8 MiB) long before its
  // last bytes arrive, and the mismatch is only known then.
  std::string data = Bytes(20 << 20, 9);
  const uint64_t good = Xxh3(data);
  data.back() ^= 1;
  ASSERT_OK(store_->Put("big", data));
  const std::string dest = dir_.File("dest");
  EXPECT_THAT(
      store_->GetToFile("big", dest, Expect(data.size(), good)),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum mismatch")));
  EXPECT_THAT(store_->GetToFile("big", dest, Expect(data.size() + 1)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("size")));
  EXPECT_THAT(store_->GetToFile("big", dest, Expect(data.size() - 1)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("size")));
  EXPECT_THAT(
      Entries(dir_.path()),
      ::testing::Not(::testing::Contains(::testing::HasSubstr("dest"))));
  // The same bytes with their own checksum arrive whole.
  ASSERT_OK(store_->GetToFile("big", dest, Expect(data.size(), Xxh3(data))));
  EXPECT_TRUE(ReadFile(dest) == data);
}

TEST_P(ObjectStoreTest, ListIsPaginatedAndInKeyOrder) {
  std::vector<std::string> expected;
  for (int i = 0; i < 25; ++i) {
    const std::string key = fmt::format("t/v{}/file-{:02}", i % 3, i);
    ASSERT_OK(store_->Put(key, std::string(i, 'x')));
    expected.push_back(key);
  }
  ASSERT_OK(store_->Put("other/x", "not listed"));
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> listed;
  ListOptions options = Listing("t/", false, 7);
  int pages = 0;
  do {
    auto page = store_->List(options);
    ASSERT_OK(page);
    ++pages;
    EXPECT_LE(page->objects.size(), 7u);
    for (const ObjectInfo& o : page->objects) {
      listed.push_back(o.key);
      EXPECT_EQ(o.size, static_cast<uint64_t>(
                            std::stoi(o.key.substr(o.key.size() - 2))));
    }
    options.page_token = page->next_page_token;
  } while (!options.page_token.empty());
  EXPECT_EQ(listed, expected);
  EXPECT_EQ(pages, 4);
  auto all = store_->ListAll("t/v1/");
  ASSERT_OK(all);
  EXPECT_EQ(all->size(), 8u);
  EXPECT_THAT(Keys(store_->ListAll("t/v1/file-1").value()),
              ElementsAre("t/v1/file-10", "t/v1/file-13", "t/v1/file-16",
                          "t/v1/file-19"));
}

TEST_P(ObjectStoreTest, ListGroupsBySlash) {
  for (const char* key : {"users/v1/table.sst", "users/v1/MANIFEST",
                          "users/v2/MANIFEST", "users/POINTER", "usersx/y"}) {
    ASSERT_OK(store_->Put(key, "x"));
  }
  auto page = store_->List(Listing("users/", true));
  ASSERT_OK(page);
  EXPECT_THAT(Keys(page->objects), ElementsAre("users/POINTER"));
  EXPECT_THAT(page->common_prefixes, ElementsAre("users/v1/", "users/v2/"));
  EXPECT_EQ(page->next_page_token, "");

  // One entry per page: the prefixes and the object, each once.
  std::vector<std::string> seen;
  ListOptions options = Listing("users/", true, 1);
  do {
    auto p = store_->List(options);
    ASSERT_OK(p);
    for (const auto& o : p->objects) seen.push_back(o.key);
    for (const auto& c : p->common_prefixes) seen.push_back(c);
    options.page_token = p->next_page_token;
  } while (!options.page_token.empty());
  EXPECT_THAT(seen, ElementsAre("users/POINTER", "users/v1/", "users/v2/"));
}

TEST_P(ObjectStoreTest, ListOfNothingIsEmpty) {
  auto page = store_->List(Listing("nothing/"));
  ASSERT_OK(page);
  EXPECT_THAT(page->objects, IsEmpty());
  EXPECT_THAT(page->common_prefixes, IsEmpty());
  EXPECT_THAT(store_->List(Listing("", false, 0)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(ObjectStoreTest, DeleteRemovesAndForgivesMissing) {
  ASSERT_OK(store_->Put("t/a", "x"));
  ASSERT_OK(store_->Put("t/b", "y"));
  ASSERT_OK(store_->Delete("t/a"));
  EXPECT_THAT(store_->Get("t/a"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(Keys(store_->ListAll("t/").value()), ElementsAre("t/b"));
  EXPECT_OK(store_->Delete("t/a"));
  EXPECT_OK(store_->Delete("never/was"));
}

TEST_P(ObjectStoreTest, BadKeysAreInvalidArgument) {
  const std::vector<std::string> keys = {
      "", "/a", "a/", "a//b", "a/../b", "./a", "a\nb", std::string(1025, 'k')};
  for (const std::string& key : keys) {
    EXPECT_THAT(store_->Put(key, "x"),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key")))
        << key;
    EXPECT_THAT(store_->Get(key), StatusIs(absl::StatusCode::kInvalidArgument));
  }
}

TEST_P(ObjectStoreTest, OfRacingConditionalPutsExactlyOneWins) {
  // Each writer has a store of its own, as racing publishers on two
  // machines would.
  constexpr int kWriters = 6;
  for (int round = 0; round < 5; ++round) {
    const std::string key = StrCat("t/v", round, "/MANIFEST");
    std::vector<std::unique_ptr<ObjectStore>> stores;
    for (int i = 0; i < kWriters; ++i) {
      auto s = OpenObjectStore(store_->uri(), TestStoreOptions());
      ASSERT_OK(s);
      stores.push_back(*std::move(s));
    }
    std::vector<absl::Status> results(kWriters);
    std::vector<std::thread> threads;
    for (int i = 0; i < kWriters; ++i) {
      threads.emplace_back([&, i] {
        results[i] = stores[i]->Put(key, StrCat("writer ", i), IfAbsent());
      });
    }
    for (auto& t : threads) t.join();
    int winner = -1;
    for (int i = 0; i < kWriters; ++i) {
      if (results[i].ok()) {
        EXPECT_EQ(winner, -1) << "two winners in round " << round;
        winner = i;
      } else {
        EXPECT_THAT(results[i], StatusIs(absl::StatusCode::kAlreadyExists));
      }
    }
    ASSERT_NE(winner, -1);
    EXPECT_EQ(store_->Get(key).value(), StrCat("writer ", winner));
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, ObjectStoreTest,
                         ::testing::ValuesIn(AllStoreKinds()), StoreKindName);

}  // namespace
}  // namespace roost::testing
