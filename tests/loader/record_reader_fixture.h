// What the RecordReader suites share: a fixture that writes a file and opens
// a reader on it, ReadAll, which collects everything a reader returns, and
// the length-prefixed encoding. record_reader_test.cc holds the record
// formats' tests, input_stream_test.cc those of where the bytes come from.
#ifndef ROOST_TESTS_LOADER_RECORD_READER_FIXTURE_H_
#define ROOST_TESTS_LOADER_RECORD_READER_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loader/record_reader.h"
#include "storage/coding.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"

namespace roost::testing {

// Bigger than the reader's 1 MiB chunk.
inline constexpr size_t kMoreThanAChunk = (size_t{3} << 20) + 12345;

inline std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

inline std::string LengthPrefixed(const Pairs& pairs) {
  std::string out;
  for (const auto& [key, value] : pairs) {
    PutVarint64(&out, key.size());
    PutVarint64(&out, value.size());
    out += key;
    out += value;
  }
  return out;
}

// Everything a reader returns until the end of its input, a final error, or
// an InvalidArgument error that repeats (the binary formats' sticky one).
struct ReadResult {
  Pairs records;
  std::vector<std::string> errors;  // InvalidArgument messages, in order
  absl::Status end;                 // OK at the end of the input
};

inline ReadResult ReadAll(RecordReader& reader) {
  ReadResult result;
  std::string_view key, value;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&key, &value);
    if (more.ok()) {
      if (!*more) return result;
      result.records.emplace_back(key, value);
      continue;
    }
    if (!absl::IsInvalidArgument(more.status()) ||
        (!result.errors.empty() &&
         result.errors.back() == Message(more.status()))) {
      result.end = more.status();
      return result;
    }
    result.errors.push_back(Message(more.status()));
  }
}

class RecordReaderTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& data) {
    const std::string path = dir_.File(name);
    WriteFile(path, data);
    return path;
  }

  std::unique_ptr<RecordReader> Open(const std::string& path,
                                     const RecordReaderOptions& options = {}) {
    absl::StatusOr<std::unique_ptr<RecordReader>> reader =
        RecordReader::Open(path, options);
    EXPECT_OK(reader) << reader.status();
    return reader.ok() ? std::move(*reader) : nullptr;
  }

  ReadResult ReadFileAs(const std::string& name, const std::string& data,
                        const RecordReaderOptions& options = {}) {
    auto reader = Open(Write(name, data), options);
    if (reader == nullptr) return {};
    return ReadAll(*reader);
  }

  static RecordReaderOptions Fixed(uint32_t key_size, uint32_t value_size) {
    RecordReaderOptions options;
    options.format = InputFormat::kFixed;
    options.key_size = key_size;
    options.value_size = value_size;
    return options;
  }
  static RecordReaderOptions LengthPrefixedOptions() {
    RecordReaderOptions options;
    options.format = InputFormat::kLengthPrefixed;
    return options;
  }

  ScratchDir dir_;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_LOADER_RECORD_READER_FIXTURE_H_
