// Rows of typed column values: how an arrow-columns stream's rows become
// roost-row-1 rows (docs/format/rows.md) with `roost-load build --rows`,
// instead of JSON objects (column_json.h).
//
// Each value column is a field of the row's schema, under its name, in the
// stream's order, nullable (an Arrow column may hold nulls). Types:
//
//   bool                                    bool
//   int8, int16, int32, uint8, uint16       int32
//   int64, uint32, uint64, timestamp        int64 (a timestamp in its unit;
//                                           a uint64 past INT64_MAX refused)
//   float32 / float64                       float32 / float64
//   string, large_string                    string (UTF-8 checked)
//   binary, large_binary, fixed_size_binary bytes
//   list, large_list, fixed_size_list of:
//     float32                               float32_list
//     int8 ... uint64                       int64_list
//     string, large_string                  string_list
//
// Any other type (dates, times, durations, decimals, structs, maps, lists
// of anything else, the null type) has no row type and is refused naming
// the column, before any row is read. A null list is a null field; a null
// element inside a list has no form in a row and is refused.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(RowSchema schema,
//                          RowSchemaOfColumns(names, types));
//   RowBuilder b(&schema);
//   for (size_t f = 0; f < schema.size(); ++f)
//     ROOST_RETURN_IF_ERROR(SetRowField(arrays[f], row, f, &b, &scratch));
//   ROOST_RETURN_IF_ERROR(b.Finish(&value));
#ifndef ROOST_LOADER_COLUMN_ROWS_H_
#define ROOST_LOADER_COLUMN_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loader/column_arrays.h"
#include "storage/row/row_codec.h"
#include "storage/row/row_schema.h"

namespace roost {

// The row type a column of `type` becomes, if it has one.
std::optional<FieldType> RowTypeOfColumn(const ColumnType& type);

// The schema of rows of the columns `names` of `types` (the value columns,
// in order): one nullable field each. InvalidArgument naming the first
// column whose type has no row type, and the types that do.
absl::StatusOr<RowSchema> RowSchemaOfColumns(
    const std::vector<std::string>& names,
    const std::vector<ColumnType>& types);

// Sets field `field` of `builder` to value `i` of `array` (REQUIRES: the
// array's type is the field's column type, ReadArray() accepted it, and
// i < its length). `scratch` is reused for a list's bytes. InvalidArgument
// saying what is wrong (a uint64 past INT64_MAX, a string that is not
// UTF-8, a null element of a list), without the row or column: the caller
// names them.
absl::Status SetRowField(const ArrayView& array, uint64_t i, size_t field,
                         RowBuilder* builder, std::string* scratch);

}  // namespace roost

#endif  // ROOST_LOADER_COLUMN_ROWS_H_
