#include "storage/block/block_table_builder.h"

#include <cmath>

#include "util/escape.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr uint64_t kMaxEntrySize = uint64_t{1} << 30;

}  // namespace

std::string ShortestSeparator(std::string_view a, std::string_view b) {
  size_t p = 0;
  const size_t limit = std::min(a.size(), b.size());
  while (p < limit && a[p] == b[p]) ++p;
  if (p < limit) {
    const auto byte = static_cast<uint8_t>(a[p]);
    if (byte < 0xff && byte + 1 < static_cast<uint8_t>(b[p])) {
      std::string s(a.substr(0, p + 1));
      s[p] = static_cast<char>(byte + 1);
      return s;  // a < s < b, and shorter than a unless a ends at p
    }
  }
  return std::string(a);
}

uint64_t KeyToNumber(std::string_view key, size_t prefix_length) {
  uint64_t n = 0;
  for (size_t i = 0; i < 8; ++i) {
    const size_t at = prefix_length + i;
    n = (n << 8) | (at < key.size() ? static_cast<uint8_t>(key[at]) : 0);
  }
  return n;
}

absl::Status ValidateBlockBuildOptions(const BlockBuildOptions& options) {
  if (options.block_size == 0 || options.block_size > (1u << 30)) {
    return absl::InvalidArgumentError(
        StrCat("block size must be in [1, 2^30], not ", options.block_size));
  }
  if (options.restart_interval == 0) {
    return absl::InvalidArgumentError("restart interval must be at least 1");
  }
  if (options.filter_bits_per_key > kMaxFilterBitsPerKey) {
    return absl::InvalidArgumentError(
        StrCat("filter bits per key must be in [0, ", kMaxFilterBitsPerKey,
               "], not ", options.filter_bits_per_key));
  }
  if (!(options.hash_index_utilization > 0 &&
        options.hash_index_utilization <= 1)) {
    return absl::InvalidArgumentError(
        StrCat("hash index utilization must be in (0, 1], not ",
               options.hash_index_utilization));
  }
  return absl::OkStatus();
}

std::string BlockFormatVersion(const BlockBuildOptions& options) {
  return StrCat(options.filter_bits_per_key > 0 ? kBlockTableFilterMajorVersion
                                                : kBlockTableMajorVersion,
                ".", kBlockTableMinorVersion);
}

absl::StatusOr<std::unique_ptr<BlockTableBuilder>> BlockTableBuilder::Create(
    const std::string& path, const BlockBuildOptions& options) {
  ROOST_RETURN_IF_ERROR(ValidateBlockBuildOptions(options));
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                         WritableFile::Create(path));
  return std::unique_ptr<BlockTableBuilder>(
      new BlockTableBuilder(std::move(file), options));
}

BlockTableBuilder::BlockTableBuilder(std::unique_ptr<WritableFile> file,
                                     const BlockBuildOptions& options)
    : options_(options),
      file_(std::move(file)),
      data_(options.restart_interval, options.hash_index,
            options.hash_index_utilization) {
  if (options.filter_bits_per_key > 0 && options.expected_keys > 0) {
    filter_.emplace(
        FilterLines(options.expected_keys, options.filter_bits_per_key),
        options.filter_bits_per_key);
  }
}

BlockTableBuilder::~BlockTableBuilder() = default;  // file_ removes itself

absl::Status BlockTableBuilder::Add(std::string_view key,
                                    std::string_view value) {
  if (!status_.ok()) return status_;
  if (report_.num_keys > 0 && key <= std::string_view(last_key_)) {
    status_ = absl::InvalidArgumentError(StrCat(
        key == std::string_view(last_key_) ? "duplicate key " : "key ",
        PrintableKey(key),
        key == std::string_view(last_key_)
            ? ""
            : StrCat(" is out of order (after ", PrintableKey(last_key_), ")"),
        " at entry ", report_.num_keys, " (counting from 0)"));
    file_.reset();
    return status_;
  }
  // An entry fills a block of its own at most; blocks stay far below the
  // 2 GiB a reader accepts and the 4 GiB its 32-bit offsets can address.
  if (key.size() + value.size() > kMaxEntrySize) {
    status_ = absl::InvalidArgumentError(
        StrCat("key ", PrintableKey(key), " with its value is ",
               key.size() + value.size(), " bytes, over the limit of ",
               kMaxEntrySize));
    file_.reset();
    return status_;
  }
  if (pending_index_) {
    index_keys_.push_back(ShortestSeparator(pending_last_key_, key));
    index_handles_.push_back(pending_handle_);
    pending_index_ = false;
  }
  if (filter_) {
    filter_->AddHash(FilterHash(key));
  } else if (options_.filter_bits_per_key > 0) {
    filter_hashes_.push_back(FilterHash(key));
  }
  data_.Add(key, value);
  last_key_.assign(key);
  max_key_length_ = std::max<uint32_t>(max_key_length_, key.size());
  raw_key_bytes_ += key.size();
  raw_value_bytes_ += value.size();
  ++report_.num_keys;
  if (data_.SizeEstimate() >= options_.block_size) {
    status_ = FlushDataBlock();
    if (!status_.ok()) file_.reset();
  }
  return status_;
}

