// column_stream_fuzz: roost-load's arrow-columns reader
// (loader/column_stream_reader.h), the stream roost-build writes.
//
// Input: one byte of options, then the stream's bytes.
//   bits 0-2  buffer_size: 1, 2, 3, 7, 64, 4096 bytes, 1 MiB or 1 MiB
//   bits 3-4  max_value_size: 64, 256, 4096 or 65536 bytes (small: a value
//             of a few stream bytes can be a list of millions of nulls)
//   bit  5    max_key_size 16 (else the default)
//
// The reader is run to its end, and every outcome checked: it comes to an
// end; every error is final (repeats) and says where; every key and value
// is within the limits and readable whole (AddressSanitizer sees a view
// past a buffer); and it gives exactly the same records and final error
// with a 1 MiB window as with the input's small one, so that no outcome
// depends on where reads of a pipe happen to end.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "loader/record_reader.h"

namespace roost::fuzz {
namespace {

struct Outcome {
  std::vector<std::pair<std::string, std::string>> records;
  std::string end;  // "" at the end of the input, else the final error
};

// With `cap`, reading stops quietly after that many calls.
Outcome ReadAll(const std::string& path, const RecordReaderOptions& options,
                size_t input_size, size_t cap = 0) {
  auto reader = RecordReader::Open(path, options);
  if (!reader.ok()) Fail("cannot open the input: ", reader.status().ToString());
  Outcome out;
  std::string_view key, value;
  for (size_t calls = 0;; ++calls) {
    if (cap != 0 && calls == cap) return out;
    // Every row costs a byte of its key's buffers at least.
    if (cap == 0 && calls > input_size + 1) {
      Fail("the reader does not come to an end");
    }
    absl::StatusOr<bool> more = (*reader)->Next(&key, &value);
    if (!more.ok()) {
      out.end = more.status().ToString();
      if (more.status().message().empty()) Fail("an error without a message");
      absl::StatusOr<bool> again = (*reader)->Next(&key, &value);
      if (again.ok() || again.status() != more.status()) {
        Fail("an error does not repeat: ", out.end);
      }
      return out;
    }
    if (!*more) {
      absl::StatusOr<bool> again = (*reader)->Next(&key, &value);
      if (!again.ok() || *again) Fail("the reader goes on after the end");
      return out;
    }
    if (key.size() > options.max_key_size ||
        value.size() > options.max_value_size) {
      Fail("a record over the limits: ", key.size(), "-byte key, ",
           value.size(), "-byte value");
    }
    Touch(key);
    Touch(value);
    out.records.emplace_back(key, value);
  }
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  using namespace roost::fuzz;
  if (size < 1) return 0;
  constexpr size_t kBuffers[] = {1, 2, 3, 7, 64, 4096, 1 << 20, 1 << 20};
  constexpr uint64_t kMaxValues[] = {64, 256, 4096, 65536};
  RecordReaderOptions options;
  options.format = InputFormat::kArrowColumns;
  options.buffer_size = kBuffers[data[0] & 7];
  options.max_value_size = kMaxValues[(data[0] >> 3) & 3];
  if (data[0] & 32) options.max_key_size = 16;
  const std::string path = ScratchPath("in.cols");
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1,
                                size - 1);
  WriteFileOrDie(path, stream);
  const std::string_view head = stream.substr(0, 4);
  if (head.substr(0, 2) == "\x1f\x8b" || head == "\x28\xb5\x2f\xfd") {
    // Bytes the reader takes for gzip or zstd, made by the fuzzer: no
    // stream could be compared with, and which error a reader meets first
    // in corrupt compressed data depends on how far it reads ahead (as in
    // record_reader_fuzz). Read to the end or a cap, within the limits.
    ReadAll(path, options, stream.size(), 100000);
    return 0;
  }
  const Outcome small = ReadAll(path, options, stream.size());
  if (options.buffer_size != (1 << 20)) {
    options.buffer_size = 1 << 20;
    const Outcome big = ReadAll(path, options, stream.size());
    if (big.records != small.records || big.end != small.end) {
      Fail("a window of ", kBuffers[data[0] & 7], " bytes gives ",
           small.records.size(), " records and \"", small.end,
           "\"; one of 1 MiB gives ", big.records.size(), " and \"", big.end,
           "\"");
    }
  }
  return 0;
}
