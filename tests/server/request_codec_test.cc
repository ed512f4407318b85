// The hand-written wire format of Get and MultiGet (server/request_codec.h)
// against protobuf's own: what protobuf writes parses to the same fields,
// what the codec writes parses as the same message, and bytes that are not
// such a message are refused.

#include "server/request_codec.h"

#include <gtest/gtest.h>

#include <random>

#include "roost/v1/lookup.pb.h"
#include "storage/version/data_dir.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/escape.h"

namespace roost::testing {
namespace {

TEST(RequestCodecTest, ParsesWhatProtobufWrites) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    v1::MultiGetRequest m;
    m.set_table(std::string("t").append(std::to_string(round)));
    const int n = static_cast<int>(rng() % 50);
    for (int i = 0; i < n; ++i) m.add_keys(RandomBytes(rng, rng() % 300));
    const std::string bytes = m.SerializeAsString();
    LookupRequest parsed;
    ASSERT_OK(ParseMultiGetRequest(bytes, 1000, &parsed));
    EXPECT_EQ(parsed.table, m.table());
    ASSERT_EQ(parsed.total_keys, static_cast<size_t>(n));
    ASSERT_EQ(parsed.keys.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) EXPECT_EQ(parsed.keys[i], m.keys(i));

    v1::GetRequest g;
    g.set_table(m.table());
    g.set_key(RandomBytes(rng, rng() % 300));
    const std::string get_bytes = g.SerializeAsString();
    ASSERT_OK(ParseGetRequest(get_bytes, &parsed));
    EXPECT_EQ(parsed.table, g.table());
    ASSERT_EQ(parsed.keys.size(), 1u);
    EXPECT_EQ(parsed.keys[0], g.key());
  }
}

TEST(RequestCodecTest, FollowsProtobufOnRepeatsAndUnknownFields) {
  // The last table wins; unknown fields of every wire type are skipped, and
  // so is a known field number with another wire type.
  std::string bytes;
  bytes += std::string("\x0a\x01x", 3);                      // table = "x"
  bytes += std::string("\x18\x96\x01", 3);                   // field 3, varint
  bytes += std::string("\x25\x01\x02\x03\x04", 5);           // field 4, fixed32
  bytes += std::string("\x29", 1) + std::string(8, '\x07');  // 5, fixed64
  bytes += std::string("\x10\x05", 2);    // field 2 as a varint: unknown
  bytes += std::string("\x12\x02k1", 4);  // keys += "k1"
  bytes += std::string("\x0a\x01t", 3);   // table = "t"
  bytes += std::string("\x12\x00", 2);    // keys += ""
  LookupRequest parsed;
  ASSERT_OK(ParseMultiGetRequest(bytes, 10, &parsed));
  v1::MultiGetRequest m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  EXPECT_EQ(parsed.table, m.table());
  EXPECT_EQ(parsed.table, "t");
  ASSERT_EQ(parsed.keys.size(), 2u);
  EXPECT_EQ(parsed.keys[0], "k1");
  EXPECT_EQ(parsed.keys[1], "");
}

TEST(RequestCodecTest, CountsKeysPastTheLimitWithoutKeepingThem) {
  v1::MultiGetRequest m;
  m.set_table("t");
  for (int i = 0; i < 25; ++i) m.add_keys()->assign(1, 'k');
  const std::string bytes = m.SerializeAsString();
  LookupRequest parsed;
  ASSERT_OK(ParseMultiGetRequest(bytes, 10, &parsed));
  EXPECT_EQ(parsed.total_keys, 25u);
  EXPECT_EQ(parsed.keys.size(), 10u);
}

TEST(RequestCodecTest, RefusesWhatIsNotARequest) {
  const std::string kMulti =
      "malformed request: not a roost.v1.MultiGetRequest";
  const std::string kGet = "malformed request: not a roost.v1.GetRequest";
  LookupRequest parsed;
  for (const std::string& bad : {
           std::string("\xff\xff\xff", 3),  // a tag that never ends
           std::string("\x12\x05"
                       "ab",
                       4),                              // a key cut short
           std::string("\x0a\x80", 2),                  // a length cut short
           std::string("\x00", 1),                      // field number 0
           std::string("\x0b\x01", 2),                  // a group never ended
           std::string("\x12\xff\xff\xff\xff\x0f", 6),  // 4 GiB key
       }) {
    absl::Status s = ParseMultiGetRequest(bad, 10, &parsed);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad.size();
    EXPECT_EQ(s.message(), kMulti);
    EXPECT_EQ(ParseGetRequest(bad, &parsed).message(), kGet);
  }
  // Well-formed, but the table name is not UTF-8 (protobuf refuses such a
  // string field too).
  const std::string bad_table("\x0a\x02\xc3\x28", 4);
  EXPECT_EQ(ParseGetRequest(bad_table, &parsed).message(),
            "table name is not valid UTF-8");
  v1::GetRequest g;
  EXPECT_FALSE(g.ParseFromString(bad_table));
  // Nothing at all is a request for key "" of table "".
  ASSERT_OK(ParseGetRequest("", &parsed));
  EXPECT_EQ(parsed.table, "");
  EXPECT_EQ(parsed.keys.size(), 1u);
}

