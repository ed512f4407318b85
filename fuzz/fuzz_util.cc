#include "fuzz/fuzz_util.h"

#include <fcntl.h>
#include <sanitizer/asan_interface.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "storage/block/block_format.h"
#include "storage/block/data_block.h"
#include "storage/coding.h"
#include "storage/cuckoo/cuckoo_format.h"
#include "storage/hash.h"

namespace roost::fuzz {
namespace {

// Where the checksums sit: the last 8 bytes of the cuckoo header and of the
// block table's footer (docs/format/*.md).
constexpr size_t kCuckooChecksumOffset = kCuckooHeaderSize - 8;
constexpr size_t kFooterChecksumOffset = kBlockTableFooterSize - 8;
constexpr size_t kPageSize = 4096;

void RemoveScratch() {
  std::error_code ec;
  std::filesystem::remove_all(ScratchDir(), ec);
}

}  // namespace

const std::string& ScratchDir() {
  static const std::string dir = [] {
    std::string base = "/dev/shm";
    if (::access(base.c_str(), W_OK) != 0) {
      base = std::filesystem::temp_directory_path().string();
    }
    std::string tmpl = base + "/roost-fuzz-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      FailMessage(StrCat("cannot make a scratch directory under ", base, ": ",
                         std::strerror(errno)));
    }
    return tmpl;
  }();
  static const bool registered = std::atexit(RemoveScratch) == 0;
  (void)registered;
  return dir;
}

std::string ScratchPath(std::string_view name) {
  return StrCat(ScratchDir(), "/", name);
}

void WriteFileOrDie(const std::string& path, std::string_view bytes) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) FailMessage(StrCat("cannot create ", path));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) FailMessage(StrCat("cannot write ", path));
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

uint64_t Touch(std::string_view bytes) {
  // XXH3 reads every byte, through code AddressSanitizer instruments.
  return bytes.empty() ? 0 : Hash64(bytes, 0);
}

TailGuard::TailGuard(std::string_view mapped) {
  if (mapped.empty()) return;
  const auto end = reinterpret_cast<uintptr_t>(mapped.data() + mapped.size());
  const uintptr_t page_end = (end + kPageSize - 1) / kPageSize * kPageSize;
  begin_ = mapped.data() + mapped.size();
  size_ = page_end - end;
  ASAN_POISON_MEMORY_REGION(begin_, size_);
}

TailGuard::~TailGuard() {
  // Before the table unmaps the pages: shadow memory outlives a mapping.
  if (size_ > 0) ASAN_UNPOISON_MEMORY_REGION(begin_, size_);
}

std::string FixCuckooChecksums(std::string file) {
  if (file.size() < kCuckooHeaderSize) return file;
  char* header = file.data();
  EncodeFixed64(header + kCuckooChecksumOffset,
                Checksum64(header, kCuckooChecksumOffset));
  auto decoded = CuckooHeader::Decode("fix-up", file);
  if (!decoded.ok()) return file;
  // Decode checked that every region lies in the file.
  for (Region* r : {&decoded->buckets, &decoded->overflow, &decoded->heap}) {
    r->checksum = Checksum64(file.data() + r->offset, r->size);
  }
  // Encode() writes the fields Decode() read; bytes it ignores (padding)
  // come back as zeros, which a reader ignores too.
  const std::string encoded = decoded->Encode();
  file.replace(0, encoded.size(), encoded);
  return file;
}

namespace {

// Rewrites the trailer after the block at [offset, offset + size) of `file`
// for the compression byte it holds. REQUIRES: the block and its trailer lie
// in `file`.
void FixTrailer(std::string* file, uint64_t offset, uint64_t size) {
  const std::string_view stored(file->data() + offset, size);
  const auto type = static_cast<Compression>((*file)[offset + size]);
  std::string trailer;
  AppendBlockTrailer(stored, type, &trailer);
  file->replace(offset + size, trailer.size(), trailer);
}

}  // namespace

std::string FixBlockTableChecksums(std::string file) {
  if (file.size() < kBlockTableFooterSize) return file;
  char* footer = file.data() + file.size() - kBlockTableFooterSize;
  EncodeFixed64(footer + kFooterChecksumOffset,
                Checksum64(footer, kFooterChecksumOffset));
  auto decoded = BlockTableFooter::Decode("fix-up", file);
  if (!decoded.ok()) return file;
  // Decode checked that the index block and its trailer end at the footer.
  const BlockHandle index = decoded->index;
  FixTrailer(&file, index.offset, index.size);
  // 2.0: Decode checked that the filter block and its trailer end before
  // the index.
  if (decoded->has_filter()) {
    FixTrailer(&file, decoded->filter.offset, decoded->filter.size);
  }
  auto block = DataBlock::Parse(
      "fix-up", std::string_view(file).substr(index.offset, index.size));
  if (!block.ok()) return file;
  for (uint32_t i = 0; i < block->num_restarts(); ++i) {
    std::string_view key, value;
    if (block->RestartEntry(i, &key, &value) != DataBlock::kFound) continue;
    BlockHandle h;
    if (h.DecodeFrom(value.data(), value.data() + value.size()) == nullptr ||
        h.offset > decoded->data_end || h.size > decoded->data_end - h.offset ||
        kBlockTrailerSize > decoded->data_end - h.offset - h.size) {
      continue;
    }
    FixTrailer(&file, h.offset, h.size);
  }
  return file;
}

void FailMessage(const std::string& message) {
  std::fprintf(stderr, "roost fuzz: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace roost::fuzz
