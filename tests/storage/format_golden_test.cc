// The worked examples of docs/format/: each is built again, the way the
// doc says, and must be the doc's hexdump byte for byte, so that a change
// to a format's bytes cannot land without its documentation (and the other
// way round).

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "storage/block/block_table_builder.h"
#include "storage/row/row_codec.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"

namespace roost::testing {
namespace {

// Every run of consecutive `xxd` lines ("00000010: 7432 0006 ...  text") in
// the Markdown file `doc`, each as the bytes it shows.
std::vector<std::string> HexdumpsIn(const std::string& doc) {
  std::ifstream in(doc);
  const std::regex line(R"(^([0-9a-f]{8}): ((?:[0-9a-f]{2,4} )+) .*$)");
  std::vector<std::string> dumps;
  std::string current;
  uint64_t expected_offset = 0;
  bool in_run = false;
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (!std::regex_match(text, m, line)) {
      if (in_run) dumps.push_back(current);
      in_run = false;
      continue;
    }
    const uint64_t offset = std::stoull(m[1].str(), nullptr, 16);
    if (!in_run || offset != expected_offset) {
      if (in_run) dumps.push_back(current);
      current.clear();
      in_run = offset == 0;
      if (!in_run) continue;
    }
    std::string hex;
    for (char c : m[2].str()) {
      if (c != ' ') hex.push_back(c);
    }
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
      current.push_back(
          static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    expected_offset = offset + hex.size() / 2;
  }
  if (in_run) dumps.push_back(current);
  return dumps;
}

// The first whole dump of `size` bytes in `doc`.
std::string DumpOfSize(const std::string& doc, size_t size) {
  for (const std::string& d : HexdumpsIn(doc)) {
    if (d.size() == size) return d;
  }
  return "";
}

std::string Doc(const std::string& name) {
  return std::string(ROOST_SOURCE_DIR) + "/docs/format/" + name;
}

// The file at `path` is `size` bytes, as docs/format/`doc_name` says, and
// is that doc's hexdump of `size` bytes, byte for byte.
void ExpectTheDocsDump(const std::string& path, const std::string& doc_name,
                       size_t size) {
  const std::string built = ReadFile(path);
  ASSERT_EQ(built.size(), size) << "the doc says " << size << " bytes";
  const std::string doc = DumpOfSize(Doc(doc_name), built.size());
  ASSERT_EQ(doc.size(), built.size())
      << "no " << size << "-byte hexdump in the doc";
  for (size_t i = 0; i < built.size(); ++i) {
    ASSERT_EQ(static_cast<uint8_t>(built[i]), static_cast<uint8_t>(doc[i]))
        << "byte " << i << " (0x" << std::hex << i << ")";
  }
}

// The four pairs of block_table.md's worked example, built with `options`.
void BuildTheBlockExample(const std::string& path,
                          const BlockBuildOptions& options) {
  auto builder = BlockTableBuilder::Create(path, options);
  ASSERT_OK(builder);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"apple", "1"},
                                                        {"apricot", "2"},
                                                        {"banana", "3"},
                                                        {"cherry", "4"}}) {
    ASSERT_OK((*builder)->Add(key, value));
  }
  ASSERT_OK((*builder)->Finish());
}

TEST(FormatGoldenTest, TheBlockTableIsItsWorkedExample) {
  // As the program in block_table.md ("Building it") builds it.
  ScratchDir dir;
  const std::string path = dir.File("example.sst");
  BlockBuildOptions options;
  options.block_size = 32;
  options.restart_interval = 2;
  options.hash_index = true;
  options.compression = Compression::kNone;
  ASSERT_NO_FATAL_FAILURE(BuildTheBlockExample(path, options));
  ExpectTheDocsDump(path, "block_table.md", 257);
}

TEST(FormatGoldenTest, TheBlockTableWithAFilterIsItsWorkedExample) {
  // As block_table.md's "Format 2.0: the same table with a filter" builds
  // it: the program above with filter_bits_per_key = 10.
  ScratchDir dir;
  const std::string path = dir.File("example2.sst");
  BlockBuildOptions options;
  options.block_size = 32;
  options.restart_interval = 2;
  options.filter_bits_per_key = 10;
  ASSERT_NO_FATAL_FAILURE(BuildTheBlockExample(path, options));
  ExpectTheDocsDump(path, "block_table.md", 380);
  // Told the key count up front, the builder writes the same bytes.
  options.expected_keys = 4;
  const std::string again = dir.File("again.sst");
  ASSERT_NO_FATAL_FAILURE(BuildTheBlockExample(again, options));
  EXPECT_EQ(ReadFile(again), ReadFile(path));
}

TEST(FormatGoldenTest, TheCuckooTableIsItsWorkedExample) {
  // As cuckoo_table.md ("Building it") builds it: roost-load's defaults.
  ScratchDir dir;
  const std::string in = dir.File("example.tsv");
  const std::string path = dir.File("example.cuckoo");
  WriteFile(in, "key00001\tvalue001\nkey00002\tvalue002\nkey00003\tvalue003\n");
  ASSERT_EQ(std::system((std::string(ROOST_LOAD_BINARY) + " build -q -i " + in +
                         " -o " + path)
                            .c_str()),
            0);
  ExpectTheDocsDump(path, "cuckoo_table.md", 385);
}

TEST(FormatGoldenTest, TheRowIsItsWorkedExample) {
  // rows.md's example: its schema (the JSON the doc shows) and its row.
  auto json = ParseJson(R"({"encoding": "roost-row-1", "fields": [
      {"name": "ltv", "type": "float64", "nullable": true},
      {"name": "visits", "type": "int32", "nullable": false},
      {"name": "segments", "type": "string_list", "nullable": false},
      {"name": "embedding", "type": "float32_list", "nullable": false},
      {"name": "active", "type": "bool", "nullable": false},
      {"name": "country", "type": "string", "nullable": true}]})");
  ASSERT_OK(json);
  auto schema = RowSchema::FromJson(*json);
  ASSERT_OK(schema);
  RowBuilder b(&*schema);
  b.SetFloat(0, 12.5);
  b.SetInt(1, 7);
  b.StartStringList(2);
  b.AddString(2, "a");
  b.AddString(2, "bc");
  const float embedding[] = {1.0f, -0.5f};
  b.SetVariable(3, std::string_view(reinterpret_cast<const char*>(embedding),
                                    sizeof(embedding)));
  b.SetBool(4, true);
  b.SetNull(5);
  std::string row;
  ASSERT_OK(b.Finish(&row));
  ScratchDir dir;
  const std::string path = dir.File("row");
  WriteFile(path, row);
  ExpectTheDocsDump(path, "rows.md", 49);
  EXPECT_EQ(DumpJson(RowToJson(*schema, row), false),
            R"({"ltv":12.5,"visits":7,"segments":["a","bc"],)"
            R"("embedding":[1.0,-0.5],"active":true,"country":null})");
}

}  // namespace
}  // namespace roost::testing
