// roost-server end to end: lookups. Get, MultiGet and StreamMultiGet against
// both formats and every load mode, the status codes and messages of
// server/README.md, ListTables, and roost-get. The real roost-server runs as
// a child process; the tables are built by the real roost-load. See
// tests/harness/server_harness.h. The rest of the suite:
// server_lifecycle_test.cc (flags, health, shutdown), server_metrics_test.cc,
// server_swap_test.cc (new versions while serving) and server_rollback_test.cc.

#include <filesystem>
#include <random>

#include "tests/harness/server_harness.h"
#include "tests/harness/test_util.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;

class LookupTest : public ServerFixture {};

// `n` pairs with keys of 1 to 40 random bytes and values of 0 to 300, plus
// an empty key, an empty value, and tabs, newlines and zeros in both.
KeyValues MixedPairs(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  KeyValues kvs = {{"", "the empty key"},
                   {"empty value", ""},
                   {std::string("\0\t\n\xff", 4), std::string("\n\0\t", 3)}};
  while (kvs.size() < n) {
    std::string key = RandomBytes(rng, 1 + rng() % 40);
    kvs.emplace(std::move(key),
                RandomBytes(rng, rng() % 10 == 0 ? 0 : rng() % 300));
  }
  return kvs;
}

// Keys not in `kvs`, no longer than its longest key.
std::vector<std::string> MissingKeys(const KeyValues& kvs, size_t n,
                                     uint64_t seed) {
  size_t longest = 0;
  for (const auto& [k, v] : kvs) longest = std::max(longest, k.size());
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  while (out.size() < n) {
    std::string key = RandomBytes(rng, 1 + rng() % longest);
    if (!kvs.count(key)) out.push_back(std::move(key));
  }
  return out;
}

// A MultiGet asking for the packed form (MultiGetRequest.packed).
grpc::Status PackedMultiGet(ServerProcess& server, const std::string& table,
                            const std::vector<std::string>& keys,
                            v1::MultiGetResponse* response) {
  v1::MultiGetRequest request;
  request.set_table(table);
  for (const std::string& key : keys) request.add_keys(key);
  request.set_packed(true);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  return server.lookup().MultiGet(&context, request, response);
}

