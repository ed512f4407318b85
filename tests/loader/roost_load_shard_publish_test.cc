// The shards of one version built apart and published all or nothing:
// `roost-load claim`, `roost-load build --shard I --version V` in as many
// processes at once, `roost-load publish` (loader/shard_commands.h), the
// real binary against a local directory and a real MinIO
// (tests/loader/roost_load_repository_fixture.h). What publish writes is
// what a one-host `build --shards N` writes; a retried shard uploads the
// same bytes; every refusal leaves nothing published.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "loader/shard_part.h"
#include "storage/partition.h"
#include "tests/loader/roost_load_repository_fixture.h"

namespace roost::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

using Records = std::vector<std::pair<std::string, std::string>>;

// Runs `command` with sh, its stdout captured.
Result Shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  Result run{-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.out.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// `n` records key-00000 ... in key order, their values tagged.
Records MakeRecords(int n, const std::string& tag = "") {
  Records out;
  for (int i = 0; i < n; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "key-%05d", i);
    out.push_back({key, StrCat("value-", i, tag)});
  }
  return out;
}

std::string Tsv(const Records& records) {
  std::string out;
  for (const auto& [k, v] : records) out += StrCat(k, "\t", v, "\n");
  return out;
}

// The records of `shard` of `shards`, in the order given.
Records OfShard(const Records& records, uint32_t shard, uint32_t shards) {
  Records out;
  for (const auto& r : records) {
    if (PartitionOf(r.first, shards) == shard) out.push_back(r);
  }
  return out;
}

class ShardPublishTest : public RoostLoadRepositoryTest {
 protected:
  // Writes each shard's records (of `records`) to NAME-I.tsv: the inputs
  // of the shard builds.
  std::vector<std::string> SplitInputs(const Records& records, uint32_t shards,
                                       const std::string& name) {
    std::vector<std::string> paths;
    for (uint32_t s = 0; s < shards; ++s) {
      paths.push_back(Write(StrCat(name, "-", s, ".tsv"),
                            Tsv(OfShard(records, s, shards))));
    }
    return paths;
  }
  // `roost-load claim`: the version name it printed, "" on failure.
  std::string Claim(const std::string& table) {
    Result r = RoostLoadStdout(
        StrCat("claim --repository ", root_, " --table ", table));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    if (r.exit_code != 0 || r.out.empty() || r.out.back() != '\n') return "";
    return r.out.substr(0, r.out.size() - 1);
  }
  Result BuildShard(const std::string& table, const std::string& version,
                    uint32_t shard, uint32_t shards, const std::string& input,
                    const std::string& extra = "") {
    return RoostLoad(StrCat("build -q -i ", input, " --repository ", root_,
                            " --table ", table, " --shards ", shards,
                            " --shard ", shard, " --version ", version, " ",
                            extra));
  }
  // Every shard at once, each in its own roost-load process.
  void BuildAll(const std::string& table, const std::string& version,
                const std::vector<std::string>& inputs,
                const std::string& extra = "") {
    const uint32_t shards = static_cast<uint32_t>(inputs.size());
    std::vector<Result> results(shards);
    std::vector<std::thread> threads;
    for (uint32_t s = 0; s < shards; ++s) {
      threads.emplace_back([&, s] {
        results[s] = BuildShard(table, version, s, shards, inputs[s], extra);
      });
    }
    for (std::thread& t : threads) t.join();
    for (uint32_t s = 0; s < shards; ++s) {
      EXPECT_EQ(results[s].exit_code, 0)
          << "shard " << s << ": " << results[s].out;
    }
  }
  Result Publish(const std::string& table, const std::string& version,
                 const std::string& extra = "") {
    return RoostLoad(StrCat("publish --repository ", root_, " --table ", table,
                            " --version ", version, " ", extra));
  }
  std::string Object(const std::string& key) {
    auto bytes = store_->Get(key);
    EXPECT_OK(bytes) << key;
    return bytes.value_or("");
  }
  // The MANIFEST of `version` as JSON, without what differs between two
  // builds of the same data: build_time, inputs and the version number.
  Json ManifestBut(const std::string& table, uint64_t version) {
    auto text = repository_->ReadManifest(table, version);
    EXPECT_OK(text);
    Json j = ParseOrFail(text.value_or("{}"));
    j.erase("build_time");
    j.erase("inputs");
    j.erase("version");
    return j;
  }
};