absl::Status BlockTableBuilder::WriteBlock(std::string_view raw,
                                           Compression type,
                                           BlockHandle* handle) {
  const Compression used = CompressBlock(type, raw, &compressed_);
  const std::string_view stored =
      used == Compression::kNone ? raw : std::string_view(compressed_);
  if (used != Compression::kNone) ++report_.compressed_blocks;
  handle->offset = file_->size();
  handle->size = stored.size();
  std::string trailer;
  AppendBlockTrailer(stored, used, &trailer);
  ROOST_RETURN_IF_ERROR(file_->Append(stored));
  return file_->Append(trailer);
}

absl::Status BlockTableBuilder::WriteFilter(BlockTableFooter* footer) {
  if (!filter_) {
    filter_.emplace(FilterLines(report_.num_keys, options_.filter_bits_per_key),
                    options_.filter_bits_per_key);
    for (const uint64_t h : filter_hashes_) filter_->AddHash(h);
    std::vector<uint64_t>().swap(filter_hashes_);
  }
  report_.filter_bytes = filter_->num_lines() * kFilterLineSize;
  report_.filter_probes = filter_->num_probes();
  footer->major_version = kBlockTableFilterMajorVersion;
  const uint64_t padding = FilterOffset(file_->size()) - file_->size();
  ROOST_RETURN_IF_ERROR(file_->Append(std::string(padding, '\0')));
  const std::string contents = filter_->Finish();
  filter_.reset();
  // Never compressed: its bits are random, and readers probe it in place.
  return WriteBlock(contents, Compression::kNone, &footer->filter);
}

absl::Status BlockTableBuilder::FlushDataBlock() {
  if (data_.empty()) return absl::OkStatus();
  pending_last_key_.assign(data_.last_key());
  ROOST_RETURN_IF_ERROR(
      WriteBlock(data_.Finish(), options_.compression, &pending_handle_));
  pending_index_ = true;
  data_.Reset();
  ++report_.num_data_blocks;
  return absl::OkStatus();
}

absl::StatusOr<BlockBuildReport> BlockTableBuilder::Finish() {
  if (!status_.ok()) return status_;
  absl::StatusOr<BlockBuildReport> report = FinishFile();
  // Sticky either way: a failed Finish() leaves no file, and a second one
  // must not write again.
  status_ = report.ok()
                ? absl::FailedPreconditionError("Finish() already called")
                : report.status();
  if (!report.ok()) file_.reset();
  return report;
}

absl::StatusOr<BlockBuildReport> BlockTableBuilder::FinishFile() {
  ROOST_RETURN_IF_ERROR(FlushDataBlock());
  if (pending_index_) {
    // The last block's separator is its last key.
    index_keys_.push_back(pending_last_key_);
    index_handles_.push_back(pending_handle_);
    pending_index_ = false;
  }

  // Are the index keys evenly spread? Welford's one-pass mean and variance
  // of the gaps between consecutive keys as numbers.
  BlockTableFooter footer;
  if (index_keys_.size() >= 3) {
    const std::string& first = index_keys_.front();
    const std::string& last = index_keys_.back();
    size_t prefix = 0;
    while (prefix < std::min(first.size(), last.size()) &&
           first[prefix] == last[prefix]) {
      ++prefix;
    }
    double mean = 0, m2 = 0;
    uint64_t n = 0;
    uint64_t previous = KeyToNumber(index_keys_[0], prefix);
    for (size_t i = 1; i < index_keys_.size(); ++i) {
      const uint64_t current = KeyToNumber(index_keys_[i], prefix);
      const double gap = static_cast<double>(current - previous);
      previous = current;
      ++n;
      const double delta = gap - mean;
      mean += delta / n;
      m2 += delta * (gap - mean);
    }
    const double stddev = std::sqrt(m2 / n);
    footer.uniformity_cv = mean > 0 ? stddev / mean : INFINITY;
    footer.is_uniform = footer.uniformity_cv < options_.uniformity_threshold;
  }

  // The index block: restart interval 1, so that every entry's key is whole
  // and entry i can be read directly for binary or interpolation search.
  DataBlockBuilder index(1, /*hash_index=*/false);
  std::string handle_bytes;
  for (size_t i = 0; i < index_keys_.size(); ++i) {
    handle_bytes.clear();
    index_handles_[i].EncodeTo(&handle_bytes);
    index.Add(index_keys_[i], handle_bytes);
  }
  footer.data_end = file_->size();
  if (options_.filter_bits_per_key > 0) {
    ROOST_RETURN_IF_ERROR(WriteFilter(&footer));
  }
  // The index is never compressed: readers search it in place.
  ROOST_RETURN_IF_ERROR(
      WriteBlock(index.Finish(), Compression::kNone, &footer.index));
  footer.index_search = options_.index_search;
  footer.hash_index = options_.hash_index;
  footer.compression = options_.compression;
  footer.block_size = options_.block_size;
  footer.restart_interval = options_.restart_interval;
  footer.max_key_length = max_key_length_;
  footer.num_entries = report_.num_keys;
  footer.num_data_blocks = report_.num_data_blocks;
  footer.raw_key_bytes = raw_key_bytes_;
  footer.raw_value_bytes = raw_value_bytes_;
  footer.file_size = file_->size() + kBlockTableFooterSize;
  ROOST_RETURN_IF_ERROR(file_->Append(footer.Encode()));
  ROOST_RETURN_IF_ERROR(file_->Close());
  report_.raw_bytes = raw_key_bytes_ + raw_value_bytes_;
  report_.file_size = footer.file_size;
  report_.is_uniform = footer.is_uniform;
  report_.uniformity_cv = footer.uniformity_cv;
  return report_;
}

}  // namespace roost
