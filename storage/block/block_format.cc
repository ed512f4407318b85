#include "storage/block/block_format.h"

#include <snappy.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#include "storage/coding.h"
#include "storage/format.h"
#include "storage/hash.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Byte offsets of the footer fields. See docs/format/block_table.md.
constexpr int kMagicOffset = 0;
constexpr int kMajorOffset = 8;
constexpr int kMinorOffset = 10;
constexpr int kFooterSizeOffset = 12;
constexpr int kFileSizeOffset = 16;
constexpr int kIndexSearchOffset = 24;
constexpr int kIsUniformOffset = 25;
constexpr int kHashIndexOffset = 26;
constexpr int kCompressionOffset = 27;
constexpr int kBlockSizeOffset = 28;
constexpr int kRestartIntervalOffset = 32;
constexpr int kMaxKeyLengthOffset = 36;
constexpr int kNumEntriesOffset = 40;
constexpr int kNumDataBlocksOffset = 48;
constexpr int kRawKeyBytesOffset = 56;
constexpr int kRawValueBytesOffset = 64;
constexpr int kDataEndOffset = 72;
constexpr int kIndexOffsetOffset = 80;
constexpr int kIndexSizeOffset = 88;
constexpr int kUniformityCvOffset = 96;
constexpr int kFilterOffsetOffset = 104;  // 2.0; reserved in 1.0
constexpr int kFilterSizeOffset = 112;    // 2.0; reserved in 1.0
constexpr int kChecksumOffset = 120;
static_assert(kChecksumOffset + 8 == kBlockTableFooterSize);

constexpr int kZstdLevel = 3;

}  // namespace

std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "none";
    case Compression::kSnappy:
      return "snappy";
    case Compression::kZstd:
      return "zstd";
  }
  return "unknown";
}

absl::StatusOr<Compression> ParseCompression(std::string_view name) {
  if (name == "none") return Compression::kNone;
  if (name == "snappy") return Compression::kSnappy;
  if (name == "zstd") return Compression::kZstd;
  return absl::InvalidArgumentError(StrCat(
      "unknown compression \"", name, "\" (expected none, snappy or zstd)"));
}

std::string_view IndexSearchName(IndexSearch s) {
  switch (s) {
    case IndexSearch::kBinary:
      return "binary";
    case IndexSearch::kInterpolation:
      return "interpolation";
    case IndexSearch::kAuto:
      return "auto";
  }
  return "unknown";
}

absl::StatusOr<IndexSearch> ParseIndexSearch(std::string_view name) {
  if (name == "binary") return IndexSearch::kBinary;
  if (name == "interpolation") return IndexSearch::kInterpolation;
  if (name == "auto") return IndexSearch::kAuto;
  return absl::InvalidArgumentError(
      StrCat("unknown index search \"", name,
             "\" (expected binary, interpolation or auto)"));
}

void BlockHandle::EncodeTo(std::string* dst) const {
  PutVarint64(dst, offset);
  PutVarint64(dst, size);
}

const char* BlockHandle::DecodeFrom(const char* p, const char* limit) {
  p = DecodeVarint64(p, limit, &offset);
  if (p == nullptr) return nullptr;
  return DecodeVarint64(p, limit, &size);
}

Compression CompressBlock(Compression type, std::string_view raw,
                          std::string* out) {
  out->clear();
  switch (type) {
    case Compression::kNone:
      return Compression::kNone;
    case Compression::kSnappy:
      snappy::Compress(raw.data(), raw.size(), out);
      break;
    case Compression::kZstd: {
      out->resize(ZSTD_compressBound(raw.size()));
      const size_t n = ZSTD_compress(out->data(), out->size(), raw.data(),
                                     raw.size(), kZstdLevel);
      if (ZSTD_isError(n)) return Compression::kNone;
      out->resize(n);
      break;
    }
  }
  // Not worth it unless it saves at least 1/8.
  if (out->size() > raw.size() - raw.size() / 8) return Compression::kNone;
  return type;
}

