// roost-load build --shards N: one version of N table files, each key in
// the shard the partition function names; inspect, verify and get of such a
// version; and every way a sharded version can be malformed, refused by
// verify (the check roost-server makes too) naming the shard.

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <map>

#include "storage/partition.h"
#include "storage/table.h"
#include "storage/version/open_version.h"
#include "tests/harness/manifest_edit.h"
#include "tests/loader/roost_load_fixture.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;

class ShardsTest : public RoostLoadTest {
 protected:
  // `n` keys of several lengths, "key0" -> "value0", ... as TSV.
  std::string Input(int n, const std::string& name = "in.tsv") {
    std::string tsv;
    for (int i = 0; i < n; ++i) {
      tsv += StrCat("key", i, "\tvalue", i, "\n");
      kvs_[StrCat("key", i)] = StrCat("value", i);
    }
    return Write(name, tsv);
  }
  // Builds `input` into DATA/t as the next version; the result.
  Result Build(const std::string& input, const std::string& flags) {
    return RoostLoad(StrCat("build -q -i ", input, " --data-dir ", data_,
                            " --table t ", flags));
  }
  // Every key of kvs_ is in its shard's file of `version_dir`, with its
  // value, and in no other shard's.
  void ExpectPartitioned(const std::string& version_dir, uint32_t shards) {
    std::vector<std::unique_ptr<Table>> tables;
    for (uint32_t s = 0; s < shards; ++s) {
      auto t = Table::Open(version_dir + "/" + ShardFileName(s, shards));
      ASSERT_OK(t);
      tables.push_back(std::move(*t));
    }
    uint64_t total = 0;
    for (const auto& t : tables) total += t->num_keys();
    EXPECT_EQ(total, kvs_.size());
    for (const auto& [key, value] : kvs_) {
      const uint32_t shard = PartitionOf(key, shards);
      std::string got;
      for (uint32_t s = 0; s < shards; ++s) {
        auto found = tables[s]->Get(key, &got);
        ASSERT_OK(found);
        EXPECT_EQ(*found, s == shard) << key << " in shard " << s;
        if (s == shard) {
          EXPECT_EQ(got, value);
        }
      }
    }
  }
  // verify refuses `version_dir` (exit 65) with `message` in its output.
  void ExpectRefused(const std::string& version_dir,
                     const std::string& message) {
    const Result r = RoostLoad("verify " + version_dir);
    EXPECT_EQ(r.exit_code, 65) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
  }

  const std::string data_ = dir_.File("data");
  std::map<std::string, std::string> kvs_;
};

class ShardsFormatTest : public ShardsTest,
                         public ::testing::WithParamInterface<std::string> {};