TEST_F(LookupTest, GetAndMultiGetAnswerWhatTheLoaderWasGiven) {
  const KeyValues kvs = MixedPairs(1, 400);
  const std::vector<std::string> missing = MissingKeys(kvs, 100, 2);
  struct Table {
    std::string name, format;
    std::vector<std::string> flags;
  };
  const std::vector<Table> tables = {
      {"cuckoo", "cuckoo", {}},
      {"block", "block", {}},
      {"snappy", "block", {"--compression", "snappy", "--block-size", "512"}},
  };
  for (const Table& t : tables) {
    ASSERT_NE(BuildTable(data_, t.name, kvs, t.format, t.flags), "");
  }
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());

  for (const Table& t : tables) {
    SCOPED_TRACE(t.name);
    ASSERT_EQ(server.Table(t.name).value_or(v1::TableInfo()).format(),
              t.format);
    for (const auto& [key, value] : kvs) {
      v1::GetResponse r;
      ASSERT_OK(server.Get(t.name, key, &r));
      ASSERT_TRUE(r.found()) << PrintableKey(key);
      ASSERT_EQ(r.value(), value) << PrintableKey(key);
    }
    for (const std::string& key : missing) {
      v1::GetResponse r;
      ASSERT_OK(server.Get(t.name, key, &r));
      EXPECT_FALSE(r.found()) << PrintableKey(key);
      EXPECT_EQ(r.value(), "");
    }
    // Every key and every miss, interleaved, in batches of 97: one result
    // per key, in request order.
    std::vector<std::string> all;
    auto miss = missing.begin();
    for (const auto& [key, value] : kvs) {
      all.push_back(key);
      if (miss != missing.end() && all.size() % 4 == 0) all.push_back(*miss++);
    }
    for (size_t start = 0; start < all.size(); start += 97) {
      const std::vector<std::string> batch(
          all.begin() + start, all.begin() + std::min(all.size(), start + 97));
      v1::MultiGetResponse r;
      ASSERT_OK(server.MultiGet(t.name, batch, &r));
      ASSERT_EQ(r.results_size(), static_cast<int>(batch.size()));
      for (size_t i = 0; i < batch.size(); ++i) {
        auto it = kvs.find(batch[i]);
        ASSERT_EQ(r.results(i).found(), it != kvs.end())
            << "result " << i << " of " << PrintableKey(batch[i]);
        ASSERT_EQ(r.results(i).value(), it != kvs.end() ? it->second : "")
            << "result " << i << " of " << PrintableKey(batch[i]);
      }
      // The packed form: the same answers, sliced from one bytes field.
      v1::MultiGetResponse p;
      ASSERT_OK(PackedMultiGet(server, t.name, batch, &p));
      EXPECT_EQ(p.results_size(), 0);
      EXPECT_EQ(p.version(), r.version());
      // Sizes per key, or one width for all (lookup.proto).
      if (p.packed_width() == 0) {
        ASSERT_EQ(p.packed_sizes_size(), static_cast<int>(batch.size()));
      } else {
        ASSERT_EQ(p.packed_sizes_size(), 0);
      }
      size_t offset = 0;
      std::vector<uint32_t> missing;
      for (size_t i = 0; i < batch.size(); ++i) {
        const bool found = r.results(i).found();
        const size_t size = p.packed_width() == 0 ? p.packed_sizes(i)
                            : found               ? p.packed_width()
                                                  : 0;
        const std::string_view value =
            std::string_view(p.packed_values()).substr(offset, size);
        offset += size;
        if (!found) missing.push_back(static_cast<uint32_t>(i));
        ASSERT_EQ(value, r.results(i).value()) << "packed result " << i;
      }
      EXPECT_EQ(offset, p.packed_values().size());
      EXPECT_EQ(std::vector<uint32_t>(p.missing().begin(), p.missing().end()),
                missing);
    }
    v1::MultiGetResponse empty;
    ASSERT_OK(server.MultiGet(t.name, {}, &empty));
    EXPECT_EQ(empty.results_size(), 0);
    ASSERT_OK(PackedMultiGet(server, t.name, {}, &empty));
    EXPECT_EQ(empty.packed_sizes_size(), 0);
    EXPECT_NE(empty.version(), "");
  }
}

TEST_F(LookupTest, EveryLoadModeServesTheSameAnswers) {
  // Small tables: mmap-locked must stay under RLIMIT_MEMLOCK (often 64 KiB).
  std::mt19937_64 rng(7);
  KeyValues kvs = {{"", "empty key"}, {"no value", ""}};
  while (kvs.size() < 100) {
    kvs.emplace(RandomBytes(rng, 1 + rng() % 20), RandomBytes(rng, rng() % 50));
  }
  const std::string cuckoo = BuildTable(data_, "cuckoo", kvs, "cuckoo");
  const std::string block = BuildTable(data_, "block", kvs, "block");
  ASSERT_NE(cuckoo, "");
  ASSERT_NE(block, "");
  const std::vector<std::vector<std::string>> modes = {
      {"--load-mode", "mmap-locked"},
      {"--load-mode", "huge-pages"},
      {"--verify-checksums", "false"},
      {"--mmap-random", "false"}};
  for (const auto& mode : modes) {
    SCOPED_TRACE(mode[0] + " " + mode[1]);
    ServerFlags flags = Flags();
    flags.extra = mode;
    ServerProcess server(flags, LogFile(mode[1]));
    ASSERT_TRUE(server.WaitReady());
    for (const auto& [table, dir] :
         {std::pair{"cuckoo", cuckoo}, std::pair{"block", block}}) {
      auto info = server.Table(table);
      ASSERT_TRUE(info) << server.Log();
      EXPECT_EQ(info->serving_version(), "v000001") << server.Log();
      EXPECT_EQ(info->file_size(), fs::file_size(dir + "/table.sst"));
      for (const auto& [key, value] : kvs) {
        v1::GetResponse r;
        ASSERT_OK(server.Get(table, key, &r)) << table;
        ASSERT_TRUE(r.found()) << table << " " << PrintableKey(key);
        ASSERT_EQ(r.value(), value) << table << " " << PrintableKey(key);
      }
    }
  }
}