// Found by fuzz/request_fuzz (fuzz/regressions/request_fuzz/): protobuf
// checks every occurrence of a string field as it parses, so a request whose
// first table name is not UTF-8 is refused even when a later, valid one
// replaces it. The codec checked only the last.
TEST(RequestCodecTest, RefusesATableNameThatIsNotUtf8EvenIfReplaced) {
  std::string bytes;
  bytes += std::string("\x0a\x01\xf8", 3);  // table = "\xf8"
  bytes += std::string("\x0a\x02kv", 4);    // table = "kv"
  bytes += std::string("\x12\x00", 2);      // key(s) += ""
  v1::GetRequest g;
  EXPECT_FALSE(g.ParseFromString(bytes));
  v1::MultiGetRequest m;
  EXPECT_FALSE(m.ParseFromString(bytes));
  LookupRequest parsed;
  EXPECT_EQ(ParseGetRequest(bytes, &parsed).message(),
            "table name is not valid UTF-8");
  EXPECT_EQ(ParseMultiGetRequest(bytes, 10, &parsed).message(),
            "table name is not valid UTF-8");
}

// Found by fuzz/request_fuzz (fuzz/regressions/request_fuzz/): protobuf's
// parser reads a tag of at most 5 bytes and a length of at most 5 bytes
// (under 2 GiB), where CodedInputStream, which the codec used, reads 10 and
// drops the high bits; and it refuses field number 0 and groups nested past
// 100 deep. Each of these bytes must be refused, or taken, by both alike.
TEST(RequestCodecTest, AgreesWithProtobufOnVarintLengthsAndGroups) {
  const std::string nested_ok = std::string(100, '\x1b') +  // group 3, x100
                                std::string(100, '\x1c');   // and its ends
  const std::string nested_deep =
      std::string(101, '\x1b') + std::string(101, '\x1c');
  const std::vector<std::string> cases = {
      // The fuzzer's input: a 7-byte tag of field ...9, fixed64, then 8 bytes.
      std::string("\x91\x91\xfb\xff\xff\xff\x00\x00\x00\x00\x00\x00"
                  "\xdb\x91\x18",
                  15),
      std::string("\x8a\x80\x80\x80\x00\x02kv", 8),      // 5-byte tag 1
      std::string("\x8a\x80\x80\x80\x80\x00\x02kv", 9),  // 6-byte tag 1
      std::string("\x0a\x82\x80\x80\x80\x00kv", 8),      // 5-byte length
      std::string("\x0a\x82\x80\x80\x80\x80\x00kv", 9),  // 6-byte length
      std::string("\x12\x81\x80\x80\x80\x80\x80\x80\x80\x80\x00k",
                  13),                                  // 11-byte length
      std::string("\x1a\x81\x80\x80\x80\x80\x00k", 8),  // unknown, 6 bytes
      std::string("\x18\x81\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11),
      std::string("\x18\x81\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",
                  12),                         // an 11-byte varint
      std::string("\x02\x00", 2),              // field 0, length-delimited
      std::string("\x80\x80\x80\x80\x00", 5),  // tag 0 in 5 bytes
      std::string("\x1b\x0a\x02kv\x1c", 6),    // a field inside a group
      std::string("\x1b\x24", 2),              // a group ended by another
      std::string("\x1c", 1),                  // an end with no group
      std::string("\x19\x01\x02", 3),          // fixed64 cut short
      std::string("\x1d\x01\x02\x03\x04", 5),  // fixed32
      std::string("\x1e", 1),                  // wire type 6
      nested_ok,
      nested_deep,
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string& bytes = cases[i];
    LookupRequest parsed;
    v1::GetRequest g;
    EXPECT_EQ(ParseGetRequest(bytes, &parsed).ok(), g.ParseFromString(bytes))
        << "case " << i;
    v1::MultiGetRequest m;
    EXPECT_EQ(ParseMultiGetRequest(bytes, 10, &parsed).ok(),
              m.ParseFromString(bytes))
        << "case " << i;
  }
}

TEST(RequestCodecTest, WritesWhatProtobufReads) {
  std::mt19937_64 rng(11);
  std::vector<EncodedResult> results;
  std::vector<std::string> values;
  for (int i = 0; i < 300; ++i) {
    // Sizes across the one- and two-byte varint boundary, and empty values.
    values.push_back(RandomBytes(rng, i % 3 == 0 ? 0 : rng() % 400));
  }
  size_t size = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    results.push_back({i % 5 != 0, values[i]});
    size += MultiGetEntrySize(results.back());
  }
  std::string buffer(size, '\0');
  char* end = buffer.data();
  for (const EncodedResult& r : results) end = WriteMultiGetEntry(r, end);
  ASSERT_EQ(end, buffer.data() + size);
  v1::MultiGetResponse m;
  ASSERT_TRUE(m.ParseFromString(buffer));
  ASSERT_EQ(m.results_size(), static_cast<int>(results.size()));
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(m.results(i).found(), results[i].found) << i;
    EXPECT_EQ(m.results(i).value(),
              results[i].found ? values[i] : std::string())
        << i;
  }
  // And byte for byte what protobuf itself writes.
  v1::MultiGetResponse expected;
  for (const EncodedResult& r : results) {
    auto* out = expected.add_results();
    if (r.found) {
      out->set_found(true);
      out->set_value(std::string(r.value));
    }
  }
  EXPECT_EQ(buffer, expected.SerializeAsString());

  for (const EncodedResult& r : results) {
    std::string one(GetResponseSize(r), '\0');
    ASSERT_EQ(WriteGetResponse(r, one.data()), one.data() + one.size());
    v1::GetResponse g;
    if (r.found) {
      g.set_found(true);
      g.set_value(std::string(r.value));
    }
    EXPECT_EQ(one, g.SerializeAsString());
  }
}