void AppendBlockTrailer(std::string_view stored, Compression type,
                        std::string* dst) {
  const char type_byte = static_cast<char>(type);
  StreamingChecksum sum;
  sum.Update(stored.data(), stored.size());
  sum.Update(&type_byte, 1);
  dst->push_back(type_byte);
  PutFixed64(dst, sum.Digest());
}

std::string BlockName::Text() const {
  return number ? StrCat(kind, " ", *number) : std::string(kind);
}

absl::StatusOr<Compression> CheckBlockTrailer(std::string_view path,
                                              const char* stored, uint64_t size,
                                              BlockName block) {
  const char type_byte = stored[size];
  StreamingChecksum sum;
  sum.Update(stored, size);
  sum.Update(&type_byte, 1);
  if (sum.Digest() != DecodeFixed64(stored + size + 1)) {
    return CorruptionError(path, StrCat(block.Text(), " checksum mismatch"));
  }
  const auto type = static_cast<Compression>(type_byte);
  if (type != Compression::kNone && type != Compression::kSnappy &&
      type != Compression::kZstd) {
    return CorruptionError(path,
                           StrCat(block.Text(), " has an unknown compression"));
  }
  return type;
}

namespace {

// A zstd decompression context for each thread, made once: making one per
// block costs more than decompressing a small block.
ZSTD_DCtx* ThreadDecompressionContext() {
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(
      ZSTD_createDCtx(), ZSTD_freeDCtx);
  return dctx.get();
}

// The output a zstd block is given at first; it doubles as the frame makes
// more, up to what the frame states.
constexpr uint64_t kFirstZstdOutput = 256 << 10;

}  // namespace

absl::Status DecompressBlock(std::string_view path, BlockName block,
                             Compression type, std::string_view stored,
                             uint64_t max_size, std::string* out) {
  auto bad = [&](const char* what) {
    return CorruptionError(path, StrCat(block.Text(), ": ", what));
  };
  auto too_large = [&](std::string_view frame, uint64_t n) {
    return CorruptionError(
        path, StrCat(block.Text(), ": its ", frame, " states ", n,
                     " bytes uncompressed, more than this table's keys and "
                     "values can fill (",
                     max_size, ")"));
  };
  switch (type) {
    case Compression::kNone:
      out->assign(stored);
      return absl::OkStatus();
    case Compression::kSnappy: {
      size_t n = 0;
      if (!snappy::GetUncompressedLength(stored.data(), stored.size(), &n)) {
        return bad("bad snappy data");
      }
      if (n > max_size) return too_large("snappy block", n);
      // A pass that writes nothing first: the stated size is given only to
      // a block whose data really makes that many bytes (snappy makes at
      // most 64 from 3 it stores).
      if (!snappy::IsValidCompressedBuffer(stored.data(), stored.size())) {
        return bad("bad snappy data");
      }
      out->resize(n);
      if (!snappy::RawUncompress(stored.data(), stored.size(), out->data())) {
        return bad("bad snappy data");
      }
      return absl::OkStatus();
    }
    case Compression::kZstd: {
      const unsigned long long n =
          ZSTD_getFrameContentSize(stored.data(), stored.size());
      if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN) {
        return bad("bad zstd frame");
      }
      if (n > max_size) return too_large("zstd frame", n);
      // zstd can make far more than it stores, so the output grows with
      // what the frame really makes, from a first guess that fits a block
      // that is what it states.
      ZSTD_DCtx* dctx = ThreadDecompressionContext();
      ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
      ZSTD_inBuffer in{stored.data(), stored.size(), 0};
      out->resize(std::min<uint64_t>(n, kFirstZstdOutput));
      size_t made = 0;
      while (true) {
        ZSTD_outBuffer o{out->data(), out->size(), made};
        const size_t read_before = in.pos;
        const size_t left = ZSTD_decompressStream(dctx, &o, &in);
        if (ZSTD_isError(left)) return bad("bad zstd frame");
        const bool progress = o.pos != made || in.pos != read_before;
        made = o.pos;
        if (left == 0) break;  // the frame is whole
        if (made < out->size()) {
          // Room left and the frame not whole: its data ran out.
          if (in.pos == in.size || !progress) {
            return bad("bad zstd frame");
          }
          continue;
        }
        if (made == n) return bad("bad zstd frame");
        out->resize(std::min<uint64_t>(n, 2 * out->size()));
      }
      if (made != n || in.pos != in.size) {
        return bad("bad zstd frame");
      }
      out->resize(n);
      return absl::OkStatus();
    }
  }
  return bad("unknown compression");
}