TEST_F(LookupTest, RefusesBadRequestsWithTheDocumentedMessages) {
  // "var": a block table with keys up to 32 bytes, longer than
  // --max-key-size 16; "short": keys of at most 2 bytes; "fixed": 8-byte
  // keys and values, so the cuckoo inline layout fixes the width.
  KeyValues var, short_keys, fixed;
  for (int i = 0; i < 50; ++i) {
    var.emplace(std::string(1 + i % 30, 'a') + std::to_string(i), "v");
    short_keys.emplace(std::to_string(i), "s");
    fixed[StrCat("key-", 1000 + i)] = StrCat("val-", 1000 + i);
  }
  ASSERT_NE(BuildTable(data_, "var", var, "block"), "");
  ASSERT_NE(BuildTable(data_, "short", short_keys, "block"), "");
  ASSERT_NE(BuildTable(data_, "fixed", fixed, "cuckoo"), "");
  ServerFlags flags = Flags();
  flags.extra = {"--max-batch", "5", "--max-key-size", "16"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_EQ(server.Table("fixed").value_or(v1::TableInfo()).key_width(), 8u);
  ASSERT_EQ(server.Table("var").value_or(v1::TableInfo()).key_width(), 0u);
  ASSERT_GT(server.Table("var").value_or(v1::TableInfo()).max_key_length(),
            16u);
  ASSERT_EQ(server.Table("short").value_or(v1::TableInfo()).max_key_length(),
            2u);

  v1::GetResponse g;
  v1::MultiGetResponse m;
  const auto get = [&](const std::string& table, const std::string& key) {
    return server.Get(table, key, &g);
  };
  const auto multi = [&](const std::string& table,
                         const std::vector<std::string>& keys) {
    return server.MultiGet(table, keys, &m);
  };
  const StatusCode kInvalid = StatusCode::INVALID_ARGUMENT;

  EXPECT_TRUE(IsError(get("", "k"), kInvalid, "table name is empty"));
  EXPECT_TRUE(IsError(multi("", {"k"}), kInvalid, "table name is empty"));
  EXPECT_TRUE(IsError(multi("", {}), kInvalid, "table name is empty"));
  EXPECT_TRUE(IsError(get("x", "k"), StatusCode::NOT_FOUND, "no table \"x\""));
  EXPECT_TRUE(
      IsError(multi("x", {"k"}), StatusCode::NOT_FOUND, "no table \"x\""));

  EXPECT_OK(multi("var", {"1", "2", "3", "4", "5"}));
  EXPECT_TRUE(IsError(multi("var", {"1", "2", "3", "4", "5", "6"}), kInvalid,
                      "MultiGet of 6 keys exceeds --max-batch 5"));

  const std::string k17(17, 'a');
  EXPECT_TRUE(IsError(get("var", k17), kInvalid,
                      "key is 17 bytes, more than --max-key-size 16"));
  EXPECT_TRUE(IsError(multi("var", {"a", "b", k17}), kInvalid,
                      "key 2 is 17 bytes, more than --max-key-size 16"));
  // --max-key-size is the only limit on a key's length: the contract does
  // not depend on the data. A key longer than any the table holds, or of
  // another width than a fixed-width table's keys, cannot be in it: a miss.
  EXPECT_TRUE(IsError(get("fixed", std::string(20, 'k')), kInvalid,
                      "key is 20 bytes, more than --max-key-size 16"));
  ASSERT_OK(get("short", "abc"));
  EXPECT_FALSE(g.found());
  ASSERT_OK(multi("short", {"1", "abc", "2"}));
  ASSERT_EQ(m.results_size(), 3);
  EXPECT_EQ(m.results(0).value(), "s");
  EXPECT_FALSE(m.results(1).found());
  EXPECT_EQ(m.results(2).value(), "s");
  for (const std::string& key :
       {std::string("key-100"), std::string(), std::string("key-10000")}) {
    ASSERT_OK(get("fixed", key)) << key;
    EXPECT_FALSE(g.found()) << key;
  }
  ASSERT_OK(multi("fixed", {"key-1000", "key", "key-1001"}));
  ASSERT_EQ(m.results_size(), 3);
  EXPECT_EQ(m.results(0).value(), "val-1000");
  EXPECT_FALSE(m.results(1).found());
  EXPECT_EQ(m.results(2).value(), "val-1001");
  // A key of the right width that is not there is a miss too.
  ASSERT_OK(get("fixed", "key-9999"));
  EXPECT_FALSE(g.found());
  ASSERT_OK(get("fixed", "key-1007"));
  EXPECT_EQ(g.value(), "val-1007");

  // A deadline already passed. gRPC's client fails such a call itself,
  // before sending it, with the same code, so the server's own message
  // ("deadline passed before the request was worked on") cannot be told
  // from here: only the code is checked.
  for (bool batch : {false, true}) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() -
                         std::chrono::seconds(1));
    grpc::Status s;
    if (batch) {
      v1::MultiGetRequest request;
      request.set_table("fixed");
      request.add_keys("key-1000");
      s = server.lookup().MultiGet(&context, request, &m);
    } else {
      v1::GetRequest request;
      request.set_table("fixed");
      request.set_key("key-1000");
      s = server.lookup().Get(&context, request, &g);
    }
    EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << batch;
  }
}