TEST(RequestCodecTest, ParsesThePackedFlagAsProtobufDoes) {
  v1::MultiGetRequest m;
  m.set_table("t");
  m.add_keys("k");
  LookupRequest parsed;
  ASSERT_OK(ParseMultiGetRequest(m.SerializeAsString(), 10, &parsed));
  EXPECT_FALSE(parsed.packed);
  m.set_packed(true);
  ASSERT_OK(ParseMultiGetRequest(m.SerializeAsString(), 10, &parsed));
  EXPECT_TRUE(parsed.packed);
  // Any set bit is true, the last occurrence wins, and field 4 of another
  // wire type is an unknown field, as protobuf reads them.
  for (const auto& [bytes, want] : std::vector<std::pair<std::string, bool>>{
           {std::string("\x20\x80\x01", 3), true},
           {std::string("\x20\x01\x20\x00", 4), false},
           {std::string("\x20\x00\x20\x02", 4), true},
           {std::string("\x22\x01\x01", 3), false}}) {
    v1::MultiGetRequest proto;
    ASSERT_TRUE(proto.ParseFromString(bytes)) << PrintableKey(bytes);
    ASSERT_OK(ParseMultiGetRequest(bytes, 10, &parsed));
    EXPECT_EQ(parsed.packed, want) << PrintableKey(bytes);
    EXPECT_EQ(proto.packed(), want) << PrintableKey(bytes);
  }
}

// Writes `results` in the packed form; checks the size it gave beforehand.
std::string WritePacked(const std::vector<EncodedResult>& results) {
  PackedMultiGet packed;
  for (const EncodedResult& r : results) packed.Count(r);
  std::string buffer(packed.size(), '\0');
  packed.Start(buffer.data());
  for (const EncodedResult& r : results) packed.Write(r);
  EXPECT_EQ(packed.end(), buffer.data() + buffer.size());
  return buffer;
}

