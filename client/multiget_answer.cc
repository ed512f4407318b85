#include "client/multiget_answer.h"

#include <cstdint>

#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

absl::Status Malformed(std::string_view what) {
  return absl::DataLossError(StrCat("malformed MultiGet answer: ", what));
}

// Checks that `missing` rises and stays below `keys`.
absl::Status CheckMissing(const v1::MultiGetResponse& response, size_t keys) {
  int64_t last = -1;
  for (uint32_t i : response.missing()) {
    if (static_cast<int64_t>(i) <= last || i >= keys) {
      return Malformed(StrCat("it names key ", i, " missing, ",
                              i >= keys ? StrCat("of ", keys, " keys")
                                        : std::string("out of order")));
    }
    last = i;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadMultiGetAnswer(
    const v1::MultiGetResponse& response, size_t keys,
    absl::FunctionRef<void(size_t, bool, std::string_view)> emit) {
  const bool packed =
      response.packed_sizes_size() > 0 || response.packed_width() > 0 ||
      !response.packed_values().empty() || response.missing_size() > 0;
  if (!packed) {
    if (static_cast<size_t>(response.results_size()) != keys) {
      return Malformed(
          StrCat(response.results_size(), " results for ", keys, " keys"));
    }
    for (size_t i = 0; i < keys; ++i) {
      const v1::GetResponse& r = response.results(static_cast<int>(i));
      emit(i, r.found(), r.value());
    }
    return absl::OkStatus();
  }
  if (response.results_size() > 0) {
    return Malformed("results in both forms at once");
  }
  ROOST_RETURN_IF_ERROR(CheckMissing(response, keys));
  const std::string_view data = response.packed_values();
  const uint64_t width = response.packed_width();
  if (width > 0) {
    // Fixed-width values: the found ones, one after another.
    const uint64_t found =
        keys - static_cast<uint64_t>(response.missing_size());
    if (response.packed_sizes_size() > 0 || found * width != data.size()) {
      return Malformed(StrCat("the packed values are ", data.size(),
                              " bytes, where ", found, " values of ", width,
                              " were expected"));
    }
    size_t next_missing = 0, offset = 0;
    for (size_t i = 0; i < keys; ++i) {
      if (next_missing < static_cast<size_t>(response.missing_size()) &&
          response.missing(static_cast<int>(next_missing)) == i) {
        ++next_missing;
        emit(i, false, {});
        continue;
      }
      emit(i, true, data.substr(offset, width));
      offset += width;
    }
    return absl::OkStatus();
  }
  if (static_cast<size_t>(response.packed_sizes_size()) != keys) {
    return Malformed(
        StrCat(response.packed_sizes_size(), " sizes for ", keys, " keys"));
  }
  uint64_t total = 0;
  for (uint32_t size : response.packed_sizes()) total += size;
  if (total != data.size()) {
    return Malformed(StrCat("the packed values are ", data.size(),
                            " bytes, their sizes add up to ", total));
  }
  for (uint32_t i : response.missing()) {
    if (response.packed_sizes(static_cast<int>(i)) != 0) {
      return Malformed(StrCat("key ", i, " is missing with a value"));
    }
  }
  size_t next_missing = 0, offset = 0;
  for (size_t i = 0; i < keys; ++i) {
    const uint32_t size = response.packed_sizes(static_cast<int>(i));
    const bool found =
        !(next_missing < static_cast<size_t>(response.missing_size()) &&
          response.missing(static_cast<int>(next_missing)) == i);
    if (!found) ++next_missing;
    emit(i, found, data.substr(offset, size));
    offset += size;
  }
  return absl::OkStatus();
}

}  // namespace roost
