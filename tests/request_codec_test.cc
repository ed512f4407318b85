// The hand-written wire format of Get and MultiGet (server/request_codec.h)
// against protobuf's own: what protobuf writes parses to the same fields,
// what the codec writes parses as the same message, and bytes that are not
// such a message are refused.

#include "server/request_codec.h"

#include <gtest/gtest.h>

#include <random>

#include "roost/v1/lookup.pb.h"
#include "tests/status_matchers.h"
#include "tests/test_util.h"

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

}  // namespace
}  // namespace roost::testing
