#include "storage/block/block_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "storage/block/block_table_builder.h"
#include "storage/coding.h"
#include "storage/format.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Interpolation steps before the index search finishes by bisection; each
// reads one number of the in-memory index array, so skewed keys cost at most
// this many extra probes over binary search.
constexpr int kMaxInterpolationSteps = 4;
// The largest decompressed block accepted (a block holds at least one entry,
// which can be large).
constexpr uint64_t kMaxBlockSize = uint64_t{1} << 31;

// The most bytes a data block of this table can hold uncompressed: every key
// and value the footer counts, each entry's three varint32 lengths and its
// restart, the largest hash index and the block's last words. A compressed
// block states its own size, and a damaged or hostile one may state any;
// this bound is what keeps a small file from making each read of a block
// allocate gigabytes.
uint64_t MaxBlockContents(const BlockTableFooter& f) {
  constexpr unsigned __int128 kPerEntry = 3 * 5 + 4;
  constexpr unsigned __int128 kPerBlock = 2 + 65535 + 4 + 4;
  const unsigned __int128 n = static_cast<unsigned __int128>(f.raw_key_bytes) +
                              f.raw_value_bytes + kPerEntry * f.num_entries +
                              kPerBlock;
  return n > kMaxBlockSize ? kMaxBlockSize : static_cast<uint64_t>(n);
}
// How much of an uncompressed block's tail a lookup prefetches.
constexpr uint64_t kPrefetchTailBytes = 512;

}  // namespace

absl::StatusOr<std::unique_ptr<BlockTable>> BlockTable::Open(
    const std::string& path, const TableReadOptions& options) {
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file,
                         MappedFile::Open(path, options.load_mode));
  ROOST_ASSIGN_OR_RETURN(BlockTableFooter footer,
                         BlockTableFooter::Decode(path, file->data()));
  const char* base = file->data().data();
  ROOST_ASSIGN_OR_RETURN(Compression type,
                         CheckBlockTrailer(path, base + footer.index.offset,
                                           footer.index.size, "index block"));
  if (type != Compression::kNone) {
    return CorruptionError(path, "compressed index block");
  }
  std::string_view index_bytes(base + footer.index.offset, footer.index.size);
  std::string_view filter_bytes;
  if (footer.has_filter()) {
    // Padding is the one part of the file no checksum covers: it must be
    // zero, as written.
    for (uint64_t at = footer.data_end; at < footer.filter.offset; ++at) {
      if (base[at] != 0) {
        return CorruptionError(path, "bad padding before the filter block");
      }
    }
    if (base[footer.filter.offset + footer.filter.size] !=
        static_cast<char>(Compression::kNone)) {
      return CorruptionError(path, "compressed filter block");
    }
    filter_bytes =
        std::string_view(base + footer.filter.offset, footer.filter.size);
  }
  // Both read from a copy of their own, which the kernel never pages out.
  std::optional<AnonymousBuffer> resident;
  if (options.resident_index_and_filter &&
      options.load_mode == LoadMode::kMmap) {
    ROOST_ASSIGN_OR_RETURN(
        AnonymousBuffer copy,
        AnonymousBuffer::Allocate(index_bytes.size() + filter_bytes.size()));
    char* out = copy.data();
    std::memcpy(out, index_bytes.data(), index_bytes.size());
    if (!filter_bytes.empty()) {
      std::memcpy(out + index_bytes.size(), filter_bytes.data(),
                  filter_bytes.size());
    }
    index_bytes = std::string_view(out, index_bytes.size());
    filter_bytes =
        std::string_view(out + index_bytes.size(), filter_bytes.size());
    resident.emplace(std::move(copy));
  }
  ROOST_ASSIGN_OR_RETURN(DataBlock index, DataBlock::Parse(path, index_bytes));
  std::optional<FilterBlock> filter;
  if (footer.has_filter()) {
    ROOST_ASSIGN_OR_RETURN(filter, FilterBlock::Parse(path, filter_bytes));
  }
  std::unique_ptr<BlockTable> table(
      new BlockTable(std::move(file), footer, options, index));
  if (resident) table->resident_.emplace(std::move(*resident));
  table->filter_ = filter;
  if (table->filter_ && options.use_filter) {
    table->filter_in_use_ = &*table->filter_;
  }
  ROOST_RETURN_IF_ERROR(table->ValidateIndex());
  if (options.verify_checksums) {
    ROOST_RETURN_IF_ERROR(table->VerifyChecksums());
  }
  if (options.advise_random) table->file_->AdviseRandomAccess();
  return table;
}

