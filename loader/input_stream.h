// How RecordReader gets its bytes, bottom up:
//
//   FileSource   read(2) on the file or stdin; counts bytes_read().
//   ByteStream   on its first read, peeks at four bytes to decide between
//                passing the file through, gunzipping it and decompressing
//                zstd (by buffering, not seeking, so that it works on a
//                pipe).
//   InputBuffer  a window on the stream, read buffer_size bytes (1 MiB by
//                default) at a time, that a reader asks to hold the next N
//                bytes; records that lie in the window are returned as views
//                into it, and it grows only for a record larger than itself,
//                and only as fast as bytes actually arrive, so a corrupt
//                length cannot make it allocate more than twice what the
//                input holds.
#ifndef ROOST_LOADER_INPUT_STREAM_H_
#define ROOST_LOADER_INPUT_STREAM_H_

#include <zlib.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost {

// A file descriptor read front to back.
class FileSource {
 public:
  // Takes `fd`, closing it at the end unless it is stdin.
  FileSource(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
  ~FileSource();
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  // Reads up to `n` bytes into `dst`; 0 at the end of the file.
  absl::StatusOr<size_t> Read(char* dst, size_t n);

  const std::string& name() const { return name_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  const std::string name_;
  const int fd_;
  uint64_t bytes_read_ = 0;
};

// The bytes of the input: the file as it is, gunzipped if it starts with
// the gzip magic bytes (1F 8B), or zstd-decompressed if it starts with
// zstd's (28 B5 2F FD). A gzip file may hold several members back to back
// (as `cat a.gz b.gz` makes), a zstd file several frames (and skippable
// frames); their contents are concatenated. Anything after a member that
// is not another member is corruption, and so is a zstd file that ends
// inside a frame: DataLoss, as for a cut gzip member.
//
// Not movable: zlib keeps a pointer to z_.
class ByteStream {
 public:
  // Reads the file `chunk_size` bytes at a time when it is compressed.
  ByteStream(std::unique_ptr<FileSource> file, size_t chunk_size)
      : file_(std::move(file)), chunk_size_(chunk_size) {}
  ~ByteStream();
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  // Reads up to `n` bytes into `dst`; 0 only at the end of the input.
  absl::StatusOr<size_t> Read(char* dst, size_t n);

  const std::string& name() const { return file_->name(); }
  uint64_t bytes_read() const { return file_->bytes_read(); }

 private:
  enum class Mode { kUnknown, kPlain, kGzip, kZstd };

  // Reads the first four bytes (fewer if the file is shorter) and picks the
  // mode.
  absl::Status Start();

  // Refills the compressed input when zlib has used it all up. Sets
  // file_eof_ at the end of the file.
  absl::Status Refill();

  absl::StatusOr<size_t> Inflate(char* dst, size_t n);
  absl::StatusOr<size_t> Unzstd(char* dst, size_t n);

  std::unique_ptr<FileSource> file_;
  const size_t chunk_size_;
  Mode mode_ = Mode::kUnknown;
  // The bytes Start() read, handed out first in plain mode.
  char peek_[4];
  size_t peek_size_ = 0;
  size_t peeked_ = 0;
  // Gzip mode: compressed input, and the inflater.
  std::unique_ptr<char[]> in_;
  z_stream z_{};
  bool file_eof_ = false;
  bool member_done_ = false;
  // Zstd mode: the decompressor, where it is in in_, and whether the last
  // frame it worked on is complete.
  ZSTD_DStream* zstd_ = nullptr;
  ZSTD_inBuffer zin_{};
  bool frame_done_ = true;
};

// A window on a ByteStream. The reader looks at data()[0, available()),
// asks Fill(n) for more, and Skip()s what it has used.
class InputBuffer {
 public:
  // Starts as a window of `capacity` bytes. REQUIRES: capacity > 0.
  InputBuffer(std::unique_ptr<ByteStream> stream, size_t capacity)
      : stream_(std::move(stream)),
        buffer_(std::make_unique_for_overwrite<char[]>(capacity)),
        capacity_(capacity) {}

  // Makes at least `n` bytes available unless the input ends first, and
  // returns how many are. Invalidates data(). Inline when they are there
  // already: readers call it for every record.
  absl::StatusOr<size_t> Fill(size_t n) {
    if (end_ - pos_ >= n) return end_ - pos_;
    return Refill(n);
  }

  const char* data() const { return buffer_.get() + pos_; }
  size_t available() const { return end_ - pos_; }
  // True when everything the input holds is in the window.
  bool eof() const { return eof_; }
  // REQUIRES: n <= available().
  void Skip(size_t n) { pos_ += n; }
  // The offset of data() in the (decompressed) stream.
  uint64_t offset() const { return offset_ + pos_; }

  const std::string& name() const { return stream_->name(); }
  uint64_t bytes_read() const { return stream_->bytes_read(); }

 private:
  // Fill(n) when fewer than n bytes are in the window: reads more.
  absl::StatusOr<size_t> Refill(size_t n);

  std::unique_ptr<ByteStream> stream_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_;
  size_t pos_ = 0;       // start of the unread bytes
  size_t end_ = 0;       // end of the bytes read
  uint64_t offset_ = 0;  // stream offset of buffer_[0]
  bool eof_ = false;
};

}  // namespace roost

#endif  // ROOST_LOADER_INPUT_STREAM_H_