uint64_t FilterOffset(uint64_t data_end) {
  return (data_end + kCacheLineSize - 1) / kCacheLineSize * kCacheLineSize;
}

std::string BlockTableFooter::Encode() const {
  std::string out(kBlockTableFooterSize, '\0');
  char* p = out.data();
  std::memcpy(p + kMagicOffset, kBlockTableMagic.data(),
              kBlockTableMagic.size());
  EncodeFixed16(p + kMajorOffset, major_version);
  EncodeFixed16(p + kMinorOffset, minor_version);
  EncodeFixed32(p + kFooterSizeOffset, kBlockTableFooterSize);
  EncodeFixed64(p + kFileSizeOffset, file_size);
  p[kIndexSearchOffset] = static_cast<char>(index_search);
  p[kIsUniformOffset] = static_cast<char>(is_uniform);
  p[kHashIndexOffset] = static_cast<char>(hash_index);
  p[kCompressionOffset] = static_cast<char>(compression);
  EncodeFixed32(p + kBlockSizeOffset, block_size);
  EncodeFixed32(p + kRestartIntervalOffset, restart_interval);
  EncodeFixed32(p + kMaxKeyLengthOffset, max_key_length);
  EncodeFixed64(p + kNumEntriesOffset, num_entries);
  EncodeFixed64(p + kNumDataBlocksOffset, num_data_blocks);
  EncodeFixed64(p + kRawKeyBytesOffset, raw_key_bytes);
  EncodeFixed64(p + kRawValueBytesOffset, raw_value_bytes);
  EncodeFixed64(p + kDataEndOffset, data_end);
  EncodeFixed64(p + kIndexOffsetOffset, index.offset);
  EncodeFixed64(p + kIndexSizeOffset, index.size);
  EncodeFixed64(p + kUniformityCvOffset,
                std::bit_cast<uint64_t>(uniformity_cv));
  if (has_filter()) {
    EncodeFixed64(p + kFilterOffsetOffset, filter.offset);
    EncodeFixed64(p + kFilterSizeOffset, filter.size);
  }
  EncodeFixed64(p + kChecksumOffset, Checksum64(p, kChecksumOffset));
  return out;
}

