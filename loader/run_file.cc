#include "loader/run_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {

bool RunEntryLess(const RunEntry& a, const RunEntry& b) {
  const int c = a.key.compare(b.key);  // bytewise, as unsigned char
  if (c != 0) return c < 0;
  return a.sequence < b.sequence;
}

absl::Status AppendRunRecord(WritableFile* file, std::string_view key,
                             std::string_view value, uint64_t sequence) {
  char header[kMaxRunRecordHeaderSize];
  char* p = EncodeVarint64(header, key.size());
  p = EncodeVarint64(p, value.size());
  EncodeFixed64(p, sequence);
  p += 8;
  ROOST_RETURN_IF_ERROR(file->Append(std::string_view(header, p - header)));
  ROOST_RETURN_IF_ERROR(file->Append(key));
  return file->Append(value);
}

absl::StatusOr<std::unique_ptr<RunReader>> RunReader::Open(
    const std::string& path, size_t buffer_size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        StrCat("cannot open run file ", path, ": ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(
        StrCat("cannot stat run file ", path, ": ", std::strerror(err)));
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<RunReader>(
      new RunReader(path, fd, static_cast<uint64_t>(st.st_size),
                    std::max(buffer_size, kMaxRunRecordHeaderSize)));
}

RunReader::~RunReader() { ::close(fd_); }

absl::StatusOr<bool> RunReader::Next() {
  ROOST_RETURN_IF_ERROR(Fill(kMaxRunRecordHeaderSize));
  if (begin_ == end_) return false;
  const char* const start = buffer_.get() + begin_;
  const char* const limit = buffer_.get() + end_;
  uint64_t key_size, value_size;
  const char* p = DecodeVarint64(start, limit, &key_size);
  if (p == nullptr) return BadVarint(start, limit, "key size");
  const char* q = DecodeVarint64(p, limit, &value_size);
  if (q == nullptr) return BadVarint(p, limit, "value size");
  if (limit - q < 8) return Corrupt("truncated record header");
  const uint64_t sequence = DecodeFixed64(q);
  const size_t header_size = q + 8 - start;
  // The whole record must lie within the file; this also refuses sizes
  // that would make us allocate a huge buffer.
  if (header_size > file_size_ - offset_) {
    return Corrupt("run file changed while reading");
  }
  const uint64_t left_in_file = file_size_ - offset_ - header_size;
  if (key_size > left_in_file || value_size > left_in_file - key_size) {
    return Corrupt(StrCat("record of ", key_size, "+", value_size,
                          " bytes runs past the end of the file"));
  }
  const size_t record_size = header_size + key_size + value_size;
  if (record_size > capacity_) Grow(record_size);
  ROOST_RETURN_IF_ERROR(Fill(record_size));
  if (end_ - begin_ < record_size) return Corrupt("truncated record");
  const char* data = buffer_.get() + begin_ + header_size;
  entry_.key = std::string_view(data, key_size);
  entry_.value = std::string_view(data + key_size, value_size);
  entry_.sequence = sequence;
  begin_ += record_size;
  offset_ += record_size;
  return true;
}

absl::Status RunReader::Fill(size_t need) {
  if (end_ - begin_ >= need || eof_) return absl::OkStatus();
  std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  while (end_ < need) {
    const ssize_t n = ::read(fd_, buffer_.get() + end_, capacity_ - end_);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(
          StrCat("cannot read run file ", path_, ": ", std::strerror(errno)));
    }
    if (n == 0) {
      eof_ = true;
      break;
    }
    end_ += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

void RunReader::Grow(size_t capacity) {
  auto bigger = std::make_unique<char[]>(capacity);
  std::memcpy(bigger.get(), buffer_.get() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  buffer_ = std::move(bigger);
  capacity_ = capacity;
}

absl::Status RunReader::BadVarint(const char* p, const char* limit,
                                  std::string_view field) {
  // Running out of bytes in the middle of a varint is truncation.
  const bool truncated =
      limit - p < kMaxVarint64Length &&
      std::all_of(p, limit, [](char c) { return (c & 0x80) != 0; });
  return Corrupt(StrCat(truncated ? "truncated " : "bad varint for ", field));
}

absl::Status RunReader::Corrupt(std::string_view what) const {
  return absl::DataLossError(
      StrCat("corrupt run file ", path_, " at offset ", offset_, ": ", what));
}

}  // namespace roost
