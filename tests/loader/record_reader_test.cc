// RecordReader's record formats on real files: TSV with every encoding of
// key and value, fixed-size and length-prefixed records, records larger
// than the 1 MiB read chunk, and the exact text and location of every
// malformed-record error. Where the bytes come from (gzip, stdin, opening,
// globs) is input_stream_test.cc's.

#include "loader/record_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "loader/input_hints.h"
#include "storage/coding.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "tests/loader/record_reader_fixture.h"
#include "util/encoding.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

// util/encoding's encoders; base64 optionally without its padding.
std::string Base64Encode(std::string_view bytes, bool pad = true) {
  std::string out = EncodeBase64(bytes);
  while (!pad && !out.empty() && out.back() == '=') out.pop_back();
  return out;
}

std::string Encode(Encoding encoding, std::string_view bytes) {
  switch (encoding) {
    case Encoding::kHex:
      return EncodeHex(bytes);
    case Encoding::kBase64:
      return Base64Encode(bytes);
    case Encoding::kRaw:
      break;
  }
  return std::string(bytes);
}

// --- Names of formats and encodings ----------------------------------------

TEST(ParseTest, FormatsAndEncodings) {
  EXPECT_EQ(*ParseInputFormat("tsv"), InputFormat::kTsv);
  EXPECT_EQ(*ParseInputFormat("fixed"), InputFormat::kFixed);
  EXPECT_EQ(*ParseInputFormat("length-prefixed"), InputFormat::kLengthPrefixed);
  EXPECT_EQ(*ParseInputFormat("csv"), InputFormat::kCsv);
  EXPECT_EQ(*ParseInputFormat("jsonl"), InputFormat::kJsonLines);
  EXPECT_EQ(*ParseInputFormat("arrow-columns"), InputFormat::kArrowColumns);
  for (InputFormat f : {InputFormat::kTsv, InputFormat::kFixed,
                        InputFormat::kLengthPrefixed, InputFormat::kCsv,
                        InputFormat::kJsonLines, InputFormat::kArrowColumns}) {
    EXPECT_EQ(*ParseInputFormat(InputFormatName(f)), f);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(ParseInputFormat("parquet").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseInputFormat("TSV").status()));
  EXPECT_EQ(Message(ParseInputFormat("json").status()),
            "input format must be tsv, csv, jsonl, fixed, length-prefixed or "
            "arrow-columns, not json");

  EXPECT_EQ(*ParseEncoding("raw"), Encoding::kRaw);
  EXPECT_EQ(*ParseEncoding("hex"), Encoding::kHex);
  EXPECT_EQ(*ParseEncoding("base64"), Encoding::kBase64);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseEncoding("").status()));
  EXPECT_EQ(Message(ParseEncoding("b64").status()),
            "encoding must be raw, hex or base64, not b64");
}

// --- TSV -------------------------------------------------------------------

TEST_F(RecordReaderTest, TsvRawSplitsAtTheFirstTab) {
  RecordReaderOptions options;
  options.allow_missing_final_newline = true;  // for "last\tx"
  ReadResult r = ReadFileAs(
      "in.tsv",
      "alpha\t1\nbeta\ttwo\tparts\n\tempty key\nk\t\ncr\tv\r\nlast\tx",
      options);
  EXPECT_OK(r.end) << r.end;
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.records, (Pairs{{"alpha", "1"},
                              {"beta", "two\tparts"},
                              {"", "empty key"},
                              {"k", ""},
                              {"cr", "v\r"},
                              {"last", "x"}}));
}