TEST(RequestCodecTest, WritesThePackedFormAsProtobufDoes) {
  // The worked example of lookup.proto: a = "xy", b missing, c = "z".
  EXPECT_EQ(WritePacked({{true, "xy"}, {false, {}}, {true, "z"}}),
            std::string("\x1a\x03xyz"
                        "\x22\x03\x02\x00\x01"
                        "\x2a\x01\x01",
                        13));
  // Its fixed-width twin: a = "xy", b missing, c = "zw".
  EXPECT_EQ(WritePacked({{true, "xy"}, {false, {}}, {true, "zw"}}),
            std::string("\x1a\x04xyzw"
                        "\x2a\x01\x01"
                        "\x30\x02",
                        11));
  EXPECT_EQ(WritePacked({}), "");

  std::mt19937_64 rng(13);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> values;
    std::vector<EncodedResult> results;
    // Up to 300 keys: indexes and sizes across varints' byte boundaries.
    // Every fourth round has values of one width (200: a two-byte
    // varint), which go in packed_width.
    const size_t n = rng() % 301;
    const bool fixed = round % 4 == 0;
    for (size_t i = 0; i < n; ++i) {
      values.push_back(
          RandomBytes(rng, fixed ? 200 : (i % 7 == 0 ? 0 : rng() % 300)));
    }
    v1::MultiGetResponse expected;
    size_t width = 0;
    bool one_width = true;
    for (size_t i = 0; i < n; ++i) {
      // Some rounds have every key, some none, the others a mix.
      const bool found = round % 10 == 1   ? true
                         : round % 10 == 2 ? false
                                           : rng() % 4 != 0;
      results.push_back({found, values[i]});
      if (found) {
        if (values[i].empty() || (width != 0 && width != values[i].size())) {
          one_width = false;
        }
        width = values[i].size();
        expected.mutable_packed_values()->append(values[i]);
        expected.add_packed_sizes(static_cast<uint32_t>(values[i].size()));
      } else {
        expected.add_packed_sizes(0);
        expected.add_missing(static_cast<uint32_t>(i));
      }
    }
    if (one_width && width > 0) {
      expected.clear_packed_sizes();
      expected.set_packed_width(static_cast<uint32_t>(width));
    }
    const std::string bytes = WritePacked(results);
    EXPECT_EQ(bytes, expected.SerializeAsString()) << round;
    v1::MultiGetResponse parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    EXPECT_EQ(parsed.results_size(), 0);
    if (fixed && !expected.packed_values().empty()) {
      EXPECT_EQ(parsed.packed_width(), 200u) << round;
    }
  }
}

TEST(RequestCodecTest, ParsesVersionsAndScanRequestsAsProtobufWritesThem) {
  std::mt19937_64 rng(13);
  for (int round = 0; round < 200; ++round) {
    v1::ScanRequest scan;
    scan.set_table(std::string("t").append(std::to_string(round)));
    scan.set_start(RandomBytes(rng, rng() % 40));
    scan.set_end(RandomBytes(rng, rng() % 40));
    scan.set_prefix(RandomBytes(rng, rng() % 4));
    scan.set_limit(static_cast<uint32_t>(round % 3 == 0 ? 0 : rng()));
    const uint64_t version = round % 4 == 0 ? 0 : rng() % 2000000 + 1;
    if (version != 0) {
      scan.set_version(round % 2 == 0 ? std::to_string(version)
                                      : VersionDirName(version));
    }
    ScanQuery q;
    const std::string scan_bytes = scan.SerializeAsString();  // q's views
    ASSERT_OK(ParseScanRequest(scan_bytes, &q));
    EXPECT_EQ(q.table, scan.table());
    EXPECT_EQ(q.start, scan.start());
    EXPECT_EQ(q.end, scan.end());
    EXPECT_EQ(q.prefix, scan.prefix());
    EXPECT_EQ(q.limit, scan.limit());
    EXPECT_EQ(q.version, version);

    v1::MultiGetRequest m;
    m.set_table("t");
    m.add_keys("k");
    m.set_version(scan.version());
    LookupRequest parsed;
    ASSERT_OK(ParseMultiGetRequest(m.SerializeAsString(), 10, &parsed));
    EXPECT_EQ(parsed.version, version);
    v1::GetRequest g;
    g.set_table("t");
    g.set_version(scan.version());
    ASSERT_OK(ParseGetRequest(g.SerializeAsString(), &parsed));
    EXPECT_EQ(parsed.version, version);
  }
  // A limit past 32 bits keeps its low 32 bits, as protobuf does; the last
  // of repeated fields wins; a limit sent length-delimited is unknown.
  std::string bytes;
  bytes += std::string("\x0a\x01t", 3);
  bytes += std::string("\x28\x81\x80\x80\x80\x10", 6);  // limit 2^32 + 1
  bytes += std::string("\x32\x01\x37", 3);              // version "7"
  bytes += std::string("\x32\x01\x39", 3);              // version "9"
  bytes += std::string("\x2a\x01x", 3);                 // field 5 as bytes
  ScanQuery q;
  ASSERT_OK(ParseScanRequest(bytes, &q));
  v1::ScanRequest scan;
  ASSERT_TRUE(scan.ParseFromString(bytes));
  EXPECT_EQ(q.limit, scan.limit());
  EXPECT_EQ(q.limit, 1u);
  EXPECT_EQ(q.version, 9u);
  EXPECT_EQ(scan.version(), "9");
}

