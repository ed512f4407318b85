// TsvReader: reads `key<TAB>value` lines from a file or stdin.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto reader, TsvReader::Open("in.tsv"));
//   std::string_view key, value;
//   while (true) {
//     ROOST_ASSIGN_OR_RETURN(bool more, reader->Next(&key, &value));
//     if (!more) break;
//     ...
//   }
//
// Every line must hold a tab; the key is what precedes the first tab, the
// value everything after it, taken as raw bytes (so a value may contain
// tabs, and a "\r" before the newline stays part of the value). A line
// without a tab is an InvalidArgument error naming the file and line.
#ifndef ROOST_LOADER_TSV_READER_H_
#define ROOST_LOADER_TSV_READER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace roost {

class TsvReader {
 public:
  // Opens `path`, or stdin for "-".
  static absl::StatusOr<std::unique_ptr<TsvReader>> Open(
      const std::string& path);
  ~TsvReader();
  TsvReader(const TsvReader&) = delete;
  TsvReader& operator=(const TsvReader&) = delete;

  // Reads the next pair. Returns false at the end of the input. The views
  // stay valid until the next call.
  absl::StatusOr<bool> Next(std::string_view* key, std::string_view* value);

  // The line the last pair came from, counting from 1.
  uint64_t line() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  TsvReader(std::string path, FILE* file)
      : path_(std::move(path)), file_(file) {}

  std::string path_;
  FILE* file_;
  char* buffer_ = nullptr;
  size_t capacity_ = 0;
  uint64_t line_ = 0;
};

}  // namespace roost

#endif  // ROOST_LOADER_TSV_READER_H_