// Issue 30: a producer killed mid-line leaves a last line without its
// newline, and that half line was read as a record. It is input cut short:
// DataLoss at its line, whatever the line holds and however the bytes
// arrive, and final; allow_missing_final_newline (a file written by hand)
// reads it as before.
TEST_F(RecordReaderTest, TsvLastLineWithoutItsNewlineIsInputCutShort) {
  RecordReaderOptions limits;
  limits.max_key_size = 10;
  limits.max_value_size = 10;
  RecordReaderOptions strip;
  strip.strip_cr = true;
  struct Case {
    std::string text;
    RecordReaderOptions options;
    Pairs before;        // the records before the cut
    Pairs allowed;       // with allow_missing_final_newline, all of them
    size_t bad_allowed;  // and the bad lines then
  };
  const std::vector<Case> cases = {
      {"a\t1\nk:029999\tv29-29",
       {},
       {{"a", "1"}},
       {{"a", "1"}, {"k:029999", "v29-29"}},
       0},
      {"k\tv", {}, {}, {{"k", "v"}}, 0},
      {"a\t1\nno tab", {}, {{"a", "1"}}, {{"a", "1"}}, 1},
      {"a\t1\n" + std::string(100, 'x'), limits, {{"a", "1"}}, {{"a", "1"}}, 1},
      {"a\t1\r\n\r", strip, {{"a", "1"}}, {{"a", "1"}}, 0},
      {"a\t1\n\t", {}, {{"a", "1"}}, {{"a", "1"}, {"", ""}}, 0},
  };
  for (const Case& c : cases) {
    for (size_t buffer : {size_t{1}, size_t{2}, size_t{5}, size_t{1} << 20}) {
      SCOPED_TRACE(StrCat(PrintableKey(c.text), ", window ", buffer));
      RecordReaderOptions options = c.options;
      options.buffer_size = buffer;
      const std::string path = Write("cut.tsv", c.text);
      auto reader = Open(path, options);
      ReadResult r = ReadAll(*reader);
      EXPECT_TRUE(r.records == c.before) << r.records.size();
      EXPECT_TRUE(r.errors.empty()) << r.errors.front();
      EXPECT_TRUE(absl::IsDataLoss(r.end)) << r.end;
      const uint64_t line = c.before.size() + 1;
      EXPECT_EQ(Message(r.end),
                StrCat(path, ":", line,
                       ": no newline at the end of the input: its last line "
                       "may be cut short (a producer stopped mid-line); "
                       "--allow-missing-final-newline reads it as a record"));
      std::string_view key, value;
      EXPECT_EQ(reader->Next(&key, &value).status(), r.end);  // final

      options.allow_missing_final_newline = true;
      r = ReadAll(*Open(path, options));
      EXPECT_OK(r.end) << r.end;
      EXPECT_TRUE(r.records == c.allowed) << r.records.size();
      EXPECT_EQ(r.errors.size(), c.bad_allowed);
    }
  }
}

TEST_F(RecordReaderTest, TsvEmptyFileAndTrailingEmptyLine) {
  EXPECT_TRUE(ReadFileAs("empty.tsv", "").records.empty());
  EXPECT_TRUE(ReadFileAs("newline.tsv", "\n").errors.empty());
  ReadResult r = ReadFileAs("in.tsv", "a\t1\n\n");
  EXPECT_EQ(r.records, (Pairs{{"a", "1"}}));
  EXPECT_TRUE(r.errors.empty());
}

TEST_F(RecordReaderTest, TsvMalformedLinesNameFileAndLineAndReadingGoesOn) {
  const std::string path = Write("in.tsv", "a\t1\n\nno tab\nb\t2\n");
  auto reader = Open(path);
  std::string_view key, value;
  ASSERT_TRUE(*reader->Next(&key, &value));
  EXPECT_EQ(reader->Location(), path + ":1");
  absl::StatusOr<bool> more = reader->Next(&key, &value);
  EXPECT_TRUE(absl::IsInvalidArgument(more.status()));
  EXPECT_EQ(Message(more.status()), path + ":2: no tab between key and value");
  EXPECT_EQ(reader->Location(), path + ":2");
  more = reader->Next(&key, &value);
  EXPECT_EQ(Message(more.status()), path + ":3: no tab between key and value");
  ASSERT_TRUE(*reader->Next(&key, &value));
  EXPECT_EQ(key, "b");
  EXPECT_EQ(value, "2");
  EXPECT_EQ(reader->Location(), path + ":4");
  EXPECT_FALSE(*reader->Next(&key, &value));
  EXPECT_FALSE(*reader->Next(&key, &value));  // and stays at the end
}

class TsvEncodingTest
    : public RecordReaderTest,
      public ::testing::WithParamInterface<std::tuple<Encoding, Encoding>> {};