// The whole flow, both formats: claim, three shard builds at once,
// publish; the MANIFEST is the one-host build's but for build_time, inputs
// and the number, and the version pulled back verifies and answers.
TEST_P(ShardPublishTest, ClaimBuildShardsAtOncePublish) {
  const Records records = MakeRecords(300);
  const std::string all = Write("all.tsv", Tsv(records));
  for (const std::string format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    const std::string table = StrCat("t-", format);
    Result r = RoostLoadStdout(StrCat("claim --repository ", root_, " --table ",
                                      table, " --output-format json"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    Json claimed = ParseOrFail(r.out);
    EXPECT_EQ(claimed["version"], 1);
    EXPECT_EQ(claimed["version_name"], "v000001");
    EXPECT_EQ(claimed["path"], StrCat(store_->uri(), "/", table, "/v000001"));
    const std::vector<std::string> inputs =
        SplitInputs(records, 3, StrCat("in-", format));
    BuildAll(table, "v000001", inputs, StrCat("--format ", format));
    // Built, not published: every shard's file and part, no MANIFEST, no
    // pointer.
    EXPECT_TRUE(
        store_->Head(StrCat(table, "/v000001/shard-0002-of-0003.sst")).ok());
    EXPECT_TRUE(
        store_->Head(StrCat(table, "/v000001/shard-0002-of-0003.json")).ok());
    EXPECT_THAT(Versions(table), ElementsAre(RepositoryVersion{1, false}));
    EXPECT_EQ(Pointed(table), std::nullopt);

    r = RoostLoadStdout(StrCat("publish --repository ", root_, " --table ",
                               table,
                               " --version 1 --output-format json "
                               "--data-timestamp 2024-05-01T06:00:00Z"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    Json j = ParseOrFail(r.out);
    EXPECT_EQ(j["status"], "ok");
    EXPECT_EQ(j["path"], StrCat(store_->uri(), "/", table, "/v000001"));
    EXPECT_EQ(j["version"], 1);
    EXPECT_EQ(j["keys"], 300);
    EXPECT_EQ(j["shards"], 3);
    EXPECT_EQ(j["pointer_moved"], true);
    EXPECT_EQ(Pointed(table), 1u);
    // The parts are gone: the MANIFEST says all they said.
    EXPECT_TRUE(absl::IsNotFound(
        store_->Head(StrCat(table, "/v000001/shard-0000-of-0003.json"))
            .status()));

    // A one-host build of the same records (in key order, so that each
    // shard's cuckoo builder gets them in the order a shard build sorts
    // them into) writes the same MANIFEST, its files' checksums included.
    r = RoostLoad(StrCat("build -q -i ", all, " --repository ", root_,
                         " --table ", table, " --shards 3 --format ", format,
                         " --data-timestamp 2024-05-01T06:00:00Z"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(ManifestBut(table, 1), ManifestBut(table, 2));
    auto text = repository_->ReadManifest(table, 1);
    ASSERT_OK(text);
    auto manifest = Manifest::Parse(*text);
    ASSERT_OK(manifest);
    ASSERT_EQ(manifest->inputs.size(), 3u);
    EXPECT_EQ(manifest->inputs[2].path, inputs[2]);
    EXPECT_TRUE(manifest->build_time.has_value());

    const std::string local = Download(*store_, dir_, table, 1);
    r = RoostLoad("verify " + local);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    r = RoostLoad(StrCat("get ", local, " key-00007 key-00299"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, "key-00007\tvalue-7\nkey-00299\tvalue-299\n");
  }
}

// A shard with no records is an empty table of its shard, and the version
// publishes: 2 keys in 8 shards.
TEST_P(ShardPublishTest, AShardWithNoRecordsIsAnEmptyTable) {
  const Records records = MakeRecords(2);
  const std::string v = Claim("few");
  ASSERT_EQ(v, "v000001");
  BuildAll("few", v, SplitInputs(records, 8, "few"));
  Result r = Publish("few", v);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(StrCat("published ", store_->uri(),
                                      "/few/v000001: cuckoo table, 2 keys "
                                      "in 8 shards")));
  const std::string local = Download(*store_, dir_, "few", 1);
  r = RoostLoad("verify " + local);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

// Retried and speculative attempts: the same records in another order
// upload the very same bytes (file and part), in both formats, so that a
// later attempt overwrites an earlier one with identical objects. Without
// the sort, a cuckoo table of the same pairs in another order is another
// file (shown on the side with two plain builds).
TEST_P(ShardPublishTest, TheSameRecordsShuffledUploadTheSameBytes) {
  Records records = MakeRecords(2000);
  const Records mine = OfShard(records, 1, 2);
  Records shuffled = mine;
  std::mt19937 random(7);
  std::shuffle(shuffled.begin(), shuffled.end(), random);
  const std::string in_order = Write("ordered.tsv", Tsv(mine));
  const std::string out_of_order = Write("shuffled.tsv", Tsv(shuffled));

  Result r =
      RoostLoad(StrCat("build -q -i ", in_order, " -o ", dir_.File("a.sst")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RoostLoad(
      StrCat("build -q -i ", out_of_order, " -o ", dir_.File("b.sst")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(ReadFile(dir_.File("a.sst")), ReadFile(dir_.File("b.sst")));

  for (const std::string format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    const std::string table = StrCat("r-", format);
    const std::string v = Claim(table);
    const std::string file = StrCat(table, "/", v, "/shard-0001-of-0002.sst");
    const std::string part = StrCat(table, "/", v, "/shard-0001-of-0002.json");
    // The same input name both times: the part records it.
    const std::string input = dir_.File(StrCat("shard-1-", format, ".tsv"));
    std::filesystem::copy_file(in_order, input);
    r = BuildShard(table, v, 1, 2, input, StrCat("--format ", format));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string first_file = Object(file);
    const std::string first_part = Object(part);
    std::filesystem::copy_file(
        out_of_order, input, std::filesystem::copy_options::overwrite_existing);
    // A small --memory-limit: the sort spills runs and merges them.
    r = BuildShard(table, v, 1, 2, input,
                   StrCat("--format ", format, " --memory-limit 16k"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(Object(file), first_file);
    EXPECT_EQ(Object(part), first_part);
    EXPECT_THAT(first_part, Not(HasSubstr("build_time")));
  }
}

TEST_P(ShardPublishTest, MissingShardsAreNamedAndNothingIsPublished) {
  const std::vector<std::string> inputs =
      SplitInputs(MakeRecords(100), 4, "in");
  const std::string v = Claim("t");
  ASSERT_EQ(BuildShard("t", v, 0, 4, inputs[0]).exit_code, 0);
  ASSERT_EQ(BuildShard("t", v, 2, 4, inputs[2]).exit_code, 0);
  Result r = Publish("t", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out,
              HasSubstr(StrCat("cannot publish t v000001 in ", store_->uri(),
                               ": 2 of its 4 shards are not built: shard 1 "
                               "(shard-0001-of-0004.json), shard 3 "
                               "(shard-0003-of-0004.json) not in ",
                               store_->uri(), "/t/v000001/")));
  EXPECT_THAT(r.out, HasSubstr("nothing was published"));
  // --shards names the count when no part is there to name it.
  r = Publish("t", v, "--shards 4 --output-format json");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\"exit_code\": 65"));
  EXPECT_THAT(Versions("t"), ElementsAre(RepositoryVersion{1, false}));
  EXPECT_EQ(Pointed("t"), std::nullopt);
  // None at all.
  const std::string v2 = Claim("t");
  r = Publish("t", v2);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("no shard of it is built"));
  // The missing ones built, it publishes.
  ASSERT_EQ(BuildShard("t", v, 1, 4, inputs[1]).exit_code, 0);
  ASSERT_EQ(BuildShard("t", v, 3, 4, inputs[3]).exit_code, 0);
  r = Publish("t", v);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Pointed("t"), 1u);
}

TEST_P(ShardPublishTest, ACorruptOrTruncatedShardObjectIsRefused) {
  const std::vector<std::string> inputs =
      SplitInputs(MakeRecords(100), 3, "in");
  const std::string v = Claim("t");
  BuildAll("t", v, inputs);
  const std::string key = "t/v000001/shard-0001-of-0003.sst";
  const std::string good = Object(key);
  ASSERT_GT(good.size(), 100u);
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x20;
  ASSERT_OK(store_->Put(key, flipped));
  Result r = Publish("t", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("shard 1's file shard-0001-of-0003.sst does "
                               "not read back as its part says"));
  EXPECT_THAT(r.out, HasSubstr("build shard 1 again"));
  ASSERT_OK(store_->Put(key, good.substr(0, good.size() - 1)));
  r = Publish("t", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr(StrCat("shard 1's file shard-0001-of-0003.sst "
                                      "holds ",
                                      good.size() - 1, " bytes, its part says ",
                                      good.size())));
  ASSERT_OK(store_->Delete(key));
  r = Publish("t", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("shard-0001-of-0003.sst is missing beside its "
                               "part"));
  // A part that is not one.
  ASSERT_OK(store_->Put("t/v000001/shard-0001-of-0003.json", "{not json"));
  r = Publish("t", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("shard part shard-0001-of-0003.json: "));
  EXPECT_THAT(Versions("t"), ElementsAre(RepositoryVersion{1, false}));
  EXPECT_EQ(Pointed("t"), std::nullopt);
  // Built again, it publishes.
  ASSERT_EQ(BuildShard("t", v, 1, 3, inputs[1]).exit_code, 0);
  r = Publish("t", v);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST_P(ShardPublishTest, ARecordOfAnotherShardIsABadRecord) {
  const Records records = MakeRecords(100);
  const Records mine = OfShard(records, 0, 3);
  const Records theirs = OfShard(records, 2, 3);
  Records mixed = {mine[0], theirs[0], mine[1]};
  const std::string in = Write("mixed.tsv", Tsv(mixed));
  const std::string v = Claim("t");
  Result r = BuildShard("t", v, 0, 3, in);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr(StrCat(in, ":2: key \"", theirs[0].first,
                                      "\" belongs to shard 2 of 3, not to "
                                      "shard 0 being built")));
  EXPECT_TRUE(absl::IsNotFound(
      store_->Head("t/v000001/shard-0000-of-0003.sst").status()));
  // Within --max-bad-records it is skipped, and counted.
  r = RoostLoadStdout(StrCat("build -i ", in, " --repository ", root_,
                             " --table t --shards 3 --shard 0 --version ", v,
                             " --max-bad-records 1 --output-format json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Json j = ParseOrFail(r.out);
  EXPECT_EQ(j["bad_records"], 1);
  EXPECT_EQ(j["keys"], 2);
  EXPECT_EQ(j["shard"], 0);
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["path"],
            StrCat(store_->uri(), "/t/v000001/shard-0000-of-0003.sst"));
  // Binary input too: its framing is sound, the record is skipped the same.
  std::string fixed;
  for (const auto& [k, value] : mixed) fixed += k + std::string("12345678");
  const std::string bin = Write("mixed.bin", fixed);
  r = BuildShard("t", v, 0, 3, bin,
                 "--input-format fixed --key-size 9 --value-size 8");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr(StrCat(bin, "@17: key \"", theirs[0].first,
                                      "\" belongs to shard 2 of 3")));
}

TEST_P(ShardPublishTest, ShardsThatDisagreeAreRefused) {
  const Records records = MakeRecords(60);
  // Told different shard counts.
  std::string v = Claim("n");
  ASSERT_EQ(BuildShard("n", v, 0, 3, SplitInputs(records, 3, "a")[0]).exit_code,
            0);
  ASSERT_EQ(BuildShard("n", v, 1, 2, SplitInputs(records, 2, "b")[1]).exit_code,
            0);
  Result r = Publish("n", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("its shards were built for different shard "
                               "counts: 1 of 2 (shard-0001-of-0002.json, "
                               "...), 1 of 3 (shard-0000-of-0003.json, ...)"));
  r = Publish("n", v, "--shards 3");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--shards is 3"));
  EXPECT_EQ(Pointed("n"), std::nullopt);

  // Another format, and other options.
  const std::vector<std::string> inputs = SplitInputs(records, 3, "c");
  v = Claim("f");
  ASSERT_EQ(BuildShard("f", v, 0, 3, inputs[0]).exit_code, 0);
  ASSERT_EQ(BuildShard("f", v, 1, 3, inputs[1], "--format block").exit_code, 0);
  ASSERT_EQ(BuildShard("f", v, 2, 3, inputs[2]).exit_code, 0);
  r = Publish("f", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("shard 1 of f v000001 was built with another "
                               "table format than shard 0 (block against "
                               "cuckoo)"));
  ASSERT_EQ(BuildShard("f", v, 1, 3, inputs[1], "--utilization 0.8").exit_code,
            0);
  r = Publish("f", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("shard 1 of f v000001 was built with another "
                               "set of build options than shard 0"));
  EXPECT_THAT(Versions("f"), ElementsAre(RepositoryVersion{1, false}));
  ASSERT_EQ(BuildShard("f", v, 1, 3, inputs[1]).exit_code, 0);
  EXPECT_EQ(Publish("f", v).exit_code, 0);
}

TEST_P(ShardPublishTest, OnlyAClaimedVersionNotYetPublishedIsBuiltOrPublished) {
  const std::vector<std::string> inputs = SplitInputs(MakeRecords(30), 2, "in");
  // Never claimed.
  Result r = BuildShard("t", "v5", 0, 2, inputs[0]);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr(StrCat(store_->uri(),
                                      "/t/v000005 is not claimed: roost-load "
                                      "claim gives the version number")));
  r = Publish("t", "5");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("/t/v000005 is not claimed"));
  EXPECT_TRUE(Versions("t").empty());

  const std::string v = Claim("t");
  BuildAll("t", v, inputs);
  ASSERT_EQ(Publish("t", v).exit_code, 0);
  // Published: twice is refused, and so is another shard build into it.
  r = Publish("t", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("cannot publish t v000001 in " + store_->uri() +
                               ": it is published already"));
  r = BuildShard("t", v, 0, 2, inputs[0]);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("/t/v000001 is published already"));
  EXPECT_THAT(Versions("t"), ElementsAre(RepositoryVersion{1, true}));
  EXPECT_EQ(Pointed("t"), 1u);
}

// A shard build killed once its file is uploaded, before its part: publish
// sees the shard as not built; the retried build uploads it again and the
// version publishes.
TEST_P(ShardPublishTest, AShardBuildKilledMidUploadIsBuiltAgain) {
  // Large enough that reading the upload back takes far longer than
  // noticing it: ~24 MB of table a shard.
  Records records;
  for (int i = 0; i < 200000; ++i) {
    records.push_back({StrCat("key-", i), std::string(240, 'a' + i % 26)});
  }
  const std::vector<std::string> inputs = SplitInputs(records, 2, "big");
  const std::string v = Claim("big");
  ASSERT_EQ(BuildShard("big", v, 0, 2, inputs[0]).exit_code, 0);
  const std::string file = "big/v000001/shard-0001-of-0002.sst";
  const std::string part = "big/v000001/shard-0001-of-0002.json";
  // Killed as soon as its file is there, before its part: polled, and
  // tried again (from nothing) if it finished first on a busy machine.
  bool killed_between = false;
  for (int attempt = 0; attempt < 5 && !killed_between; ++attempt) {
    (void)store_->Delete(part);
    (void)store_->Delete(file);
    const pid_t pid = fork();
    if (pid == 0) {
      execl(LoadBinary(), LoadBinary(), "build", "-q", "-i", inputs[1].c_str(),
            "--repository", root_.c_str(), "--table", "big", "--shards", "2",
            "--shard", "1", "--version", v.c_str(), nullptr);
      _exit(127);
    }
    bool uploaded = false;
    bool ended = false;
    while (!uploaded && !ended) {
      uploaded = store_->Head(file).ok();
      ended = !uploaded && waitpid(pid, nullptr, WNOHANG) == pid;
      if (!uploaded && !ended) usleep(200);
    }
    if (ended) continue;
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    killed_between = WIFSIGNALED(status) && !store_->Head(part).ok();
  }
  ASSERT_TRUE(killed_between);
  EXPECT_TRUE(absl::IsNotFound(
      store_->Head("big/v000001/shard-0001-of-0002.json").status()));
  Result r = Publish("big", v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("1 of its 2 shards are not built: shard 1"));
  EXPECT_EQ(Pointed("big"), std::nullopt);

  ASSERT_EQ(BuildShard("big", v, 1, 2, inputs[1]).exit_code, 0);
  r = Publish("big", v);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Pointed("big"), 1u);
  const std::string local = Download(*store_, dir_, "big", 1);
  r = RoostLoad("verify " + local);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

// A version whose publish never runs is never served, and retention
// deletes it once it has been silent for --abandoned-after.
TEST_P(ShardPublishTest, AVersionNeverPublishedIsPrunedOnceAbandoned) {
  const std::string v = Claim("t");
  BuildAll("t", v, SplitInputs(MakeRecords(30), 2, "in"));
  ASSERT_EQ(Build("t").exit_code, 0);  // v2, a whole build
  EXPECT_THAT(Versions("t"), ElementsAre(RepositoryVersion{1, false},
                                         RepositoryVersion{2, true}));
  EXPECT_EQ(Pointed("t"), 2u);
  // Not yet silent for a day: it stays.
  Result r = Command("prune", "t", "--keep-versions 5");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(Versions("t"), ElementsAre(RepositoryVersion{1, false},
                                         RepositoryVersion{2, true}));
  sleep(2);
  r = Command("prune", "t", "--keep-versions 5 --abandoned-after 1s");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("deleted 0 complete and 1 abandoned "
                               "version(s): v000001"));
  EXPECT_THAT(Versions("t"), ElementsAre(RepositoryVersion{2, true}));
  auto left = store_->ListAll("t/v000001/");
  ASSERT_OK(left);
  EXPECT_TRUE(left->empty());
}

// publish --keep-versions: retention after publishing, as build's.
TEST_P(ShardPublishTest, PublishRunsRetentionWhenAsked) {
  const std::vector<std::string> inputs = SplitInputs(MakeRecords(30), 2, "in");
  for (int i = 0; i < 3; ++i) {
    const std::string v = Claim("t");
    BuildAll("t", v, inputs);
    Result r = RoostLoadStdout(StrCat("publish --repository ", root_,
                                      " --table t --version ", v,
                                      " --keep-versions 2 --output-format "
                                      "json"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    if (i == 2) {
      EXPECT_EQ(ParseOrFail(r.out)["pruned_versions"], Json::array({1}));
    }
  }
  EXPECT_THAT(Versions("t"), ElementsAre(RepositoryVersion{2, true},
                                         RepositoryVersion{3, true}));
}

// $TMPDIR names no directory and there is no --temp-dir: a build's
// staging directory, for --repository and for --shard, goes under /tmp as
// the sort's spill directory does, where roost-load aborted on the
// exception the system's temporary directory threw.
TEST_P(ShardPublishTest, AMissingTmpdirStagesUnderTmp) {
  const std::string env =
      StrCat("env TMPDIR=", dir_.File("missing"), " ", LoadBinary(), " ");
  const std::vector<std::string> inputs = SplitInputs(MakeRecords(30), 2, "in");
  const std::string v = Claim("t");
  for (uint32_t s = 0; s < 2; ++s) {
    // A memory limit that makes the sort spill.
    Result r = Shell(StrCat(env, "build -q -i ", inputs[s], " --repository ",
                            root_, " --table t --shards 2 --shard ", s,
                            " --version ", v, " --memory-limit 1k 2>&1"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  ASSERT_EQ(Publish("t", v).exit_code, 0);
  Result r = Shell(StrCat(env, "build -q -i ", input_, " --repository ", root_,
                          " --table t 2>&1"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(Versions("t"), ElementsAre(RepositoryVersion{1, true},
                                         RepositoryVersion{2, true}));
  EXPECT_EQ(Pointed("t"), 2u);
}

// The shell example of docs/operations/cluster.md ("Building the shards of
// a version in parallel"), run as it is written, against this repository.
TEST_P(ShardPublishTest, TheGuidesShellExampleRuns) {
  const std::string doc =
      ReadFile(StrCat(ROOST_SOURCE_DIR, "/docs/operations/cluster.md"));
  const size_t section =
      doc.find("\n### Building the shards of a version in parallel\n");
  ASSERT_NE(section, std::string::npos);
  const size_t from = doc.find("```sh\n", section);
  ASSERT_NE(from, std::string::npos);
  const size_t to = doc.find("\n```\n", from);
  ASSERT_NE(to, std::string::npos);
  const std::string script = doc.substr(from + 6, to - from - 6);
  const std::string work = dir_.File("example");
  std::filesystem::create_directories(work);
  WriteFile(StrCat(work, "/users.tsv"), Tsv(MakeRecords(500)));
  WriteFile(StrCat(work, "/example.sh"), script);
  const std::string bin =
      std::filesystem::path(LoadBinary()).parent_path().string();
  Result r = Shell(StrCat("cd ", work, " && env PATH=", bin,
                          ":/usr/bin:/bin REPO=", root_,
                          " bash -euo pipefail example.sh 2>&1"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Pointed("users"), 1u);
  const std::string local = Download(*store_, dir_, "users", 1);
  r = RoostLoad(StrCat("get ", local, " key-00042"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "key-00042\tvalue-42\n");
}

TEST(ShardPublishUsageTest, BadFlagsAreUsageErrors) {
  ScratchDir dir;
  const std::string in = dir.File("in.tsv");
  WriteFile(in, "a\t1\n");
  const std::string repo = dir.File("repo");
  const std::string build =
      StrCat("build -q -i ", in, " --repository ", repo, " --table t ");
  const std::string publish =
      StrCat("publish --repository ", repo, " --table t ");
  const struct {
    std::string args;
    std::string says;
  } cases[] = {
      {build + "--shards 4 --shard 4 --version 1",
       "--shard 4 is out of range: shards of 4 are 0 to 3"},
      {build + "--shards 4 --shard -1 --version 1", "bad --shard \"-1\""},
      {build + "--shards 4 --shard 1", "--shard goes with --version V"},
      {build + "--shards 4 --version 1", "--version goes with --shard I"},
      {build + "--shard 0 --version 1", "--shard needs --shards N of 2 to"},
      {build + "--shards 4 --shard 1 --version v0", "bad version \"v0\""},
      {build + "--shards 4 --shard 1 --version 1 --on-duplicate last",
       "--on-duplicate first or last goes not with --shard"},
      {build + "--shards 4 --shard 1 --version 1 --keep-versions 3",
       "--keep-versions goes not with --shard"},
      {build + "--shards 4 --shard 1 --version 1 --data-timestamp 1",
       "--data-timestamp goes not with --shard"},
      {StrCat("build -q -i ", in, " --data-dir ", dir.File("d"),
              " --table t --shards 4 --shard 1 --version 1"),
       "--shard goes with --repository"},
      {publish, "--version is required"},
      {publish + "--version 1 --shards 1", "bad --shards \"1\""},
      {publish + "--version x", "bad version \"x\""},
      {publish + "--version 1 --abandoned-after 1h",
       "--abandoned-after goes with --keep-versions"},
      {publish + "--version 1 --data-timestamp yesterday", "yesterday"},
      {StrCat("claim --repository ", repo, " --table ../t"), "bad table name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    Result r = RoostLoad(c.args);
    EXPECT_EQ(r.exit_code, 64) << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.says));
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, ShardPublishTest,
                         ::testing::ValuesIn(AllStoreKinds()), StoreKindName);

}  // namespace
}  // namespace roost::testing