TEST(RequestCodecTest, RefusesAVersionOfBadSyntaxNamingIt) {
  for (const std::string& version : std::vector<std::string>{
           "v7", "0", "v000000", "-1", " 1", "+1", "0x1", "v", "V000001",
           "99999999999999999999", std::string("1\0", 2)}) {
    SCOPED_TRACE(version);
    const std::string message = "bad version " + PrintableKey(version, 64) +
                                " (expected a version such as v000007 or 7)";
    v1::GetRequest g;
    g.set_table("t");
    g.set_version(version);
    LookupRequest parsed;
    EXPECT_THAT(ParseGetRequest(g.SerializeAsString(), &parsed),
                StatusIs(absl::StatusCode::kInvalidArgument, message));
    v1::MultiGetRequest m;
    m.set_table("t");
    m.set_version(version);
    EXPECT_THAT(ParseMultiGetRequest(m.SerializeAsString(), 10, &parsed),
                StatusIs(absl::StatusCode::kInvalidArgument, message));
    v1::ScanRequest scan;
    scan.set_table("t");
    scan.set_version(version);
    ScanQuery q;
    EXPECT_THAT(ParseScanRequest(scan.SerializeAsString(), &q),
                StatusIs(absl::StatusCode::kInvalidArgument, message));
  }
  EXPECT_EQ(ParseVersionText("v000007"), 7u);
  EXPECT_EQ(ParseVersionText("7"), 7u);
  EXPECT_EQ(ParseVersionText("v1000000"), 1000000u);
  // Not UTF-8, even where a later version replaces it: protobuf refuses it.
  const std::string bad("\x0a\x01t\x1a\x01\xff\x1a\x01\x31", 9);
  LookupRequest parsed;
  EXPECT_THAT(ParseGetRequest(bad, &parsed),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "version is not valid UTF-8"));
  v1::GetRequest g;
  EXPECT_FALSE(g.ParseFromString(bad));
  ScanQuery q;
  EXPECT_THAT(ParseScanRequest(std::string("\x0a\x01t\x32\x01\xff", 6), &q),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "version is not valid UTF-8"));
  EXPECT_THAT(ParseScanRequest(std::string("\x0a\x05t", 3), &q),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "malformed request: not a roost.v1.ScanRequest"));
}

TEST(RequestCodecTest, WritesVersionsAndScanResponsesAsProtobufDoes) {
  std::mt19937_64 rng(17);
  for (const uint64_t version : {1, 7, 123456, 99999999}) {
    const std::string name = VersionDirName(version);
    // A GetResponse and a MultiGetResponse with their version appended.
    std::string get =
        std::string("\x08\x01\x12\x01v", 5) + EncodeVersionField(3, name);
    v1::GetResponse g;
    g.set_found(true);
    g.set_value("v");
    g.set_version(name);
    EXPECT_EQ(get, g.SerializeAsString());
    EXPECT_EQ(EncodeVersionField(2, name), [&] {
      v1::MultiGetResponse m;
      m.set_version(name);
      return m.SerializeAsString();
    }());

    // A ScanResponse: entries (empty keys and values, and lengths across
    // the varint boundaries), the version, and more.
    std::vector<std::pair<std::string, std::string>> entries;
    for (int i = 0; i < 50; ++i) {
      entries.emplace_back(RandomBytes(rng, i % 7 == 0 ? 0 : rng() % 200),
                           RandomBytes(rng, i % 5 == 0 ? 0 : rng() % 300));
    }
    for (const bool more : {false, true}) {
      const std::string field = EncodeVersionField(2, name);
      size_t size = field.size() + (more ? kScanMoreSize : 0);
      for (const auto& [k, v] : entries) size += ScanEntrySize(k, v);
      std::string buffer(size, '\0');
      char* out = buffer.data();
      for (const auto& [k, v] : entries) out = WriteScanEntry(k, v, out);
      out = std::copy(field.begin(), field.end(), out);
      if (more) out = WriteScanMore(out);
      ASSERT_EQ(out, buffer.data() + size);
      v1::ScanResponse expected;
      for (const auto& [k, v] : entries) {
        v1::KeyValue* kv = expected.add_entries();
        kv->set_key(k);
        kv->set_value(v);
      }
      expected.set_version(name);
      expected.set_more(more);
      EXPECT_EQ(buffer, expected.SerializeAsString());
    }
  }
}