TEST_P(TsvEncodingTest, RoundTrips) {
  const auto [key_encoding, value_encoding] = GetParam();
  // Raw fields cannot hold the separators; encoded ones hold any byte.
  Pairs pairs = RandomVariablePairs(7, 2000, 0, 40, 0, 200);
  if (key_encoding == Encoding::kRaw || value_encoding == Encoding::kRaw) {
    for (auto& [key, value] : pairs) {
      if (key_encoding == Encoding::kRaw) {
        for (char& c : key) c = (c == '\t' || c == '\n') ? ' ' : c;
      }
      if (value_encoding == Encoding::kRaw) {
        for (char& c : value) c = (c == '\n') ? ' ' : c;
      }
    }
  }
  pairs.emplace_back("", "");
  std::string text;
  for (const auto& [key, value] : pairs) {
    text +=
        Encode(key_encoding, key) + "\t" + Encode(value_encoding, value) + "\n";
  }
  RecordReaderOptions options;
  options.key_encoding = key_encoding;
  options.value_encoding = value_encoding;
  ReadResult r = ReadFileAs("in.tsv", text, options);
  EXPECT_OK(r.end) << r.end;
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_EQ(r.records, pairs);
}

INSTANTIATE_TEST_SUITE_P(
    AllEncodings, TsvEncodingTest,
    ::testing::Combine(
        ::testing::Values(Encoding::kRaw, Encoding::kHex, Encoding::kBase64),
        ::testing::Values(Encoding::kRaw, Encoding::kHex, Encoding::kBase64)));

TEST_F(RecordReaderTest, TsvUnpaddedBase64) {
  RecordReaderOptions options;
  options.key_encoding = Encoding::kBase64;
  options.value_encoding = Encoding::kBase64;
  ReadResult r = ReadFileAs("in.tsv", "Zg\tZm9vYg\nZm8\tZm9vYmE\n", options);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.records, (Pairs{{"f", "foob"}, {"fo", "fooba"}}));
}

TEST_F(RecordReaderTest, TsvBadHexAndBadBase64) {
  RecordReaderOptions options;
  options.key_encoding = Encoding::kHex;
  options.value_encoding = Encoding::kBase64;
  const std::string path =
      Write("in.tsv", "616\tYQ==\n61\tab!c\n6g\tYQ==\n61\tYQ=\n62\tYg==\n");
  auto reader = Open(path, options);
  ReadResult r = ReadAll(*reader);
  EXPECT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"b", "b"}}));
  EXPECT_EQ(r.errors, (std::vector<std::string>{
                          path + ":1: bad hex in key (odd length)",
                          path + ":2: bad base64 in value (character '!' at 2)",
                          path + ":3: bad hex in key (character 'g' at 1)",
                          path + ":4: bad base64 in value (bad padding)"}));
}

TEST_F(RecordReaderTest, TsvLimitsApplyAfterDecoding) {
  RecordReaderOptions options;
  options.key_encoding = Encoding::kHex;
  options.max_key_size = 4;
  options.max_value_size = 3;
  // "61626364" is 8 characters but 4 bytes: within the limit.
  const std::string path =
      Write("in.tsv", "61626364\tabc\n6162636465\tabc\n61\tabcd\n");
  auto reader = Open(path, options);
  ReadResult r = ReadAll(*reader);
  EXPECT_EQ(r.records, (Pairs{{"abcd", "abc"}}));
  EXPECT_EQ(r.errors,
            (std::vector<std::string>{
                path + ":2: key of 5 bytes exceeds the limit of 4",
                path + ":3: value of 4 bytes exceeds the limit of 3"}));
}

TEST_F(RecordReaderTest, TsvLinesLongerThanTheChunk) {
  std::mt19937_64 rng(1);
  const std::string long_value = EncodeHex(RandomBytes(rng, kMoreThanAChunk));
  // Also many short lines, so that lines straddle chunk boundaries.
  Pairs pairs = {{"first", "1"}, {"long", long_value}};
  for (int i = 0; i < 50000; ++i) {
    pairs.emplace_back(StrCat("k", i), EncodeHex(RandomBytes(rng, rng() % 64)));
  }
  pairs.emplace_back("long2", long_value + long_value);
  pairs.emplace_back("last", "no newline");
  std::string text;
  for (const auto& [key, value] : pairs) text += key + "\t" + value + "\n";
  text.pop_back();
  const std::string path = Write("in.tsv", text);
  RecordReaderOptions options;
  options.allow_missing_final_newline = true;
  auto reader = Open(path, options);
  ReadResult r = ReadAll(*reader);
  EXPECT_OK(r.end) << r.end;
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.records.size(), pairs.size());
  EXPECT_TRUE(r.records == pairs);
  EXPECT_EQ(reader->Location(), StrCat(path, ":", pairs.size()));
  EXPECT_EQ(reader->bytes_read(), text.size());
}

