#include "loader/input_stream.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string_view>

#include "util/str_cat.h"

namespace roost {
namespace {

absl::Status ReadError(const std::string& name, int err) {
  return absl::DataLossError(
      StrCat("cannot read ", name, ": ", std::strerror(err)));
}

}  // namespace

FileSource::~FileSource() {
  if (fd_ != STDIN_FILENO) close(fd_);
}

absl::StatusOr<size_t> FileSource::Read(char* dst, size_t n) {
  while (true) {
    const ssize_t got = read(fd_, dst, n);
    if (got >= 0) {
      bytes_read_ += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    }
    if (errno != EINTR) return ReadError(name_, errno);
  }
}

ByteStream::~ByteStream() {
  if (mode_ == Mode::kGzip) inflateEnd(&z_);
  ZSTD_freeDStream(zstd_);  // null-safe
}

absl::StatusOr<size_t> ByteStream::Read(char* dst, size_t n) {
  if (mode_ == Mode::kUnknown) {
    absl::Status started = Start();
    if (!started.ok()) return started;
  }
  if (mode_ == Mode::kGzip) return Inflate(dst, n);
  if (mode_ == Mode::kZstd) return Unzstd(dst, n);
  const size_t copied = std::min(n, peek_size_ - peeked_);
  std::memcpy(dst, peek_ + peeked_, copied);
  peeked_ += copied;
  if (copied == n) return copied;
  absl::StatusOr<size_t> got = file_->Read(dst + copied, n - copied);
  if (!got.ok()) return got.status();
  return copied + *got;
}

absl::Status ByteStream::Start() {
  while (peek_size_ < sizeof(peek_)) {
    absl::StatusOr<size_t> got =
        file_->Read(peek_ + peek_size_, sizeof(peek_) - peek_size_);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    peek_size_ += *got;
  }
  const std::string_view head(peek_, peek_size_);
  const bool gzip = head.substr(0, 2) == "\x1f\x8b";
  const bool zstd = head == "\x28\xb5\x2f\xfd";
  if (!gzip && !zstd) {
    mode_ = Mode::kPlain;
    return absl::OkStatus();
  }
  in_ = std::make_unique_for_overwrite<char[]>(
      std::max(chunk_size_, sizeof(peek_)));
  std::memcpy(in_.get(), peek_, peek_size_);
  if (zstd) {
    zstd_ = ZSTD_createDStream();
    if (zstd_ == nullptr) {
      return absl::ResourceExhaustedError(
          StrCat("cannot start decompressing ", name(), " (zstd)"));
    }
    zin_ = {in_.get(), peek_size_, 0};
    mode_ = Mode::kZstd;
    return absl::OkStatus();
  }
  z_.next_in = reinterpret_cast<Bytef*>(in_.get());
  z_.avail_in = static_cast<uInt>(peek_size_);
  // 16 + MAX_WBITS: a gzip wrapper, not zlib or raw deflate.
  const int rc = inflateInit2(&z_, 16 + MAX_WBITS);
  if (rc != Z_OK) {
    return absl::ResourceExhaustedError(
        StrCat("cannot start gunzipping ", name(), ": ", zError(rc)));
  }
  mode_ = Mode::kGzip;
  return absl::OkStatus();
}

absl::Status ByteStream::Refill() {
  if (z_.avail_in > 0 || file_eof_) return absl::OkStatus();
  absl::StatusOr<size_t> got = file_->Read(in_.get(), chunk_size_);
  if (!got.ok()) return got.status();
  if (*got == 0) file_eof_ = true;
  z_.next_in = reinterpret_cast<Bytef*>(in_.get());
  z_.avail_in = static_cast<uInt>(*got);
  return absl::OkStatus();
}

absl::StatusOr<size_t> ByteStream::Inflate(char* dst, size_t n) {
  z_.next_out = reinterpret_cast<Bytef*>(dst);
  z_.avail_out = static_cast<uInt>(std::min<size_t>(n, UINT_MAX));
  const uInt want = z_.avail_out;
  while (z_.avail_out > 0) {
    absl::Status refilled = Refill();
    if (!refilled.ok()) return refilled;
    if (member_done_) {
      if (z_.avail_in == 0) break;  // the end of the last member
      inflateReset(&z_);            // another member follows
      member_done_ = false;
    }
    if (z_.avail_in == 0) {
      return absl::DataLossError(
          StrCat(name(), ": gzip data ends in the middle of a member"));
    }
    const int rc = inflate(&z_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      member_done_ = true;
    } else if (rc == Z_MEM_ERROR) {
      return absl::ResourceExhaustedError(
          StrCat("out of memory gunzipping ", name()));
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      // Z_DATA_ERROR (bad header, bad deflate data, CRC or length
      // mismatch) or Z_NEED_DICT, which gzip never uses.
      return absl::DataLossError(StrCat(name(), ": corrupt gzip data (",
                                        z_.msg != nullptr ? z_.msg : zError(rc),
                                        ")"));
    }
    // Z_BUF_ERROR: no progress without more input; Refill gets it.
  }
  return static_cast<size_t>(want - z_.avail_out);
}

absl::StatusOr<size_t> ByteStream::Unzstd(char* dst, size_t n) {
  ZSTD_outBuffer out{dst, n, 0};
  while (out.pos < out.size) {
    if (zin_.pos == zin_.size && !file_eof_) {
      absl::StatusOr<size_t> got = file_->Read(in_.get(), chunk_size_);
      if (!got.ok()) return got.status();
      if (*got == 0) file_eof_ = true;
      zin_ = {in_.get(), *got, 0};
    }
    if (zin_.pos == zin_.size && file_eof_) {
      // The input is all used; zstd may still hold output for a frame
      // whose input it has consumed.
      if (frame_done_) break;
    }
    const size_t before_in = zin_.pos, before_out = out.pos;
    const size_t rc = ZSTD_decompressStream(zstd_, &out, &zin_);
    if (ZSTD_isError(rc)) {
      return absl::DataLossError(
          StrCat(name(), ": corrupt zstd data (", ZSTD_getErrorName(rc), ")"));
    }
    // 0: a frame is complete and all its output flushed.
    frame_done_ = rc == 0;
    if (zin_.pos == before_in && out.pos == before_out && file_eof_ &&
        zin_.pos == zin_.size) {
      // No progress at the end of the file: the frame is cut.
      return absl::DataLossError(
          StrCat(name(), ": zstd data ends in the middle of a frame"));
    }
  }
  return out.pos;
}

absl::StatusOr<size_t> InputBuffer::Refill(size_t n) {
  while (end_ - pos_ < n && !eof_) {
    if (end_ == capacity_) {
      if (pos_ > 0) {
        // Move what is left to the front.
        std::memmove(buffer_.get(), buffer_.get() + pos_, end_ - pos_);
        offset_ += pos_;
        end_ -= pos_;
        pos_ = 0;
      } else {
        // One record fills the whole window: double it. Growing by what
        // has arrived, not by `n`, keeps a corrupt length from allocating.
        auto bigger = std::make_unique_for_overwrite<char[]>(2 * capacity_);
        std::memcpy(bigger.get(), buffer_.get(), end_);
        buffer_ = std::move(bigger);
        capacity_ *= 2;
      }
    }
    absl::StatusOr<size_t> got =
        stream_->Read(buffer_.get() + end_, capacity_ - end_);
    if (!got.ok()) return got.status();
    if (*got == 0) eof_ = true;
    end_ += *got;
  }
  return end_ - pos_;
}

}  // namespace roost