TEST_P(ShardsFormatTest, BuildsOneFilePerShardInOneVersion) {
  const std::string in = Input(1000);
  const Result r = RoostLoadStdout(
      StrCat("build -i ", in, " --data-dir ", data_, " --table t --format ",
             GetParam(), " --shards 4 --output-format json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json summary = ParseOrFail(r.out);
  EXPECT_EQ(summary["keys"], 1000);
  EXPECT_EQ(summary["shards"], 4);
  const std::string v = data_ + "/t/v000001";
  EXPECT_FALSE(fs::exists(v + "/table.sst"));
  ExpectPartitioned(v, 4);

  const Json m = Json::parse(ReadFile(v + "/MANIFEST"));
  EXPECT_EQ(m["shards"], 4);
  EXPECT_EQ(m["partition"]["function"], "xxh3-64-multiply-shift");
  EXPECT_EQ(m["partition"]["seed"], 491495846772u);
  EXPECT_EQ(m["keys"], 1000);
  EXPECT_EQ(m["build_options"]["shards"], 4);
  ASSERT_EQ(m["files"].size(), 4u);
  uint64_t keys = 0, bytes = 0;
  for (uint32_t s = 0; s < 4; ++s) {
    const Json& f = m["files"][s];
    EXPECT_EQ(f["name"], ShardFileName(s, 4));
    EXPECT_EQ(f["shard"], s);
    EXPECT_EQ(f["size"], fs::file_size(v + "/" + ShardFileName(s, 4)));
    EXPECT_GT(f["keys"].get<uint64_t>(), 150u);  // about 250 each
    keys += f["keys"].get<uint64_t>();
    bytes += f["size"].get<uint64_t>();
  }
  EXPECT_EQ(keys, 1000u);
  EXPECT_EQ(summary["file_size"], bytes);

  // Published like any version: read-only, and it passes verify.
  EXPECT_EQ(fs::status(v).permissions() & fs::perms::owner_write,
            fs::perms::none);
  const Result verify = RoostLoad("verify " + v);
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  EXPECT_NE(verify.out.find(v + ": ok (4 shards, " + GetParam() +
                            " table, 1000 keys, MANIFEST agrees)"),
            std::string::npos)
      << verify.out;
  EXPECT_NE(verify.out.find(v + "/shard-0003-of-0004.sst: ok (shard 3"),
            std::string::npos)
      << verify.out;
}

TEST_P(ShardsFormatTest, OneShardIsTheUnshardedTableByteForByte) {
  const std::string in = Input(300);
  const std::string format = " --format " + GetParam();
  ASSERT_EQ(Build(in, format).exit_code, 0);
  ASSERT_EQ(Build(in, format + " --shards 1").exit_code, 0);
  const std::string v1 = data_ + "/t/v000001", v2 = data_ + "/t/v000002";
  EXPECT_EQ(ReadFile(v1 + "/table.sst"), ReadFile(v2 + "/table.sst"));
  std::string m1 = ReadFile(v1 + "/MANIFEST"), m2 = ReadFile(v2 + "/MANIFEST");
  // Only the version number differs, and the time of the build (the
  // second build may fall in the next second).
  const std::string one = "\"version\": 1,", two = "\"version\": 2,";
  ASSERT_NE(m2.find(two), std::string::npos) << m2;
  m2.replace(m2.find(two), two.size(), one);
  for (std::string* m : {&m1, &m2}) {
    const size_t at = m->find("\"build_time\": \"");
    ASSERT_NE(at, std::string::npos) << *m;
    m->replace(at, m->find('\n', at) - at, "\"build_time\": ...");
  }
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(m1.find("shard"), std::string::npos) << m1;
  EXPECT_EQ(m1.find("partition"), std::string::npos) << m1;
}

TEST_P(ShardsFormatTest, DuplicatesAreFoundAtTheirInputLines) {
  const std::string in = Write("dup.tsv", "a\t1\nb\t2\nc\t3\nb\t4\n");
  const Result r = Build(in, "--format " + GetParam() + " --shards 3");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(
      r.out.find(in + ":4: duplicate key \"b\" (first seen at " + in + ":2)"),
      std::string::npos)
      << r.out;
  EXPECT_TRUE(Versions(data_ + "/t").empty());
  // Kept by the policy, in the right shard.
  ASSERT_EQ(
      Build(in, "--format " + GetParam() + " --shards 3 --on-duplicate last")
          .exit_code,
      0);
  kvs_ = {{"a", "1"}, {"b", "4"}, {"c", "3"}};
  ExpectPartitioned(data_ + "/t/v000001", 3);
}

TEST_P(ShardsFormatTest, MoreShardsThanKeysLeavesEmptyShards) {
  const std::string in = Input(3);
  ASSERT_EQ(Build(in, "--format " + GetParam() + " --shards 16").exit_code, 0);
  const std::string v = data_ + "/t/v000001";
  ExpectPartitioned(v, 16);
  const Result verify = RoostLoad("verify " + v);
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  // The text summary says how many shards.
  const Result again =
      RoostLoad(StrCat("build -i ", in, " --data-dir ", data_,
                       " --table t --shards 16 --format ", GetParam()));
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find(" table, 3 keys in 16 shards, "), std::string::npos)
      << again.out;
}

TEST_P(ShardsFormatTest, InspectAndGetRouteByThePartitionFunction) {
  const std::string in = Input(100);
  ASSERT_EQ(Build(in, "--format " + GetParam() + " --shards 3").exit_code, 0);
  const Result inspect = RoostLoad("inspect " + data_ + "/t");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.out;
  EXPECT_NE(inspect.out.find("shards            3 (xxh3-64-multiply-shift, "
                             "seed 491495846772)"),
            std::string::npos)
      << inspect.out;
  for (uint32_t s = 0; s < 3; ++s) {
    EXPECT_NE(inspect.out.find(StrCat("shard ", s, "           ",
                                      ShardFileName(s, 3), ": ")),
              std::string::npos)
        << inspect.out;
  }
  const Result get =
      RoostLoad("get " + data_ + "/t key0 key42 key99 nosuchkey", " 2>&1");
  EXPECT_EQ(get.exit_code, 1) << get.out;
  EXPECT_NE(get.out.find("key0\tvalue0\nkey42\tvalue42\nkey99\tvalue99\n"),
            std::string::npos)
      << get.out;
  EXPECT_NE(get.out.find("\"nosuchkey\": not found"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(BothFormats, ShardsFormatTest,
                         ::testing::Values("cuckoo", "block"));

// The block format sorts once, by (shard, key), in --memory-limit: runs
// spill, and every shard's file is sorted and whole.
TEST_F(ShardsTest, BlockShardsSortInBoundedMemory) {
  const std::string in = Input(20000);
  const Result r = RoostLoadStdout(
      StrCat("build -i ", in, " --data-dir ", data_,
             " --table t --format block --shards 5 --memory-limit 64k "
             "--temp-dir ",
             dir_.path().string(), " --output-format json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_GT(ParseOrFail(r.out)["sort_runs_spilled"].get<uint64_t>(), 1u);
  const std::string v = data_ + "/t/v000001";
  ExpectPartitioned(v, 5);
  for (uint32_t s = 0; s < 5; ++s) {
    auto t = Table::Open(v + "/" + ShardFileName(s, 5));
    ASSERT_OK(t);
    auto it = (*t)->NewIterator();
    ASSERT_NE(it, nullptr);
    std::string previous;
    uint64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
      const std::string key(it->key());
      if (n > 0) {
        EXPECT_LT(previous, key);
      }
      EXPECT_EQ(PartitionOf(key, 5), s);
      previous = key;
    }
    EXPECT_EQ(n, (*t)->num_keys());
  }
}

TEST_F(ShardsTest, BadShardCountsAreUsageErrors) {
  const std::string in = Input(10);
  for (const std::string value :
       {"0", "1025", "-1", "x", "2.5", "99999999999"}) {
    const Result r = Build(in, "--shards " + value);
    EXPECT_EQ(r.exit_code, 64) << value << ": " << r.out;
    EXPECT_NE(r.out.find("bad --shards \"" + value +
                         "\" (a whole number from "
                         "1 to 1024)"),
              std::string::npos)
        << r.out;
  }
  const Result file = RoostLoad(
      StrCat("build -q -i ", in, " -o ", dir_.File("x.sst"), " --shards 2"));
  EXPECT_EQ(file.exit_code, 64) << file.out;
  EXPECT_NE(file.out.find("--shards goes with --data-dir"), std::string::npos)
      << file.out;
  EXPECT_FALSE(fs::exists(data_));
}

// Malformed sharded versions: refused by verify and OpenVersion alike, the
// error naming the shard.
TEST_F(ShardsTest, AMissingShardFileIsRefusedNamingIt) {
  ASSERT_EQ(Build(Input(50), "--shards 3").exit_code, 0);
  const std::string v = data_ + "/t/v000001";
  fs::permissions(v, fs::perms::owner_all, fs::perm_options::add);
  fs::remove(v + "/shard-0001-of-0003.sst");
  ExpectRefused(
      v, "incomplete version: " + v + "/shard-0001-of-0003.sst has 0 of the");
  // Two of three files: no server's copy (it holds one), so incomplete;
  // the error says how to check the shards that are here.
  ExpectRefused(v, "; --shard I checks shard I's file alone");
  // The other shards still open on their own.
  VersionOpenOptions options;
  options.shard = 2;
  EXPECT_OK(OpenVersion(v, options));
}

TEST_F(ShardsTest, ACorruptShardIsRefusedNamingIt) {
  for (const std::string format : {"cuckoo", "block"}) {
    fs::remove_all(data_);
    ASSERT_EQ(Build(Input(200), "--shards 3 --format " + format).exit_code, 0);
    const std::string v = data_ + "/t/v000001";
    const std::string path = v + "/" + ShardFileName(2, 3);
    ::chmod(path.c_str(), 0644);
    std::string bytes = ReadFile(path);
    bytes[bytes.size() / 2] ^= 0x5a;
    WriteFile(path, bytes);
    ExpectRefused(v, ShardFileName(2, 3));
  }
}

TEST_F(ShardsTest, InconsistentShardFieldsAreRefused) {
  ASSERT_EQ(Build(Input(60), "--shards 3").exit_code, 0);
  const std::string v = data_ + "/t/v000001";
  const std::string manifest = v + "/MANIFEST";
  const std::string good = ReadFile(manifest);
  struct Case {
    std::function<void(Json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Json& m) { m["shards"] = 4; },
       "lists 3 files for 4 shards; a sharded version holds one per shard"},
      {[](Json& m) { m["shards"] = 1; }, "missing or malformed \"shards\""},
      {[](Json& m) { m["shards"] = 5000; }, "missing or malformed \"shards\""},
      {[](Json& m) { m.erase("partition"); },
       "missing or malformed \"partition\""},
      {[](Json& m) { m.erase("shards"); }, "missing or malformed \"shards\""},
      {[](Json& m) { m["partition"]["function"] = "crc32-mod"; },
       "unsupported partition function \"crc32-mod\""},
      {[](Json& m) { m["partition"]["seed"] = 0; },
       "unsupported partition function \"xxh3-64-multiply-shift\" with seed "
       "0"},
      {[](Json& m) { std::swap(m["files"][0], m["files"][1]); },
       "shard 0: lists file shard-0001-of-0003.sst of shard 1 where "
       "shard-0000-of-0003.sst of shard 0 belongs"},
      {[](Json& m) { m["files"][2]["name"] = "table.sst"; },
       "shard 2: lists file table.sst"},
      {[](Json& m) { m["files"][1].erase("keys"); },
       "missing or malformed \"files\""},
      {[](Json& m) {
         m["files"][0]["keys"] = m["files"][0]["keys"].get<uint64_t>() + 1;
         m["files"][1]["keys"] = m["files"][1]["keys"].get<uint64_t>() - 1;
       },
       "shard 0: says keys"},
      {[](Json& m) {
         m["files"][0]["keys"] = m["files"][0]["keys"].get<uint64_t>() + 1;
       },
       "its shards hold 61 keys"},
      {[](Json& m) { m["files"][1]["size"] = 1; },
       "says shard-0001-of-0003.sst size 1; shard 1's file"},
  };
  for (const Case& c : cases) {
    WriteFile(manifest, good);
    EditManifest(v, c.edit);
    ExpectRefused(v, c.message);
  }
  WriteFile(manifest, good);
  EXPECT_EQ(RoostLoad("verify " + v).exit_code, 0);
}

// A server's local copy of a sharded version (roost-server --shard I, pulled
// from a repository) holds the MANIFEST and shard I's file only. inspect,
// verify and get recognise such a one-shard copy, as the runbook has them
// used on a rolled-back version, or are told --shard I; a copy whose shard
// file is cut short or missing is refused all the same.
class LocalCopyTest : public ShardsTest {
 protected:
  // Builds 100 keys in 3 shards into DATA/t/v000001, and copies that
  // version to COPY/t/v000001 with the MANIFEST and the files of `keep`
  // only, as a server pulls it. The copy's directory.
  std::string BuildAndCopy(const std::vector<uint32_t>& keep) {
    EXPECT_EQ(Build(Input(100), "--shards 3").exit_code, 0);
    const std::string v = data_ + "/t/v000001";
    const std::string copy = dir_.File("copy") + "/t/v000001";
    fs::create_directories(copy);
    fs::copy_file(v + "/MANIFEST", copy + "/MANIFEST");
    for (uint32_t s : keep) {
      fs::copy_file(v + "/" + ShardFileName(s, 3),
                    copy + "/" + ShardFileName(s, 3));
    }
    return copy;
  }
  // A key of kvs_ in `shard` of 3.
  std::string KeyOf(uint32_t shard) const {
    for (const auto& [key, value] : kvs_) {
      if (PartitionOf(key, 3) == shard) return key;
    }
    return "";
  }
  uint64_t KeysOf(uint32_t shard) const {
    uint64_t n = 0;
    for (const auto& [key, value] : kvs_) n += PartitionOf(key, 3) == shard;
    return n;
  }
};

TEST_F(LocalCopyTest, AOneShardCopyIsVerifiedInspectedAndLookedUp) {
  const std::string copy = BuildAndCopy({1});
  const std::string keys = StrCat(KeysOf(1));
  Result r = RoostLoad("verify " + copy);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out,
            StrCat(copy,
                   "/shard-0001-of-0003.sst: ok (shard 1, cuckoo "
                   "table, ",
                   keys, " keys)\n", copy,
                   ": ok (a copy of shard 1 of 3, as a server keeps "
                   "it: the other shards' files are not here; cuckoo "
                   "table, ",
                   keys, " of the version's 100 keys, MANIFEST agrees)\n"));
  // The table directory means its newest version, as ever.
  EXPECT_EQ(
      RoostLoad("verify " + fs::path(copy).parent_path().string()).exit_code,
      0);

  r = RoostLoad("inspect " + copy);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(StrCat(
                "shard 1           shard-0001-of-0003.sst: ", keys, " keys, ")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(StrCat("shard 0           shard-0000-of-0003.sst: not "
                              "here (",
                              KeysOf(0), " keys, ")),
            std::string::npos)
      << r.out;

  // A key of shard 1 is looked up; a key of a shard not here cannot be,
  // and is not reported "not found".
  const std::string mine = KeyOf(1), other = KeyOf(2);
  r = RoostLoad("get " + copy + " " + mine);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, mine + "\t" + kvs_[mine] + "\n");
  r = RoostLoad("get " + copy + " " + other + " " + mine);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find("roost-load: \"" + other +
                       "\": in shard 2 of 3, whose file is not in " + copy +
                       " (it holds shard 1)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(mine + "\t" + kvs_[mine] + "\n"), std::string::npos)
      << r.out;
}

TEST_F(LocalCopyTest, ShardFlagChecksOneShard) {
  const std::string copy = BuildAndCopy({1});
  const std::string v = data_ + "/t/v000001";
  const std::string keys = StrCat(KeysOf(1));
  for (const std::string& dir : {copy, v}) {
    SCOPED_TRACE(dir);
    Result r = RoostLoad("verify --shard 1 " + dir);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find(StrCat(dir,
                                ": ok (shard 1 of 3 (--shard 1); cuckoo "
                                "table, ",
                                keys,
                                " of the version's 100 keys, MANIFEST "
                                "agrees)\n")),
              std::string::npos)
        << r.out;
    r = RoostLoad("inspect --shard 1 " + dir);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("shard 2           shard-0002-of-0003.sst: not read "
                         "(--shard 1) ("),
              std::string::npos)
        << r.out;
    const std::string mine = KeyOf(1), other = KeyOf(0);
    r = RoostLoad("get --shard 1 " + dir + " " + mine + " " + other);
    EXPECT_EQ(r.exit_code, 65) << r.out;
    EXPECT_NE(r.out.find(mine + "\t" + kvs_[mine] + "\n"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\"" + other +
                         "\": in shard 0 of 3, not read "
                         "(--shard 1)"),
              std::string::npos)
        << r.out;
  }
  // Shard 0 is not in the copy; there is no shard 3.
  Result r = RoostLoad("verify --shard 0 " + copy);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find("incomplete version: " + copy +
                       "/shard-0000-of-0003.sst has 0 of the "),
            std::string::npos)
      << r.out;
  r = RoostLoad("verify --shard 3 " + v);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find("has 3 shards, 0 to 2; there is no shard 3"),
            std::string::npos)
      << r.out;
  for (const std::string command : {"verify", "inspect", "get"}) {
    r = RoostLoad(command + " --shard x " + v + " k");
    EXPECT_EQ(r.exit_code, 64) << command << ": " << r.out;
  }
  // An unsharded version is read whole whatever --shard says, as the
  // server serves it.
  ASSERT_EQ(Build(Input(10), "").exit_code, 0);
  r = RoostLoad("verify --shard 2 " + data_ + "/t/v000002");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(RoostLoad("get --shard 2 " + data_ + "/t key7").out,
            "key7\tvalue7\n");
}