BlockTable::BlockTable(std::unique_ptr<MappedFile> file,
                       const BlockTableFooter& footer,
                       const TableReadOptions& options, DataBlock index)
    : file_(std::move(file)),
      footer_(footer),
      options_(options),
      index_(index),
      index_search_(options.index_search.value_or(footer.index_search)),
      interpolate_(index_search_ == IndexSearch::kInterpolation ||
                   (index_search_ == IndexSearch::kAuto && footer.is_uniform)),
      max_block_contents_(MaxBlockContents(footer)),
      cache_(options.block_cache != nullptr
                 ? options.block_cache
                 : std::make_shared<BlockCache>(kDefaultBlockCacheBytes)),
      cache_id_(cache_->NewId()) {}

absl::Status BlockTable::ValidateIndex() {
  const uint64_t n = footer_.num_data_blocks;
  // An empty table's index block has no restart and no entry.
  const bool empty_index = n == 0;
  if (!empty_index && index_.num_restarts() != n) {
    return CorruptionError(path(), "index entry count disagrees with footer");
  }
  block_offsets_.reserve(n + 1);
  block_types_.reserve(n);
  uint64_t expected = 0;
  std::string_view previous;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view key, value;
    if (index_.RestartEntry(static_cast<uint32_t>(i), &key, &value) !=
        DataBlock::kFound) {
      return CorruptionError(path(), StrCat("bad index entry ", i));
    }
    if (i > 0 && key <= previous) {
      return CorruptionError(path(), "index keys out of order");
    }
    previous = key;
    BlockHandle h;
    const char* end = h.DecodeFrom(value.data(), value.data() + value.size());
    if (end != value.data() + value.size() || h.offset != expected ||
        h.size > footer_.data_end - h.offset ||
        kBlockTrailerSize > footer_.data_end - h.offset - h.size) {
      return CorruptionError(path(), StrCat("bad handle of data block ", i));
    }
    block_offsets_.push_back(h.offset);
    const auto type =
        static_cast<Compression>(file_->data()[h.offset + h.size]);
    if (type != Compression::kNone && type != Compression::kSnappy &&
        type != Compression::kZstd) {
      return CorruptionError(
          path(), StrCat("data block ", i, " has an unknown compression"));
    }
    block_types_.push_back(type);
    expected = h.offset + h.size + kBlockTrailerSize;
  }
  if (expected != footer_.data_end) {
    return CorruptionError(path(), "data blocks do not fill the data region");
  }
  block_offsets_.push_back(expected);
  if (n > 0) {
    std::string_view first, last, v;
    index_.RestartEntry(0, &first, &v);
    index_.RestartEntry(static_cast<uint32_t>(n - 1), &last, &v);
    first_index_key_ = first;
    last_index_key_ = last;
    while (index_prefix_ < std::min(first.size(), last.size()) &&
           first[index_prefix_] == last[index_prefix_]) {
      ++index_prefix_;
    }
    // Every index key as a number, in one small array with a search tree
    // over it: searching it costs a few cache hits where searching the
    // index block would cost a miss per probe. Full keys settle only ties.
    std::vector<uint64_t> numbers;
    numbers.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view key, v;
      index_.RestartEntry(static_cast<uint32_t>(i), &key, &v);
      numbers.push_back(KeyToNumber(key, index_prefix_));
    }
    index_numbers_ = SearchTree(numbers);
  }
  return absl::OkStatus();
}

absl::Status BlockTable::VerifyChecksums() const {
  const char* base = file_->data().data();
  for (uint64_t i = 0; i < footer_.num_data_blocks; ++i) {
    const BlockHandle h = Handle(i);
    auto type =
        CheckBlockTrailer(path(), base + h.offset, h.size, BlockName::Data(i));
    if (!type.ok()) return type.status();
  }
  if (footer_.has_filter()) {
    ROOST_RETURN_IF_ERROR(CheckBlockTrailer(path(),
                                            base + footer_.filter.offset,
                                            footer_.filter.size, "filter block")
                              .status());
  }
  return CheckBlockTrailer(path(), base + footer_.index.offset,
                           footer_.index.size, "index block")
      .status();
}