TEST_F(RecordReaderTest, TsvLineLongerThanTheLimitsAllowIsSkipped) {
  RecordReaderOptions options;
  options.max_key_size = 10;
  options.max_value_size = 100;  // so no line may exceed 10 + 1 + 100 bytes
  const std::string path =
      Write("in.tsv",
            "a\t1\nhuge\t" + std::string(kMoreThanAChunk, 'x') + "\nb\t2\n");
  auto reader = Open(path, options);
  ReadResult r = ReadAll(*reader);
  EXPECT_EQ(r.records, (Pairs{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(
      r.errors,
      (std::vector<std::string>{
          path + ":2: line longer than the 111 bytes the key and value limits "
                 "allow"}));
}

// Found by fuzz/record_reader_fuzz (fuzz/regressions/record_reader_fuzz/):
// with strip_cr, a line holding a key and a value of the largest sizes the
// limits allow is one byte longer than they allow, its "\r". When such a
// line reached the end of the 1 MiB window without its newline, it was
// skipped as too long.
TEST_F(RecordReaderTest, TsvCrlfLineAtTheLimitsAcrossTheWindowIsARecord) {
  RecordReaderOptions options;
  options.strip_cr = true;
  options.max_key_size = 1;
  options.max_value_size = 1;  // lines of at most 1 + 1 + 1 bytes, and "\r"
  // 4-byte lines up to 1 MiB - 4, then "a\tb\r" ends the first window and
  // its "\n" starts the next.
  std::string text;
  Pairs pairs;
  for (size_t i = 0; i < ((size_t{1} << 20) - 4) / 4; ++i) {
    text += "k\tv\n";
    pairs.emplace_back("k", "v");
  }
  text += "a\tb\r\nc\td\r\n";
  pairs.emplace_back("a", "b");
  pairs.emplace_back("c", "d");
  ReadResult r = ReadFileAs("in.tsv", text, options);
  EXPECT_OK(r.end) << r.end;
  EXPECT_EQ(r.errors, std::vector<std::string>{});
  EXPECT_TRUE(r.records == pairs) << r.records.size() << " records";

  // The same with a window of 2 bytes, the fuzzer's input.
  options.max_key_size = 0;
  options.max_value_size = 0;
  options.buffer_size = 2;
  r = ReadFileAs("small.tsv", "\t\r\n", options);
  EXPECT_OK(r.end) << r.end;
  EXPECT_EQ(r.errors, std::vector<std::string>{});
  EXPECT_TRUE(r.records == (Pairs{{"", ""}}));
}

// --- Input of another format; what a TSV reader notes ------------------------

// Issue 30: a Parquet, CSV or JSON Lines file read as TSV gave "FILE:1: no
// tab between key and value" (or records made of its bytes). It is refused
// at the first Next(), naming what it is, whatever the window, and for
// good; TSV that only resembles one is read.
TEST_F(RecordReaderTest, TsvOfAnotherFormatIsRefusedBeforeAnyRecord) {
  // A CSV file longer than what is looked at.
  std::string csv = "id,name\n";
  while (csv.size() < 2 * kSniffBytes) csv += StrCat(csv.size(), ",x\n");
  const std::vector<std::pair<std::string, std::string>> others = {
      {"csv", csv},
      // A tab in its first line, but a zero byte too.
      {"parquet", std::string("PAR1\x15\x00\t\n", 8) + "k\tv\n"}};
  for (const auto& [name, bytes] : others) {
    for (size_t buffer : {size_t{1}, size_t{7}, size_t{1} << 20}) {
      SCOPED_TRACE(StrCat(name, ", window ", buffer));
      RecordReaderOptions options;
      options.buffer_size = buffer;
      const std::string path = Write(name, bytes);
      auto reader = Open(path, options);
      std::string_view key, value;
      absl::StatusOr<bool> more = reader->Next(&key, &value);
      EXPECT_TRUE(absl::IsFailedPrecondition(more.status())) << more.status();
      EXPECT_EQ(Message(more.status()).rfind(path + ": ", 0), 0u)
          << more.status();
      EXPECT_NE(Message(more.status()).find(", not TSV: roost-load reads TSV"),
                std::string::npos)
          << more.status();
      EXPECT_EQ(reader->Next(&key, &value).status(), more.status());
    }
  }
  // Keys that start like a magic number, on lines with a tab; commas and
  // braces in values; a file of one short line.
  for (const std::string& tsv :
       {std::string("PAR1\tv\nORC\tw\n"), std::string("FEA1x\t{\"a\":1}\n"),
        std::string("a,b\tc,d\n"), std::string("{\"k\":1}\t{}\n"),
        std::string("BZh91AY\tx\n")}) {
    SCOPED_TRACE(PrintableKey(tsv));
    ReadResult r = ReadFileAs("in.tsv", tsv);
    EXPECT_OK(r.end) << r.end;
    EXPECT_TRUE(r.errors.empty()) << r.errors.front();
    EXPECT_EQ(r.records.size(),
              static_cast<size_t>(std::count(tsv.begin(), tsv.end(), '\n')));
  }
}

TEST(InputHintsTest, OtherFormatNamesWhatItSees) {
  struct Case {
    std::string head;
    bool whole;
    std::string says;  // "" for none
  };
  const std::vector<Case> cases = {
      {"PAR1\x15", true, "in: a Parquet file (it starts with PAR1), not TSV"},
      {"PAR1\tvalue\n", true, ""},
      {std::string("ORC\x0a\x05\t\0", 7), false, "in: an ORC file"},
      {"ORC-7\tcolour\n", true, ""},
      {"FEA1", true, "in: a Feather (v1) file"},
      {std::string("ARROW1\0\0", 8), true, "in: an Arrow IPC (Feather) file"},
      {"ARROW1\tk\n", true, ""},
      {"Obj\x01\x04\x14", true,
       "in: an Avro container file (it starts with Avro's magic number)"},
      {std::string("\xfd"
                   "7zXZ\0\0\x04",
                   8),
       true, "in: xz-compressed"},
      {"BZh91AY&SY\x01", true, "in: bzip2-compressed"},
      {"BZh9", true, ""},
      {"a,b\n1,2\n", true,
       "in: CSV (no tab in its first 2 lines, commas in "
       "the first), not TSV"},
      {"a,b", true, "in: CSV (commas but no tab in its first line)"},
      {"a,b", false, ""},  // no whole line yet
      {"a,b\n1\t2\n", true, ""},
      {"{\"a\": 1}\n\n{\"a\": 2}\n", true,
       "in: JSON Lines (every one of its first 2 lines is a JSON object, none "
       "holds a tab)"},
      {" {\"id\":1} \r\n", true,
       "in: JSON Lines (its first line is a JSON object, without a tab)"},
      {"{\"a\": 1}\n[1]\n", true, ""},  // not every line an object
      {"no tab\nat all\n", true, ""},
      {"", true, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(PrintableKey(c.head));
    const std::optional<std::string> got = OtherFormat(c.head, c.whole, "in");
    if (c.says.empty()) {
      EXPECT_EQ(got, std::nullopt);
    } else {
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(got->rfind(c.says, 0), 0u) << *got;
    }
  }
  // CSV and JSON Lines name the --input-format that reads them (and the
  // key column or field when the header or first object gives it), the
  // input quoted for the shell where it must be.
  const std::string spaced = *OtherFormat("user id,x\n", true, "my file.csv");
  EXPECT_NE(spaced.find("Read it as CSV: roost-load build -i 'my file.csv' "
                        "--input-format csv ..."),
            std::string::npos)
      << spaced;
  const std::string csv = *OtherFormat("user_id,x\n", true, "it's.csv");
  EXPECT_NE(csv.find("roost-load build -i 'it'\\''s.csv' --input-format csv "
                     "--key-column user_id ..."),
            std::string::npos)
      << csv;
  const std::string jsonl = *OtherFormat("{\"id\": 1}\n", true, "<stdin>");
  EXPECT_NE(jsonl.find("Read it as JSON Lines: roost-load build -i - "
                       "--input-format jsonl --key-field id ..."),
            std::string::npos)
      << jsonl;
  // Parquet and Arrow name roost-build; zstd is no other format now (the
  // reader decompresses it), and neither is its magic read as TSV.
  const std::string parquet = *OtherFormat("PAR1\x15", true, "t.parquet");
  EXPECT_NE(parquet.find("roost-build, from the Python package: pip install "
                         "'./clients/python[batch]', then roost-build -i "
                         "t.parquet ..."),
            std::string::npos)
      << parquet;
  EXPECT_EQ(OtherFormat(std::string("\x28\xb5\x2f\xfd", 4), true, "x"),
            std::nullopt);
  EXPECT_EQ(ColumnarFormat("PAR1,a,b", "x"), std::nullopt);
  EXPECT_EQ(ColumnarFormat("PAR1\tx", "x"), std::nullopt);
  EXPECT_NE(ColumnarFormat("PAR1", "x"), std::nullopt);
  EXPECT_NE(ColumnarFormat(std::string("ARROW1\0\0", 8), "x"), std::nullopt);
  EXPECT_EQ(ColumnarFormat("ARROW1\tk", "x"), std::nullopt);
}

TEST(InputHintsTest, IsCsvQuoted) {
  for (const std::string quoted :
       {"\"{\"\"id\"\":0}\"", "\"\"\"\"", "\"a\"\"b\"", "\"a\"\"\""}) {
    EXPECT_TRUE(IsCsvQuoted(quoted)) << quoted;
  }
  for (const std::string plain :
       {"", "\"", "\"\"", "\"hello\"", "\"say \\\"hi\\\"\"", "\"a\"\"",
        "\"a\"b\"", "{\"\"id\"\":0}", "\"a\"\"b", "a\"\"b\""}) {
    EXPECT_FALSE(IsCsvQuoted(plain)) << plain;
  }
}

// What a TSV reader notes for the build's warnings: the first empty key,
// and whether the values after line 1 are CSV-quoted (at least
// kCsvQuotedMin of them, all of the first kCsvQuotedSample).
TEST_F(RecordReaderTest, TsvNotesEmptyKeysAndCsvQuotedValues) {
  std::string text = "\tvalue\n";
  for (int i = 0; i < 30; ++i)
    text += StrCat(i, "\t\"{\"\"id\"\":", i, "}\"\n");
  text += "last\tplain\n";  // after the sample: does not count
  auto reader = Open(Write("in.tsv", text));
  ReadResult r = ReadAll(*reader);
  EXPECT_OK(r.end);
  EXPECT_EQ(reader->first_empty_key_line(), 1u);
  RecordReader::CsvQuoting q = reader->csv_quoting();
  EXPECT_EQ(q.values, RecordReader::kCsvQuotedSample);
  EXPECT_EQ(q.first_line, 2u);
  EXPECT_EQ(q.first_value, "\"{\"\"id\"\":0}\"");

  // Two quoted values are too few; one plain value among them breaks it;
  // hex values are never looked at; nor is a key of "" after decoding
  // missed.
  reader = Open(Write("two.tsv", "h\tv\na\t\"x\"\"\"\nb\t\"y\"\"\"\n"));
  ReadAll(*reader);
  EXPECT_EQ(reader->csv_quoting().values, 0u);
  EXPECT_EQ(reader->first_empty_key_line(), 0u);
  std::string mixed = "h\tv\n";
  for (int i = 0; i < 10; ++i)
    mixed += StrCat(i, i == 5 ? "\tplain\n" : "\t\"\"\"\"\n");
  reader = Open(Write("mixed.tsv", mixed));
  ReadAll(*reader);
  EXPECT_EQ(reader->csv_quoting().values, 0u);
  RecordReaderOptions hex;
  hex.key_encoding = Encoding::kHex;
  hex.value_encoding = Encoding::kHex;
  std::string encoded = "6b\t76\n";
  for (int i = 0; i < 10; ++i)
    encoded += StrCat("\t", EncodeHex("\"\"\"\""), "\n");
  reader = Open(Write("hex.tsv", encoded), hex);
  ReadAll(*reader);
  EXPECT_EQ(reader->csv_quoting().values, 0u);
  EXPECT_EQ(reader->first_empty_key_line(), 2u);
}

// --- Fixed-size records ------------------------------------------------------

TEST_F(RecordReaderTest, FixedRoundTrips) {
  const Pairs pairs = RandomFixedPairs(3, 100000, 8, 13);  // 2.1 MB
  std::string data;
  for (const auto& [key, value] : pairs) data += key + value;
  const std::string path = Write("in.bin", data);
  auto reader = Open(path, Fixed(8, 13));
  ReadResult r = ReadAll(*reader);
  EXPECT_OK(r.end) << r.end;
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.records == pairs);
  EXPECT_EQ(reader->Location(), StrCat(path, "@", 21 * 99999));
  EXPECT_EQ(reader->bytes_read(), data.size());
}

TEST_F(RecordReaderTest, FixedSizes) {
  EXPECT_TRUE(ReadFileAs("empty.bin", "", Fixed(4, 4)).records.empty());
  // Empty keys are allowed when values are not.
  EXPECT_EQ(ReadFileAs("values.bin", "abcdef", Fixed(0, 3)).records,
            (Pairs{{"", "abc"}, {"", "def"}}));
  EXPECT_EQ(ReadFileAs("keys.bin", "abcdef", Fixed(2, 0)).records,
            (Pairs{{"ab", ""}, {"cd", ""}, {"ef", ""}}));
  absl::StatusOr<std::unique_ptr<RecordReader>> none =
      RecordReader::Open(Write("x.bin", "abc"), Fixed(0, 0));
  EXPECT_TRUE(absl::IsInvalidArgument(none.status())) << none.status();
}

TEST_F(RecordReaderTest, FixedRecordsLargerThanTheChunk) {
  std::mt19937_64 rng(5);
  Pairs pairs;
  std::string data;
  for (int i = 0; i < 3; ++i) {
    pairs.emplace_back(RandomBytes(rng, 5), RandomBytes(rng, kMoreThanAChunk));
    data += pairs.back().first + pairs.back().second;
  }
  ReadResult r = ReadFileAs("in.bin", data, Fixed(5, kMoreThanAChunk));
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.records == pairs);
}

TEST_F(RecordReaderTest, FixedTruncatedRecordIsReportedAgainAndAgain) {
  const std::string path = Write("in.bin", "aaaa1111bbbb2222ccc");
  auto reader = Open(path, Fixed(4, 4));
  std::string_view key, value;
  ASSERT_TRUE(*reader->Next(&key, &value));
  ASSERT_TRUE(*reader->Next(&key, &value));
  EXPECT_EQ(key, "bbbb");
  EXPECT_EQ(value, "2222");
  EXPECT_EQ(reader->Location(), path + "@8");
  // Cut short, not malformed: DataLoss, which no --max-bad-records skips.
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<bool> more = reader->Next(&key, &value);
    EXPECT_TRUE(absl::IsDataLoss(more.status())) << more.status();
    EXPECT_EQ(Message(more.status()),
              path + "@16: truncated record (3 of 8 bytes)");
  }
}

TEST_F(RecordReaderTest, FixedKeyOverTheLimit) {
  RecordReaderOptions options = Fixed(100, 1);
  options.max_key_size = 64;
  const std::string path = Write("in.bin", std::string(101, 'k'));
  ReadResult r = ReadAll(*Open(path, options));
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(r.errors,
            (std::vector<std::string>{
                path + "@0: key of 100 bytes exceeds the limit of 64"}));
}

// --- Length-prefixed records
// --------------------------------------------------

TEST_F(RecordReaderTest, LengthPrefixedRoundTrips) {
  std::mt19937_64 rng(9);
  Pairs pairs = RandomVariablePairs(11, 50000, 1, 50, 0, 100);
  pairs.insert(pairs.begin() + 100, {"", ""});
  pairs.insert(pairs.begin() + 200, {"big", RandomBytes(rng, kMoreThanAChunk)});
  const std::string data = LengthPrefixed(pairs);
  const std::string path = Write("in.lp", data);
  auto reader = Open(path, LengthPrefixedOptions());
  ReadResult r = ReadAll(*reader);
  EXPECT_OK(r.end) << r.end;
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.records == pairs);
  const Pairs last = {pairs.back()};
  EXPECT_EQ(reader->Location(),
            StrCat(path, "@", data.size() - LengthPrefixed(last).size()));
}

