// row_fuzz: rows of the roost-row-1 encoding (storage/row/row_codec.h) as a
// client and `roost-load verify` meet them, untrusted, and as the server
// projects them.
//
// Input: one byte choosing a schema (of four: every type, nullable or not,
// variable fields only, one fixed field), one byte choosing the fields of a
// projection (a bit each, in reverse order so that the projection reorders
// them; none set: all of them), then the row's bytes.
//
// Checked: CheckRow comes to an answer; a projection's Size() and Write()
// stay inside the row (AddressSanitizer) and agree on the size; and when
// CheckRow passes the row, RowToJson reads it, the projection passes
// CheckRow under the projected schema, and each projected field's JSON is
// the whole row's.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "storage/row/row_codec.h"

namespace roost::fuzz {
namespace {

RowSchema MakeSchema(const char* json) {
  auto parsed = ParseJson(json);
  if (!parsed.ok()) Fail("bad schema JSON: ", parsed.status().ToString());
  auto schema = RowSchema::FromJson(*parsed);
  if (!schema.ok()) Fail("bad schema: ", schema.status().ToString());
  return *schema;
}

const std::vector<RowSchema>& Schemas() {
  static const auto* schemas = new std::vector<RowSchema>{
      MakeSchema(R"({"encoding": "roost-row-1", "fields": [
          {"name": "b", "type": "bool", "nullable": true},
          {"name": "i", "type": "int32", "nullable": false},
          {"name": "l", "type": "int64", "nullable": true},
          {"name": "f", "type": "float32", "nullable": false},
          {"name": "d", "type": "float64", "nullable": true},
          {"name": "s", "type": "string", "nullable": true},
          {"name": "y", "type": "bytes", "nullable": false},
          {"name": "v", "type": "float32_list", "nullable": true},
          {"name": "n", "type": "int64_list", "nullable": false},
          {"name": "t", "type": "string_list", "nullable": true}]})"),
      MakeSchema(R"({"encoding": "roost-row-1", "fields": [
          {"name": "s", "type": "string", "nullable": false},
          {"name": "t", "type": "string_list", "nullable": false},
          {"name": "v", "type": "float32_list", "nullable": false}]})"),
      MakeSchema(R"({"encoding": "roost-row-1", "fields": [
          {"name": "d", "type": "float64", "nullable": false}]})"),
      MakeSchema(R"({"encoding": "roost-row-1", "fields": [
          {"name": "a", "type": "string", "nullable": true},
          {"name": "b", "type": "string", "nullable": true},
          {"name": "c", "type": "int32", "nullable": true},
          {"name": "d", "type": "string_list", "nullable": true},
          {"name": "e", "type": "bytes", "nullable": true},
          {"name": "f", "type": "bool", "nullable": true},
          {"name": "g", "type": "int64", "nullable": true},
          {"name": "h", "type": "float32_list", "nullable": true},
          {"name": "i", "type": "string", "nullable": true}]})"),
  };
  return *schemas;
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  using namespace roost::fuzz;
  if (size < 2) return 0;
  const RowSchema& schema = Schemas()[data[0] % Schemas().size()];
  std::vector<std::string> names;
  for (size_t i = schema.size(); i-- > 0;) {
    if (data[1] >> (i % 8) & 1) names.push_back(schema.field(i).name);
  }
  // No bit set: every field, reversed (a request asks for at least one).
  if (names.empty()) {
    for (size_t i = schema.size(); i-- > 0;) {
      names.push_back(schema.field(i).name);
    }
  }
  // The row in a buffer of exactly its size, so that a read past it is
  // seen.
  const size_t n = size - 2;
  std::unique_ptr<char[]> buffer(new char[n == 0 ? 1 : n]);
  std::memcpy(buffer.get(), data + 2, n);
  const std::string_view row(buffer.get(), n);

  std::vector<uint32_t> indexes;
  absl::StatusOr<RowSchema> projected = schema.Project(names, &indexes);
  if (!projected.ok()) Fail("projection: ", projected.status().ToString());
  const RowProjection projection(&schema, &*projected, indexes);
  absl::StatusOr<size_t> projected_size = projection.Size(row);
  std::string out;
  if (projected_size.ok()) {
    out.resize(*projected_size);
    char* end = projection.Write(row, out.data());
    if (end != out.data() + out.size()) {
      Fail("the projection wrote ", end - out.data(), " bytes of ", out.size());
    }
  }
  const absl::Status checked = CheckRow(schema, row);
  if (!checked.ok()) {
    if (checked.message().empty()) Fail("a refusal without a message");
    return 0;
  }
  if (!projected_size.ok()) {
    Fail("a row CheckRow passes cannot be projected: ",
         projected_size.status().ToString());
  }
  const OrderedJson whole = RowToJson(schema, row);
  if (absl::Status s = CheckRow(*projected, out); !s.ok()) {
    Fail("the projection of a good row is not a row: ", s.ToString());
  }
  const OrderedJson part = RowToJson(*projected, out);
  for (const std::string& name : names) {
    if (part.at(name) != whole.at(name)) {
      Fail("field ", name, " projected is ", part.at(name).dump(),
           ", in the whole row ", whole.at(name).dump());
    }
  }
  return 0;
}
