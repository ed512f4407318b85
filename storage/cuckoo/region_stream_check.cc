#include "storage/cuckoo/region_stream_check.h"

#include <algorithm>

#include "storage/cuckoo/cuckoo_format.h"

namespace roost {
namespace {

// After the header, one after another, none wrapping around: as far as can
// be told before the file's size is known (CuckooHeader::Decode checks them
// against it at open).
bool InFileOrder(const std::array<Region, 3>& regions) {
  uint64_t end = kCuckooHeaderSize;
  for (const Region& r : regions) {
    if (r.offset < end || !r.IsWithin(UINT64_MAX)) return false;
    end = r.end();
  }
  return true;
}

}  // namespace

RegionStreamCheck::RegionStreamCheck()
    : checksum_(std::make_unique<StreamingChecksum>()) {}

RegionStreamCheck::~RegionStreamCheck() = default;

void RegionStreamCheck::Update(std::string_view bytes) {
  if (failed_ || bytes.empty()) return;
  const uint64_t at = seen_;
  seen_ += bytes.size();
  if (!have_regions_) {
    const size_t take =
        std::min<size_t>(bytes.size(), kCuckooHeaderSize - header_.size());
    header_.append(bytes.substr(0, take));
    if (header_.size() < kCuckooHeaderSize) return;
    const auto regions = CuckooHeader::RegionsOf(header_);
    if (!regions || !InFileOrder(*regions)) {
      failed_ = true;
      return;
    }
    regions_ = *regions;
    have_regions_ = true;
    header_.clear();
    header_.shrink_to_fit();
    HashRegions(bytes.substr(take), at + take);
    return;
  }
  HashRegions(bytes, at);
}

void RegionStreamCheck::HashRegions(std::string_view bytes, uint64_t at) {
  while (current_ < regions_.size() && !failed_) {
    const Region& r = regions_[current_];
    if (at < r.offset) {  // bytes between regions: none in a valid table
      const uint64_t skip = std::min<uint64_t>(r.offset - at, bytes.size());
      bytes.remove_prefix(skip);
      at += skip;
      if (at < r.offset) return;
    }
    const size_t n =
        static_cast<size_t>(std::min<uint64_t>(r.end() - at, bytes.size()));
    checksum_->Update(bytes.data(), n);
    bytes.remove_prefix(n);
    at += n;
    if (at < r.end()) return;
    // The region is whole (an empty one as soon as it is reached).
    if (checksum_->Digest() != r.checksum) failed_ = true;
    checksum_ = std::make_unique<StreamingChecksum>();
    ++current_;
  }
}

bool RegionStreamCheck::Passed() const {
  return !failed_ && have_regions_ && current_ == regions_.size() &&
         seen_ == regions_.back().end();
}

}  // namespace roost
