// ColumnStreamReader: the RecordReader of `--input-format arrow-columns`,
// a stream of Arrow record batches in Arrow's own columnar layout
// (docs/format/column_stream.md) that `roost-build` (clients/python,
// roost.batch) writes from Parquet, Arrow IPC or Feather through a pipe.
//
// The stream's header names the key column, the value columns and how a
// value is made of them: the one value column's bytes, or a JSON object of
// the value columns (loader/column_json.h). Each batch is read whole into
// the input window and checked (loader/column_arrays.h) before its first
// row is returned; rows are then returned one by one as views, the key into
// the batch's bytes (or a reused buffer for integer keys), the value into a
// buffer reused from row to row: no allocation per row.
//
// Errors: all final, none skipped. A malformed stream (bad magic, version,
// type or buffer; a batch whose buffers disagree) is InvalidArgument
// naming the batch's source, the batch and the column; a row that cannot be
// a record (a null key, a string that is not UTF-8, a key or value over the
// limits) is InvalidArgument naming the source's row and the column. A
// stream that ends before its end marker is DataLoss.
//
// Example: as any RecordReader (record_reader.h), with
//   options.format = InputFormat::kArrowColumns;
#ifndef ROOST_LOADER_COLUMN_STREAM_READER_H_
#define ROOST_LOADER_COLUMN_STREAM_READER_H_

#include <memory>

#include "loader/input_stream.h"
#include "loader/record_reader.h"

namespace roost {

// The stream's first eight bytes.
inline constexpr char kColumnStreamMagic[] = "ROOSTCOL";
inline constexpr uint32_t kColumnStreamVersion = 1;

std::unique_ptr<RecordReader> NewColumnStreamReader(
    std::unique_ptr<ByteStream> stream, const RecordReaderOptions& options);

}  // namespace roost

#endif  // ROOST_LOADER_COLUMN_STREAM_READER_H_