TEST(RequestCodecTest, ReadsFieldsAndAScoreAsProtobufMergesThem) {
  v1::MultiGetRequest first;
  first.set_table("t");
  first.add_keys("k");
  first.add_fields("a");
  first.add_fields("b");
  first.mutable_score()->set_field("old");
  first.mutable_score()->add_query(1.5f);
  first.mutable_score()->set_top_k(3);
  // A second occurrence of the score merges into the first: the last
  // field and similarity, the queries' floats of both.
  v1::MultiGetRequest second;
  second.mutable_score()->set_field("embedding");
  second.mutable_score()->set_similarity(v1::Score::COSINE);
  second.mutable_score()->add_query(-2.0f);
  const std::string bytes =
      first.SerializeAsString() + second.SerializeAsString();
  v1::MultiGetRequest merged;
  ASSERT_TRUE(merged.ParseFromString(bytes));
  LookupRequest r;
  ASSERT_OK(ParseMultiGetRequest(bytes, 10, &r));
  EXPECT_EQ(r.fields, (std::vector<std::string_view>{"a", "b"}));
  ASSERT_TRUE(r.has_score);
  EXPECT_EQ(r.score.field, merged.score().field());
  EXPECT_EQ(r.score.similarity, 1);
  EXPECT_EQ(r.score.top_k, 3u);
  EXPECT_EQ(r.score.query, (std::vector<float>{1.5f, -2.0f}));
  // The parse of the next request starts afresh.
  ASSERT_OK(ParseMultiGetRequest(std::string("\x0a\x01t", 3), 10, &r));
  EXPECT_FALSE(r.has_score);
  EXPECT_TRUE(r.fields.empty());
  EXPECT_TRUE(r.score.query.empty());
  v1::GetRequest get;
  get.set_table("t");
  get.add_fields("x");
  const std::string get_bytes = get.SerializeAsString();  // r views it
  ASSERT_OK(ParseGetRequest(get_bytes, &r));
  EXPECT_EQ(r.fields, (std::vector<std::string_view>{"x"}));
}

// Found with request_fuzz (fuzz/regressions/request_fuzz/
// score-with-no-query-floats): a score whose query is a packed field of no
// bytes. The codec copied those 0 bytes into its empty vector, whose data()
// is null, which memcpy must not be given (UndefinedBehaviorSanitizer).
TEST(RequestCodecTest, ReadsAScoreWithAnEmptyPackedQuery) {
  // score { field: "e", query: packed, 0 bytes }, then one float.
  const std::string empty(
      "\x0a\x01t\x32\x05\x0a\x01"
      "e"
      "\x1a\x00",
      10);
  v1::MultiGetRequest proto;
  ASSERT_TRUE(proto.ParseFromString(empty));
  LookupRequest r;
  ASSERT_OK(ParseMultiGetRequest(empty, 10, &r));
  ASSERT_TRUE(r.has_score);
  EXPECT_EQ(r.score.field, "e");
  EXPECT_TRUE(r.score.query.empty());
  const std::string then_one =
      empty + std::string("\x32\x06\x1a\x04\x00\x00\x80\x3f", 8);
  ASSERT_TRUE(proto.ParseFromString(then_one));
  ASSERT_OK(ParseMultiGetRequest(then_one, 10, &r));
  EXPECT_EQ(r.score.query, (std::vector<float>{1.0f}));
  EXPECT_EQ(r.score.query.size(),
            static_cast<size_t>(proto.score().query_size()));
}

TEST(RequestCodecTest, RefusesAQueryOfPartFloatsAndFieldNamesNotUtf8) {
  // score { query: 5 bytes packed }: protobuf refuses it too.
  const std::string part("\x32\x07\x1a\x05\x00\x00\x80\x3f\x00", 9);
  v1::MultiGetRequest proto;
  EXPECT_FALSE(proto.ParseFromString(part));
  LookupRequest r;
  EXPECT_THAT(ParseMultiGetRequest(part, 10, &r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("malformed request")));
  const std::string name("\x2a\x01\xff", 3);  // fields: "\xff"
  EXPECT_THAT(ParseMultiGetRequest(name, 10, &r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("a field name is not valid "
                                            "UTF-8")));
}

}  // namespace
}  // namespace roost::testing