TEST_F(LookupTest, ListTablesDescribesEveryTable) {
  KeyValues users, events, fixed;
  for (int i = 0; i < 300; ++i) {
    users[StrCat("user", i)] = StrCat("name of user ", i);
    events[StrCat("event/", 100000 + i)] = std::string(i % 7, 'e');
    fixed[StrCat("fx", 100000 + i)] = "12345678";
  }
  const std::string users_v1 = BuildTable(data_, "users", users, "cuckoo");
  ASSERT_NE(BuildTable(data_, "events", events, "block"), "");
  events["event/999999999"] = "longest key";
  const std::string events_v2 =
      BuildTable(data_, "events", events, "block", {"--compression", "zstd"});
  const std::string fixed_v1 = BuildTable(data_, "fixed", fixed, "cuckoo");
  ASSERT_NE(users_v1, "");
  ASSERT_NE(events_v2, "");
  ASSERT_NE(fixed_v1, "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  v1::ListTablesResponse list;
  ASSERT_OK(server.ListTables(&list));
  ASSERT_EQ(list.tables_size(), 3) << list.DebugString();

  struct Want {
    std::string name, format, serving;
    uint64_t keys;
    std::string dir;
    std::vector<std::string> on_disk;
    uint32_t max_key_length, key_width;
  };
  const std::vector<Want> want = {
      {"events",
       "block",
       "v000002",
       301,
       events_v2,
       {"v000001", "v000002"},
       15,
       0},
      {"fixed", "cuckoo", "v000001", 300, fixed_v1, {"v000001"}, 8, 8},
      {"users", "cuckoo", "v000001", 300, users_v1, {"v000001"}, 7, 0},
  };
  for (int i = 0; i < 3; ++i) {
    const v1::TableInfo& t = list.tables(i);
    const Want& w = want[i];
    SCOPED_TRACE(w.name);
    EXPECT_EQ(t.name(), w.name);
    EXPECT_EQ(t.format(), w.format);
    EXPECT_EQ(t.serving_version(), w.serving);
    EXPECT_EQ(t.key_count(), w.keys);
    EXPECT_EQ(t.file_size(), fs::file_size(w.dir + "/table.sst"));
    EXPECT_EQ(std::vector<std::string>(t.versions_on_disk().begin(),
                                       t.versions_on_disk().end()),
              w.on_disk);
    EXPECT_EQ(t.max_key_length(), w.max_key_length);
    EXPECT_EQ(t.key_width(), w.key_width);
    EXPECT_FALSE(t.pinned());
    EXPECT_EQ(t.rolled_back_versions_size(), 0);
  }
}

TEST_F(LookupTest, StreamMultiGetAnswersEachRequestInOrderAcrossSwaps) {
  const std::vector<std::string> keys = Keys(100);
  size_t longest = 0;
  for (const std::string& k : keys) longest = std::max(longest, k.size());
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys)), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(20));
  auto stream = server.lookup().StreamMultiGet(&context);
  const auto ask = [&](const std::vector<std::string>& batch,
                       v1::MultiGetResponse* response) {
    v1::MultiGetRequest request;
    request.set_table("t");
    for (const std::string& k : batch) request.add_keys(k);
    return stream->Write(request) && stream->Read(response);
  };
  const std::vector<std::string> first(keys.begin(), keys.begin() + 10);
  v1::MultiGetResponse r;
  ASSERT_TRUE(ask(first, &r));
  ASSERT_EQ(r.results_size(), 10);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(VersionOf(r.results(i).value(), first[i]), 1);
  ASSERT_TRUE(ask({keys[50], "nope", keys[51]}, &r));
  ASSERT_EQ(r.results_size(), 3);
  EXPECT_EQ(VersionOf(r.results(0).value(), keys[50]), 1);
  EXPECT_FALSE(r.results(1).found());
  EXPECT_EQ(VersionOf(r.results(2).value(), keys[51]), 1);
  ASSERT_TRUE(ask({}, &r));
  EXPECT_EQ(r.results_size(), 0);

  // A new version while the stream is open: its next answer comes from it.
  ASSERT_NE(BuildTable(data_, "t", Versioned(2, keys), "block"), "");
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000002"));
  ASSERT_TRUE(ask(first, &r));
  ASSERT_EQ(r.results_size(), 10);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(VersionOf(r.results(i).value(), first[i]), 2);

  // A key longer than any in the table is a miss, not an error.
  const std::string too_long(longest + 1, 'k');
  ASSERT_TRUE(ask({keys[0], too_long}, &r));
  ASSERT_EQ(r.results_size(), 2);
  EXPECT_EQ(VersionOf(r.results(0).value(), keys[0]), 2);
  EXPECT_FALSE(r.results(1).found());

  // The first bad request ends the stream; its number prefixes the message.
  EXPECT_FALSE(ask({keys[0], std::string(70000, 'k')}, &r));
  EXPECT_TRUE(IsError(stream->Finish(), StatusCode::INVALID_ARGUMENT,
                      "request 5: key 1 is 70000 bytes, more than "
                      "--max-key-size 65536"));

  // A stream that ends without a bad request ends OK.
  grpc::ClientContext context2;
  context2.set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(20));
  stream = server.lookup().StreamMultiGet(&context2);
  ASSERT_TRUE(ask({keys[3]}, &r));
  EXPECT_EQ(VersionOf(r.results(0).value(), keys[3]), 2);
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_OK(stream->Finish());

  grpc::ClientContext context3;
  context3.set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(20));
  stream = server.lookup().StreamMultiGet(&context3);
  v1::MultiGetRequest unnamed;
  unnamed.add_keys(keys[0]);
  EXPECT_FALSE(stream->Write(unnamed) && stream->Read(&r));
  EXPECT_TRUE(IsError(stream->Finish(), StatusCode::INVALID_ARGUMENT,
                      "request 0: table name is empty"));
}

