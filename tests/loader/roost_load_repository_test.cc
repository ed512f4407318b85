// roost-load publishing into a table repository, end to end: the real
// binary against a local directory and a real MinIO
// (tests/loader/roost_load_repository_fixture.h).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "tests/loader/roost_load_repository_fixture.h"

namespace roost::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_P(RoostLoadRepositoryTest, PublishesUnshardedAndShardedVersions) {
  Result r =
      RoostLoadStdout(StrCat("build -i ", input_, " --repository ", root_,
                             " --table fruit --output-format "
                             "json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Json j = ParseOrFail(r.out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["repository"], store_->uri());
  EXPECT_EQ(j["table"], "fruit");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["version_name"], "v000001");
  EXPECT_EQ(j["path"], StrCat(store_->uri(), "/fruit/v000001"));
  EXPECT_EQ(Pointed("fruit"), 1u);

  // Sharded, block format, with the text summary naming where it went.
  r = Build("fruit", "--shards 3 --format block");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RoostLoad(StrCat("build -i ", input_, " --repository ", root_,
                       " --table fruit --shards 2"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(StrCat("published ", store_->uri(),
                                      "/fruit/v000003: cuckoo table, 3 keys "
                                      "in 2 shards")));
  EXPECT_EQ(Pointed("fruit"), 3u);
  EXPECT_THAT(Versions("fruit"), ElementsAre(RepositoryVersion{1, true},
                                             RepositoryVersion{2, true},
                                             RepositoryVersion{3, true}));
  EXPECT_TRUE(store_->Head("fruit/v000002/shard-0002-of-0003.sst").ok());
  EXPECT_TRUE(store_->Head("fruit/v000001/table.sst").ok());

  // What was uploaded is what was built: pulled back, it verifies and
  // answers.
  for (uint64_t v : {1, 2}) {
    const std::string local = Download(*store_, dir_, "fruit", v);
    r = RoostLoad("verify " + local);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    r = RoostLoad("get " + local + " banana cherry", " 2>/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, "banana\tyellow\ncherry\tdark red\n");
  }
  // Nothing is left in the build's temporary directory.
  const std::string temp = dir_.File("tmp");
  std::filesystem::create_directories(temp);
  ASSERT_EQ(Build("fruit", "--temp-dir " + temp).exit_code, 0);
  EXPECT_TRUE(std::filesystem::is_empty(temp));
}

TEST_P(RoostLoadRepositoryTest, VersionsListsWhatIsThere) {
  Result r = Command("versions", "fruit");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pointer    (none)"));
  ASSERT_EQ(Build("fruit").exit_code, 0);
  ASSERT_EQ(Build("fruit", "--shards 2").exit_code, 0);
  ASSERT_EQ(repository_->ClaimVersion("fruit", "a killed one").value(), 3u);

  r = RoostLoadStdout(StrCat("versions --repository ", root_,
                             " --table fruit --output-format json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Json j = ParseOrFail(r.out);
  EXPECT_EQ(j["repository"], store_->uri());
  EXPECT_EQ(j["table"], "fruit");
  EXPECT_EQ(j["pointer"], "v000002");
  ASSERT_EQ(j["versions"].size(), 3u);
  const Json& v1 = j["versions"][0];
  EXPECT_EQ(v1["name"], "v000001");
  EXPECT_EQ(v1["complete"], true);
  EXPECT_EQ(v1["pointer"], false);
  EXPECT_EQ(v1["files"], 1);
  EXPECT_EQ(v1["keys"], 3);
  EXPECT_EQ(v1["bytes"], store_->Head("fruit/v000001/table.sst")->size);
  EXPECT_TRUE(v1["published_at"].is_string());
  const Json& v2 = j["versions"][1];
  EXPECT_EQ(v2["pointer"], true);
  EXPECT_EQ(v2["files"], 2);
  const Json& v3 = j["versions"][2];
  EXPECT_EQ(v3["complete"], false);
  EXPECT_TRUE(v3["keys"].is_null());
  EXPECT_TRUE(v3["published_at"].is_null());
  EXPECT_TRUE(v3["claimed_at"].is_string());

  r = Command("versions", "fruit");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("* v000002   complete"));
  EXPECT_THAT(r.out, HasSubstr("  v000003   incomplete"));
  // A MANIFEST damaged in place is shown, not fatal.
  ASSERT_OK(store_->Put("fruit/v000001/MANIFEST", "{not json"));
  r = Command("versions", "fruit");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("(MANIFEST: "));
}

TEST_P(RoostLoadRepositoryTest, RollbackMovesThePointerOnlyToACompleteVersion) {
  ASSERT_EQ(Build("fruit").exit_code, 0);
  ASSERT_EQ(Build("fruit").exit_code, 0);
  Result r = Command("rollback", "fruit", "--to v1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pointer moved from v000002 to v000001"));
  EXPECT_EQ(Pointed("fruit"), 1u);
  r = RoostLoadStdout(StrCat("rollback --repository ", root_,
                             " --table fruit --to 2 --output-format json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(ParseOrFail(r.out)["pointer"], "v000002");
  EXPECT_EQ(Pointed("fruit"), 2u);

  r = Command("rollback", "fruit", "--to v000009");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("back to v000009: there is no such version; "
                               "the pointer still names v000002"));
  ASSERT_EQ(repository_->ClaimVersion("fruit", "a killed one").value(), 3u);
  r = Command("rollback", "fruit", "--to 3");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("it is not complete (no MANIFEST)"));
  EXPECT_EQ(Pointed("fruit"), 2u);
  // A damaged POINTER: listed as an error, repaired by a rollback.
  ASSERT_OK(store_->Put("fruit/POINTER", "garbage\n"));
  r = Command("versions", "fruit");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("POINTER names no version: \"garbage\""));
  r = Command("rollback", "fruit", "--to 2");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pointer moved from (damaged) to v000002"));
  for (const char* bad : {"v", "x3", "0", "-1", "v1.5"}) {
    r = Command("rollback", "fruit", StrCat("--to ", bad));
    EXPECT_EQ(r.exit_code, 64) << bad << r.out;
    EXPECT_THAT(r.out, HasSubstr("bad version")) << bad;
  }
  EXPECT_EQ(Pointed("fruit"), 2u);
}

TEST_P(RoostLoadRepositoryTest, KeepVersionsDeletesTheOldestAfterPublishing) {
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Build("fruit").exit_code, 0);
  Result r = RoostLoadStdout(
      StrCat("build -i ", input_, " --repository ", root_,
             " --table fruit --keep-versions 2 --output-format json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Json j = ParseOrFail(r.out);
  EXPECT_EQ(j["version"], 4);
  EXPECT_EQ(j["pruned_versions"], Json::array({1, 2}));
  EXPECT_THAT(Versions("fruit"), ElementsAre(RepositoryVersion{3, true},
                                             RepositoryVersion{4, true}));
  EXPECT_TRUE(store_->ListAll("fruit/v000001/").value().empty());
  EXPECT_EQ(Pointed("fruit"), 4u);
}

TEST_P(RoostLoadRepositoryTest, PruneKeepsThePointersAndFreshClaims) {
  for (int i = 0; i < 4; ++i) ASSERT_EQ(Build("fruit").exit_code, 0);
  ASSERT_EQ(Command("rollback", "fruit", "--to 2").exit_code, 0);
  Result r = Command("prune", "fruit", "--keep-versions 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("deleted 1 complete and 0 abandoned "
                               "version(s): v000001"));
  // v2 is pointed to; v3 and v4 are newer than it.
  EXPECT_THAT(Versions("fruit"), ElementsAre(RepositoryVersion{2, true},
                                             RepositoryVersion{3, true},
                                             RepositoryVersion{4, true}));

  ASSERT_EQ(repository_->ClaimVersion("fruit", "still uploading").value(), 5u);
  ASSERT_EQ(Build("fruit").exit_code, 0);  // v6, pointed to
  r = Command("prune", "fruit", "--keep-versions 2 --abandoned-after 1h");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(Versions("fruit"), ElementsAre(RepositoryVersion{4, true},
                                             RepositoryVersion{5, false},
                                             RepositoryVersion{6, true}));
  r = RoostLoadStdout(StrCat("prune --repository ", root_,
                             " --table fruit --keep-versions 2 "
                             "--abandoned-after 0s --output-format json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Json j = ParseOrFail(r.out);
  EXPECT_EQ(j["deleted"], Json::array());
  EXPECT_EQ(j["abandoned_deleted"], Json::array({"v000005"}));
  EXPECT_THAT(Versions("fruit"), ElementsAre(RepositoryVersion{4, true},
                                             RepositoryVersion{6, true}));
  EXPECT_EQ(Build("fruit").exit_code, 0);
  EXPECT_EQ(Pointed("fruit"), 7u);  // no number is handed out twice

  for (const char* bad : {"--keep-versions 0", "--keep-versions x",
                          "--keep-versions 1 --abandoned-after 1y",
                          "--keep-versions 1 --abandoned-after -1h"}) {
    r = Command("prune", "fruit", bad);
    EXPECT_EQ(r.exit_code, 64) << bad << r.out;
  }
}

TEST_P(RoostLoadRepositoryTest, MaxShrinkComparesWithTheNewestCompleteVersion) {
  ASSERT_EQ(Build("fruit").exit_code, 0);  // 3 keys
  ASSERT_EQ(repository_->ClaimVersion("fruit", "killed").value(), 2u);
  const std::string one = Write("one.tsv", "apple\tred\n");
  Result r = RoostLoad(StrCat("build -q -i ", one, " --repository ", root_,
                              " --table fruit --max-shrink 10%"));
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr(StrCat("holds 1 keys; v000001 in ",
                                      store_->uri(), " holds 3")));
  EXPECT_THAT(r.out, HasSubstr("nothing was published"));
  // Refused before claiming: no version number was taken.
  EXPECT_THAT(Versions("fruit"), ElementsAre(RepositoryVersion{1, true},
                                             RepositoryVersion{2, false}));
  EXPECT_EQ(Pointed("fruit"), 1u);
  r = RoostLoad(StrCat("build -q -i ", one, " --repository ", root_,
                       " --table fruit --max-shrink 70%"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Pointed("fruit"), 3u);
}

INSTANTIATE_TEST_SUITE_P(Stores, RoostLoadRepositoryTest,
                         ::testing::ValuesIn(AllStoreKinds()), StoreKindName);

}  // namespace
}  // namespace roost::testing