TEST_F(RecordReaderTest, LengthPrefixedTruncatedRecord) {
  const std::string good = LengthPrefixed({{"key", "value"}});  // 10 bytes
  // A key of 3 and a value of 10 bytes, of which 5 are there.
  const std::string path = Write("in.lp", good + "\x03\x0a" + "abcde");
  auto reader = Open(path, LengthPrefixedOptions());
  ReadResult r = ReadAll(*reader);
  EXPECT_EQ(r.records, (Pairs{{"key", "value"}}));
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(absl::IsDataLoss(r.end)) << r.end;  // cut short
  EXPECT_EQ(Message(r.end), path + "@10: truncated record (7 of 15 bytes)");
}

TEST_F(RecordReaderTest, LengthPrefixedTruncatedVarint) {
  for (const std::string& tail : {std::string("\x83"), std::string("\x03"),
                                  std::string("\x03\xff\xff")}) {
    const std::string path =
        Write("in.lp", LengthPrefixed({{"k", "v"}}) + tail);
    ReadResult r = ReadAll(*Open(path, LengthPrefixedOptions()));
    EXPECT_EQ(r.records.size(), 1u);
    EXPECT_TRUE(absl::IsDataLoss(r.end)) << r.end;
    EXPECT_EQ(Message(r.end), path + "@4: truncated record");
  }
}

