#include "storage/format.h"

#include "storage/coding.h"
#include "storage/hash.h"
#include "util/str_cat.h"

namespace roost {

void Region::EncodeTo(char* dst) const {
  EncodeFixed64(dst, offset);
  EncodeFixed64(dst + 8, size);
  EncodeFixed64(dst + 16, checksum);
}

Region Region::DecodeFrom(const char* src) {
  return Region{DecodeFixed64(src), DecodeFixed64(src + 8),
                DecodeFixed64(src + 16)};
}

absl::Status CorruptionError(std::string_view path, std::string_view what) {
  return absl::DataLossError(StrCat("corrupt table ", path, ": ", what));
}

absl::Status VerifyRegion(std::string_view path, std::string_view file,
                          const Region& region, std::string_view name) {
  if (!region.IsWithin(file.size())) {
    return CorruptionError(path, StrCat(name, " region out of bounds"));
  }
  const std::string_view bytes = region.In(file);
  if (Checksum64(bytes.data(), bytes.size()) != region.checksum) {
    return CorruptionError(path, StrCat(name, " checksum mismatch"));
  }
  return absl::OkStatus();
}

}  // namespace roost