absl::StatusOr<BlockTableFooter> BlockTableFooter::Decode(
    std::string_view path, std::string_view file) {
  auto corrupt = [&](std::string_view what) {
    return CorruptionError(path, what);
  };
  if (file.size() < kBlockTableFooterSize) {
    return corrupt(StrCat("file too short for a footer (", file.size(),
                          " bytes, need ", kBlockTableFooterSize, ")"));
  }
  const char* p = file.data() + file.size() - kBlockTableFooterSize;
  if (std::string_view(p, kBlockTableMagic.size()) != kBlockTableMagic) {
    return corrupt("bad magic number (not a roost block table)");
  }
  BlockTableFooter f;
  f.major_version = DecodeFixed16(p + kMajorOffset);
  f.minor_version = DecodeFixed16(p + kMinorOffset);
  if (f.major_version != kBlockTableMajorVersion &&
      f.major_version != kBlockTableFilterMajorVersion) {
    return absl::FailedPreconditionError(
        StrCat("table ", path, " has format major version ",
               static_cast<int>(f.major_version), "; this reader understands ",
               static_cast<int>(kBlockTableMajorVersion), " and ",
               static_cast<int>(kBlockTableFilterMajorVersion)));
  }
  if (DecodeFixed64(p + kChecksumOffset) != Checksum64(p, kChecksumOffset)) {
    return corrupt("footer checksum mismatch");
  }
  if (DecodeFixed32(p + kFooterSizeOffset) != kBlockTableFooterSize) {
    return corrupt("bad footer size");
  }
  f.file_size = DecodeFixed64(p + kFileSizeOffset);
  f.index_search = static_cast<IndexSearch>(p[kIndexSearchOffset]);
  f.is_uniform = p[kIsUniformOffset] != 0;
  f.hash_index = p[kHashIndexOffset] != 0;
  f.compression = static_cast<Compression>(p[kCompressionOffset]);
  f.block_size = DecodeFixed32(p + kBlockSizeOffset);
  f.restart_interval = DecodeFixed32(p + kRestartIntervalOffset);
  f.max_key_length = DecodeFixed32(p + kMaxKeyLengthOffset);
  f.num_entries = DecodeFixed64(p + kNumEntriesOffset);
  f.num_data_blocks = DecodeFixed64(p + kNumDataBlocksOffset);
  f.raw_key_bytes = DecodeFixed64(p + kRawKeyBytesOffset);
  f.raw_value_bytes = DecodeFixed64(p + kRawValueBytesOffset);
  f.data_end = DecodeFixed64(p + kDataEndOffset);
  f.index.offset = DecodeFixed64(p + kIndexOffsetOffset);
  f.index.size = DecodeFixed64(p + kIndexSizeOffset);
  f.uniformity_cv =
      std::bit_cast<double>(DecodeFixed64(p + kUniformityCvOffset));
  if (f.has_filter()) {
    f.filter.offset = DecodeFixed64(p + kFilterOffsetOffset);
    f.filter.size = DecodeFixed64(p + kFilterSizeOffset);
  }

  if (f.file_size != file.size()) {
    return corrupt(StrCat("file is ", file.size(),
                          " bytes but its footer says ", f.file_size,
                          " (truncated or appended to)"));
  }
  if (static_cast<uint8_t>(f.index_search) > 2 ||
      static_cast<uint8_t>(f.compression) > 2 ||
      static_cast<uint8_t>(p[kIsUniformOffset]) > 1 ||
      static_cast<uint8_t>(p[kHashIndexOffset]) > 1) {
    return corrupt("bad option in footer");
  }
  if (f.restart_interval == 0 || f.block_size == 0) {
    return corrupt("bad block size or restart interval");
  }
  const uint64_t index_end = file.size() - kBlockTableFooterSize;
  // 1.0: the index starts where the data region ends. 2.0: the filter
  // block starts there, after zero padding to a multiple of 64, and the
  // index after the filter's trailer.
  uint64_t index_start = f.data_end;
  if (f.has_filter()) {
    if (f.data_end > index_end || f.filter.offset != FilterOffset(f.data_end) ||
        f.filter.offset > index_end ||
        f.filter.size > index_end - f.filter.offset ||
        kBlockTrailerSize > index_end - f.filter.offset - f.filter.size) {
      return corrupt("bad filter handle");
    }
    index_start = f.filter.offset + f.filter.size + kBlockTrailerSize;
  }
  if (f.index.offset != index_start || f.index.offset > index_end ||
      f.index.size > index_end - f.index.offset ||
      index_end - f.index.offset - f.index.size != kBlockTrailerSize) {
    return corrupt("bad index handle");
  }
  if (f.num_data_blocks > f.data_end / kBlockTrailerSize ||
      f.num_entries < f.num_data_blocks) {
    return corrupt("bad block or entry count");
  }
  return f;
}

}  // namespace roost