TEST_F(RecordReaderTest, LengthPrefixedOverlongVarint) {
  // Eleven bytes with the continuation bit, and ten where the tenth holds
  // more than the 64th bit.
  for (const std::string& prefix :
       {std::string(11, '\x80') + "\x01\x01kv",
        std::string(9, '\xff') + "\x02" + "\x01kv"}) {
    const std::string path = Write("in.lp", prefix);
    ReadResult r = ReadAll(*Open(path, LengthPrefixedOptions()));
    EXPECT_TRUE(r.records.empty());
    EXPECT_EQ(r.errors,
              (std::vector<std::string>{path + "@0: bad varint length"}));
  }
}

TEST_F(RecordReaderTest, LengthPrefixedHugeLengthsAreRejectedBeforeReading) {
  constexpr uint64_t kHuge = uint64_t{1} << 40;
  std::string key_data, value_data;
  PutVarint64(&key_data, kHuge);
  PutVarint64(&key_data, 1);
  key_data += "kv";
  PutVarint64(&value_data, 1);
  PutVarint64(&value_data, kHuge);
  value_data += "kv";
  const std::string key_path = Write("key.lp", key_data);
  ReadResult r = ReadAll(*Open(key_path, LengthPrefixedOptions()));
  EXPECT_EQ(r.errors,
            (std::vector<std::string>{
                key_path + "@0: key of 1099511627776 bytes exceeds the limit "
                           "of 65536"}));
  const std::string value_path = Write("value.lp", value_data);
  r = ReadAll(*Open(value_path, LengthPrefixedOptions()));
  EXPECT_EQ(r.errors,
            (std::vector<std::string>{
                value_path + "@0: value of 1099511627776 bytes exceeds the "
                             "limit of 1073741824"}));
  // With no limit, a huge length reads what is there, not what it claims.
  RecordReaderOptions unlimited = LengthPrefixedOptions();
  unlimited.max_value_size = ~uint64_t{0};
  r = ReadAll(*Open(value_path, unlimited));
  EXPECT_EQ(Message(r.end),
            value_path + "@0: truncated record (9 of 1099511627784 bytes)");
  std::string max_data = "\x01";
  PutVarint64(&max_data, ~uint64_t{0});
  const std::string max_path = Write("max.lp", max_data + "kv");
  r = ReadAll(*Open(max_path, unlimited));
  EXPECT_EQ(
      Message(r.end),
      max_path + "@0: truncated record (13 of 18446744073709551615 bytes)");
}

}  // namespace
}  // namespace roost::testing