TEST_F(LookupTest, CorruptBlockMetByALookupIsDataLoss) {
  // Compressible values, so that snappy blocks are stored compressed and
  // their checksums checked before they are decompressed.
  KeyValues kvs;
  for (int i = 0; i < 200; ++i) {
    kvs[StrCat("key", 1000 + i)] =
        std::string(100, static_cast<char>('a' + i % 26));
  }
  const std::string dir =
      BuildTable(data_, "t", kvs, "block",
                 {"--compression", "snappy", "--block-size", "512"});
  ASSERT_NE(dir, "");
  // Damage data block 0 (the file starts with it); the index and footer
  // at the end stay intact.
  std::string bytes = ReadFile(dir + "/table.sst");
  bytes[20] ^= 0x01;
  WriteFile(dir + "/table.sst", bytes);
  ServerFlags flags = Flags();
  flags.extra = {"--verify-checksums", "false"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  v1::GetResponse g;
  grpc::Status s = server.Get("t", "key1000", &g);
  EXPECT_EQ(s.error_code(), StatusCode::DATA_LOSS);
  EXPECT_NE(s.error_message().find("data block 0 checksum mismatch"),
            std::string::npos)
      << s.error_message();
  ASSERT_OK(server.Get("t", "key1199", &g));
  EXPECT_EQ(g.value(), kvs["key1199"]);
  v1::MultiGetResponse m;
  EXPECT_EQ(server.MultiGet("t", {"key1199", "key1000"}, &m).error_code(),
            StatusCode::DATA_LOSS);
}

TEST_F(LookupTest, MessagesOverMaxMessageSizeAreResourceExhausted) {
  KeyValues kvs;
  std::vector<std::string> keys;
  for (int i = 0; i < 50; ++i) {
    keys.push_back(StrCat("key", 1000 + i));
    kvs[keys.back()] = std::string(200, 'v');
  }
  ASSERT_NE(BuildTable(data_, "t", kvs), "");
  ServerFlags flags = Flags();
  flags.extra = {"--max-request-size", "4096", "--max-message-size", "4096"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  v1::GetResponse g;
  grpc::Status s = server.Get("t", std::string(5000, 'k'), &g);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message().rfind("Received message larger than max (", 0),
            0u)
      << s.error_message();
  v1::MultiGetResponse m;
  ASSERT_OK(server.MultiGet(
      "t", std::vector<std::string>(keys.begin(), keys.begin() + 10), &m));
  // 30 values of 200 bytes: an answer over 4096 bytes, refused before it is
  // built.
  s = server.MultiGet(
      "t", std::vector<std::string>(keys.begin(), keys.begin() + 30), &m);
  EXPECT_TRUE(IsError(s, StatusCode::RESOURCE_EXHAUSTED,
                      "the response would be larger than --max-message-size "
                      "(4096 bytes)"));
  // The packed form is bounded the same way: 20 values of 200 bytes fit
  // in 4096 bytes, 21 do not.
  ASSERT_OK(PackedMultiGet(
      server, "t", std::vector<std::string>(keys.begin(), keys.begin() + 20),
      &m));
  EXPECT_EQ(m.packed_values().size(), 4000u);
  EXPECT_EQ(m.packed_width(), 200u);  // one width: no sizes
  EXPECT_EQ(m.packed_sizes_size(), 0);
  s = PackedMultiGet(server, "t",
                     std::vector<std::string>(keys.begin(), keys.begin() + 21),
                     &m);
  EXPECT_TRUE(IsError(s, StatusCode::RESOURCE_EXHAUSTED,
                      "the response would be larger than --max-message-size "
                      "(4096 bytes)"));
}

TEST_F(LookupTest, RoostGetLooksKeysUp) {
  const std::string binary_value("\x00\x01\xfe", 3);
  ASSERT_NE(BuildTable(data_, "t", {{"k1", "v1"}, {"key\t2", binary_value}}),
            "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  const std::string addr = server.lookup_address();
  const auto roost_get = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {RoostGetBinary(), "--addr", addr});
    return RunProcess(args);
  };
  ProcessResult r = roost_get({"t", "k1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "k1\tv1\n");
  // "key\t2" in hex; its value printed in hex.
  r = roost_get(
      {"--key-encoding", "hex", "--value-encoding", "hex", "t", "6b65790932"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "6b65790932\t0001fe\n");
  r = roost_get({"--key-encoding", "hex", "t", "6e6f"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "roost-get: \"6e6f\": not found\n");
  // Two keys: one MultiGet, output in key order.
  r = roost_get({"t", "nope", "k1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "k1\tv1\n");
  EXPECT_EQ(r.err, "roost-get: \"nope\": not found\n");
  r = roost_get({"nope", "k1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "roost-get: NOT_FOUND: no table \"nope\"\n");
}

}  // namespace
}  // namespace roost::testing