BlockHandle BlockTable::Handle(uint64_t index) const {
  return BlockHandle{
      block_offsets_[index],
      block_offsets_[index + 1] - block_offsets_[index] - kBlockTrailerSize};
}

absl::StatusOr<uint64_t> BlockTable::FindBlock(std::string_view key) const {
  const uint64_t n = footer_.num_data_blocks;
  if (n == 0) return 0;
  // Keys outside [first, last] do not share the index keys' prefix, so the
  // numbers say nothing about them.
  if (key > last_index_key_) return n;
  if (key <= first_index_key_) return 0;

  // The numbers are in non-decreasing order and respect key order: the
  // answer lies in [lo, hi], where lo is the first index key whose number
  // is >= the key's and hi the first whose number is greater.
  const uint64_t target = KeyToNumber(key, index_prefix_);
  const uint64_t* nums = index_numbers_.data();
  uint64_t lo = 0;
  if (interpolate_) {
    uint64_t hi = n - 1;  // nums[hi] >= target, as key <= last
    for (int step = 0; step < kMaxInterpolationSteps && lo < hi; ++step) {
      const uint64_t vlo = nums[lo], vhi = nums[hi];
      if (target <= vlo) {
        hi = lo;
        break;
      }
      if (vhi <= vlo) break;  // distinct keys, one number: bisect
      const uint64_t pos =
          lo +
          static_cast<uint64_t>(static_cast<unsigned __int128>(target - vlo) *
                                (hi - lo) / (vhi - vlo));
      if (nums[pos] >= target) {
        hi = pos;
      } else {
        lo = pos + 1;
      }
    }
    lo = static_cast<uint64_t>(std::lower_bound(nums + lo, nums + hi, target) -
                               nums);
  } else {
    lo = index_numbers_.LowerBound(target);
  }
  // A greater number means a greater key: lo is the answer. This is the
  // common case, where keys differ within 8 bytes after the prefix.
  if (nums[lo] != target) return lo;
  // Index keys with the key's number sit in [lo, hi): find hi by galloping
  // (there are few, usually), then compare them whole.
  uint64_t equal = lo, hi = lo + 1, step = 1;  // nums[equal] == target
  while (hi < n && nums[hi] == target) {
    equal = hi;
    hi = std::min(n, hi + step);
    step *= 2;
  }
  hi = static_cast<uint64_t>(std::upper_bound(nums + equal, nums + hi, target) -
                             nums);
  std::string_view k;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    std::string_view v;
    if (index_.RestartEntry(static_cast<uint32_t>(mid), &k, &v) !=
        DataBlock::kFound) {
      return CorruptionError(path(), "bad index entry");
    }
    if (k >= key) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

void BlockTable::PrefetchBlock(uint64_t index) const {
  if (block_types_[index] != Compression::kNone) return;
  // A lookup reads the block's tail first (restart count, hash index,
  // restart array), a few lines in a row: ask for them all at once.
  const BlockHandle h = Handle(index);
  const char* stored = file_->data().data() + h.offset;
  const uint64_t tail = std::min<uint64_t>(h.size, kPrefetchTailBytes);
  for (uint64_t at = h.size - tail; at < h.size; at += kCacheLineSize) {
    __builtin_prefetch(stored + at);
  }
}

absl::StatusOr<DataBlock> BlockTable::LoadBlock(
    uint64_t index, std::shared_ptr<const std::string>* pin) const {
  const BlockHandle h = Handle(index);
  const char* stored = file_->data().data() + h.offset;
  const Compression type = block_types_[index];
  if (type == Compression::kNone) {
    pin->reset();
    // As PrefetchBlock, here again: issued right before the parse that needs
    // the lines, a separate call measured slower for a lone Get (a 10M-key
    // table: about 10% on hits, 25% on misses).
    const uint64_t tail = std::min<uint64_t>(h.size, kPrefetchTailBytes);
    for (uint64_t at = h.size - tail; at < h.size; at += kCacheLineSize) {
      __builtin_prefetch(stored + at);
    }
    return DataBlock::Parse(path(), std::string_view(stored, h.size));
  }
  std::shared_ptr<const std::string> block = cache_->Lookup(cache_id_, index);
  if (block == nullptr) {
    // Verify before decompressing: the decompressor is not fed damage.
    ROOST_RETURN_IF_ERROR(
        CheckBlockTrailer(path(), stored, h.size, BlockName::Data(index))
            .status());
    std::string raw;
    ROOST_RETURN_IF_ERROR(DecompressBlock(path(), BlockName::Data(index), type,
                                          std::string_view(stored, h.size),
                                          max_block_contents_, &raw));
    block = cache_->Insert(cache_id_, index, std::move(raw));
  }
  *pin = block;
  return DataBlock::Parse(path(), *block);
}

absl::StatusOr<bool> BlockTable::Get(std::string_view key, Value* value) const {
  if (key.size() > footer_.max_key_length) return false;
  // The filter's line is read while the index is searched (mostly cache
  // hits), so that a hit does not wait for it; a key it rules out stops
  // before any data block is read.
  uint64_t hash = 0;
  if (filter_in_use_ != nullptr) {
    hash = FilterHash(key);
    filter_in_use_->Prefetch(hash);
  }
  ROOST_ASSIGN_OR_RETURN(const uint64_t i, FindBlock(key));
  if (i == footer_.num_data_blocks) return false;
  if (filter_in_use_ != nullptr && !filter_in_use_->MayContain(hash)) {
    return false;
  }
  std::shared_ptr<const std::string> pin;
  ROOST_ASSIGN_OR_RETURN(DataBlock block, LoadBlock(i, &pin));
  std::string_view view;
  switch (block.Get(key, options_.use_hash_index, &view)) {
    case DataBlock::kFound:
      value->view_ = view;
      value->pin_ = std::move(pin);
      return true;
    case DataBlock::kNotFound:
      return false;
    case DataBlock::kCorrupt:
      break;
  }
  return CorruptionError(path(), StrCat("bad entry in data block ", i));
}

absl::Status BlockTable::MultiGet(std::span<const std::string_view> keys,
                                  std::span<LookupResult> results,
                                  ValuePins* pins) const {
  constexpr size_t kGroup = 16;
  const uint64_t n = footer_.num_data_blocks;
  uint64_t hashes[kGroup];
  uint64_t blocks[kGroup];
  for (size_t base = 0; base < keys.size(); base += kGroup) {
    const size_t m = std::min(kGroup, keys.size() - base);
    const std::string_view* group = keys.data() + base;
    // 1: hash each key and start reading its filter line.
    if (filter_in_use_ != nullptr) {
      for (size_t j = 0; j < m; ++j) {
        hashes[j] = FilterHash(group[j]);
        filter_in_use_->Prefetch(hashes[j]);
      }
    }
    // 2: test the filter, find the data block and start reading its tail.
    for (size_t j = 0; j < m; ++j) {
      results[base + j] = LookupResult{};
      blocks[j] = n;
      if (group[j].size() > footer_.max_key_length) continue;
      if (filter_in_use_ != nullptr && !filter_in_use_->MayContain(hashes[j])) {
        continue;
      }
      ROOST_ASSIGN_OR_RETURN(blocks[j], FindBlock(group[j]));
      if (blocks[j] < n) PrefetchBlock(blocks[j]);
    }
    // 3: look each key up in its block.
    for (size_t j = 0; j < m; ++j) {
      if (blocks[j] == n) continue;
      std::shared_ptr<const std::string> pin;
      ROOST_ASSIGN_OR_RETURN(DataBlock block, LoadBlock(blocks[j], &pin));
      std::string_view view;
      switch (block.Get(group[j], options_.use_hash_index, &view)) {
        case DataBlock::kFound:
          results[base + j] = {view, true, 0};
          pins->Hold(std::move(pin));
          break;
        case DataBlock::kNotFound:
          break;
        case DataBlock::kCorrupt:
          return CorruptionError(path(),
                                 StrCat("bad entry in data block ", blocks[j]));
      }
    }
  }
  return absl::OkStatus();
}

size_t BlockTable::RequestPages(std::span<const std::string_view> keys) const {
  if (file_->mode() != LoadMode::kMmap) return 0;
  const uint64_t n = footer_.num_data_blocks;
  const char* base = file_->data().data();
  PageRequests pages;
  for (const std::string_view key : keys) {
    if (key.size() > footer_.max_key_length) continue;
    if (filter_in_use_ != nullptr &&
        !filter_in_use_->MayContain(FilterHash(key))) {
      continue;
    }
    const absl::StatusOr<uint64_t> block = FindBlock(key);
    if (!block.ok() || *block >= n) continue;
    pages.Add(base + block_offsets_[*block],
              block_offsets_[*block + 1] - block_offsets_[*block]);
  }
  return pages.Issue();
}

TableProperties BlockTable::properties() const {
  const BlockTableFooter& f = footer_;
  TableProperties p;
  p.format_version = StrCat(f.major_version, ".", f.minor_version);
  p.num_keys = f.num_entries;
  p.max_key_length = f.max_key_length;
  p.key_bytes = f.raw_key_bytes;
  p.value_bytes = f.raw_value_bytes;
  return p;
}

std::string BlockTable::Describe() const {
  std::string out;
  auto line = [&out](std::string_view name, const auto& value) {
    AppendDescribeLine(&out, name, value);
  };
  const BlockTableFooter& f = footer_;
  const uint64_t raw = f.raw_key_bytes + f.raw_value_bytes;
  line("format", fmt::format("block {}.{}", f.major_version, f.minor_version));
  line("file size", fmt::format("{} bytes", f.file_size));
  line("keys", f.num_entries);
  line("data blocks", f.num_data_blocks);
  line("block size", fmt::format("{} bytes (target)", f.block_size));
  line("restart interval", f.restart_interval);
  line("hash index", f.hash_index ? "yes" : "no");
  line("compression", CompressionName(f.compression));
  line("compression ratio",
       fmt::format("{:.3f} (file / raw key+value bytes)",
                   raw ? static_cast<double>(f.file_size) / raw : 0.0));
  line("index search", IndexSearchName(f.index_search));
  line("index keys",
       fmt::format("{} (coefficient of variation {:.3f})",
                   f.is_uniform ? "uniform" : "not uniform", f.uniformity_cv));
  line("longest key", fmt::format("{} bytes", f.max_key_length));
  if (filter_) {
    line("filter",
         fmt::format(
             "bloom, {} bytes, {:.2f} bits a key ({} asked), {} "
             "probes, {:.3f}% false positives expected",
             filter_->size_bytes(),
             f.num_entries ? 8.0 * filter_->size_bytes() / f.num_entries : 0.0,
             filter_->bits_per_key(), filter_->num_probes(),
             100 * FilterFalsePositiveRate(f.num_entries, filter_->num_lines(),
                                           filter_->num_probes())));
  } else {
    line("filter", "none");
  }
  return out;
}

std::unique_ptr<TableIterator> BlockTable::NewIterator() const {
  return std::unique_ptr<TableIterator>(new Iterator(this));
}

bool BlockTable::Iterator::LoadBlock(uint64_t index) {
  block_index_ = index;
  entry_.reset();
  block_.reset();
  auto block = table_->LoadBlock(index, &pin_);
  if (!block.ok()) {
    status_ = block.status();
    valid_ = false;
    return false;
  }
  block_.emplace(*block);
  entry_.emplace(*block_);
  return true;
}

void BlockTable::Iterator::SkipExhaustedBlocks() {
  while (!entry_->Valid()) {
    if (entry_->corrupt()) {
      status_ = CorruptionError(
          table_->path(), StrCat("bad entry in data block ", block_index_));
      valid_ = false;
      return;
    }
    if (block_index_ + 1 >= table_->footer_.num_data_blocks) {
      valid_ = false;
      return;
    }
    if (!LoadBlock(block_index_ + 1)) return;
    entry_->SeekToFirst();
  }
  valid_ = true;
}

void BlockTable::Iterator::SeekToFirst() {
  status_ = absl::OkStatus();
  valid_ = false;
  if (table_->footer_.num_data_blocks == 0 || !LoadBlock(0)) return;
  entry_->SeekToFirst();
  SkipExhaustedBlocks();
}

void BlockTable::Iterator::Seek(std::string_view target) {
  status_ = absl::OkStatus();
  valid_ = false;
  auto i = table_->FindBlock(target);
  if (!i.ok()) {
    status_ = i.status();
    return;
  }
  if (*i >= table_->footer_.num_data_blocks || !LoadBlock(*i)) return;
  entry_->Seek(target);
  SkipExhaustedBlocks();
}

void BlockTable::Iterator::Next() {
  entry_->Next();
  SkipExhaustedBlocks();
}

}  // namespace roost