TEST_F(LocalCopyTest, ACopyWithItsShardFileCutShortOrMissingIsRefused) {
  const std::string copy = BuildAndCopy({1});
  const std::string file = copy + "/" + ShardFileName(1, 3);
  const uint64_t size = fs::file_size(file);
  fs::resize_file(file, size / 2);
  const std::string cut = StrCat("incomplete version: ", file, " has ",
                                 size / 2, " of the ", size, " bytes");
  const std::string key = StrCat(" ", KeyOf(1));
  for (const std::string& command :
       {"verify " + copy, "verify --shard 1 " + copy, "inspect " + copy,
        "get " + copy + key, "get --shard 1 " + copy + key}) {
    const Result r = RoostLoad(command);
    EXPECT_EQ(r.exit_code, 65) << command << ": " << r.out;
    EXPECT_NE(r.out.find(cut), std::string::npos) << command << ": " << r.out;
  }
  // None of the shards' files.
  fs::remove(file);
  for (const std::string& command :
       {"verify " + copy, "inspect " + copy, "get " + copy + key}) {
    const Result r = RoostLoad(command);
    EXPECT_EQ(r.exit_code, 65) << command << ": " << r.out;
    EXPECT_NE(r.out.find("incomplete version: " + copy +
                         " holds none of its 3 shards' files "
                         "(shard-0000-of-0003.sst to shard-0002-of-0003.sst)"),
              std::string::npos)
        << command << ": " << r.out;
  }
  // Corrupt rather than short: named by verify, as in a whole version.
  const std::string copy2 = dir_.File("copy2") + "/t/v000001";
  fs::create_directories(copy2);
  fs::copy_file(copy + "/MANIFEST", copy2 + "/MANIFEST");
  std::string bytes = ReadFile(data_ + "/t/v000001/" + ShardFileName(1, 3));
  bytes[bytes.size() / 2] ^= 0x5a;
  WriteFile(copy2 + "/" + ShardFileName(1, 3), bytes);
  const Result r = RoostLoad("verify " + copy2);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find(ShardFileName(1, 3)), std::string::npos) << r.out;
}

TEST_F(ShardsTest, OpenVersionNeedsAShardOfASharedVersion) {
  ASSERT_EQ(Build(Input(20), "--shards 2").exit_code, 0);
  const std::string v = data_ + "/t/v000001";
  auto whole = OpenVersion(v, {});
  EXPECT_EQ(whole.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(whole.status().message().find(
                "is a sharded version of 2 shards; open one of its shards"),
            std::string::npos)
      << whole.status();
  VersionOpenOptions options;
  options.shard = 2;
  auto missing = OpenVersion(v, options);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  options.shard = 1;
  auto one = OpenVersion(v, options);
  ASSERT_OK(one);
  EXPECT_EQ(one->shard, 1u);
  EXPECT_EQ(one->file_name, "shard-0001-of-0002.sst");
  // An unsharded version opens whatever the shard.
  ASSERT_EQ(Build(Input(20), "").exit_code, 0);
  options.shard = 7;
  EXPECT_OK(OpenVersion(data_ + "/t/v000002", options));
}

}  // namespace
}  // namespace roost::testing
