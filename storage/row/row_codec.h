// Rows of a schema in the roost-row-1 encoding (docs/format/rows.md):
// building them (the loader), checking and reading them (clients, the CLI,
// `roost-load verify`), and projecting them onto some of their fields (the
// server, which answers only the fields a request asks for).
//
//   row := [null bitmap] slots variable_area
//
// Every field has a slot at an offset fixed by the schema: a fixed-size
// value, or for a variable field the end of its bytes in the variable area
// (they start where the variable field before it ends). A field is read in
// O(1), and a projection copies slots and byte ranges.
//
// Example:
//   RowBuilder b(&schema);
//   b.SetFloat(0, 12.5);
//   b.SetVariable(1, bytes_of_floats);
//   std::string row;
//   ROOST_RETURN_IF_ERROR(b.Finish(&row));
//   ROOST_RETURN_IF_ERROR(CheckRow(schema, row));
//   RowReader r(&schema, row);
//   double ltv = r.Float(0);
#ifndef ROOST_STORAGE_ROW_ROW_CODEC_H_
#define ROOST_STORAGE_ROW_ROW_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/row/row_schema.h"
#include "util/json.h"

namespace roost {

// Builds rows of one schema, a field at a time in any order; reuses its
// buffers from row to row.
class RowBuilder {
 public:
  explicit RowBuilder(const RowSchema* schema);

  // Forgets the fields set: every field unset.
  void Clear();
  void SetNull(size_t i);
  void SetBool(size_t i, bool value);
  // int32 and int64 fields; an int32 field takes the low 32 bits (the
  // caller checks the range).
  void SetInt(size_t i, int64_t value);
  // float32 and float64 fields.
  void SetFloat(size_t i, double value);
  // A variable field's bytes as the encoding holds them: a string's or
  // bytes' bytes, a list of float32 or int64 as its little-endian values.
  void SetVariable(size_t i, std::string_view bytes);
  // A string_list field, a string at a time: Start, then Add each.
  void StartStringList(size_t i);
  void AddString(size_t i, std::string_view s);

  // Writes the row to `*row` (replacing it). A field left unset takes its
  // default, or null when nullable; otherwise InvalidArgument naming it.
  // A null on a field that is not nullable is refused the same way, as is
  // a variable area of 4 GiB or more.
  absl::Status Finish(std::string* row);

 private:
  enum class State : uint8_t { kUnset, kSet, kNull };
  absl::Status SetDefault(size_t i);

  const RowSchema* schema_;
  std::vector<State> state_;
  std::string fixed_;                   // header_size() bytes
  std::vector<std::string> variable_;   // each variable field's bytes
  std::vector<uint32_t> list_counts_;   // string_list: strings so far
  std::vector<std::string> list_ends_;  // string_list: their u32 ends
};

// Checks that `row` is a well-formed row of `schema`: its size agrees with
// its slots' ends, the ends never go down, only nullable fields are null
// (with zero slots and no bytes), bools are 0 or 1, lists are whole numbers
// of values, string lists are well-formed, strings UTF-8. DataLoss naming
// the field and what is wrong.
absl::Status CheckRow(const RowSchema& schema, std::string_view row);

// Reads the fields of a row CheckRow passed (on one it did not, values are
// wrong but reads stay inside the row).
class RowReader {
 public:
  RowReader(const RowSchema* schema, std::string_view row)
      : schema_(schema), row_(row) {}

  bool IsNull(size_t i) const;
  bool Bool(size_t i) const;
  int64_t Int(size_t i) const;   // int32, int64
  double Float(size_t i) const;  // float32, float64
  // A variable field's bytes, as SetVariable took them (a string_list's
  // whole encoding).
  std::string_view Variable(size_t i) const;
  // A string_list field's strings.
  std::vector<std::string_view> Strings(size_t i) const;

 private:
  const RowSchema* schema_;
  std::string_view row_;
};

// The row as a JSON object of its fields, in schema order: numbers as
// numbers (a float32 as its shortest decimal form), bytes as base64, lists
// as arrays, null fields as null. For a row CheckRow passed.
OrderedJson RowToJson(const RowSchema& schema, std::string_view row);

// A projection of rows of `full` onto `projected`'s fields, which are
// full's fields `indexes` (RowSchema::Project). Size() checks the slots the
// projection reads (DataLoss naming the field when a row is malformed) and
// returns the projected row's size; Write() then writes it at `out` and
// returns its end.
class RowProjection {
 public:
  RowProjection(const RowSchema* full, const RowSchema* projected,
                std::span<const uint32_t> indexes)
      : full_(full), projected_(projected), indexes_(indexes) {}

  absl::StatusOr<size_t> Size(std::string_view row) const;
  char* Write(std::string_view row, char* out) const;

 private:
  const RowSchema* full_;
  const RowSchema* projected_;
  std::span<const uint32_t> indexes_;
};

// Where a variable field's bytes are in a row: [begin, end) from the row's
// start. False when the row is too short for its slots or the range is not
// inside it.
bool VariableRange(const RowSchema& schema, std::string_view row, size_t i,
                   size_t* begin, size_t* end);

}  // namespace roost

#endif  // ROOST_STORAGE_ROW_ROW_CODEC_H_
