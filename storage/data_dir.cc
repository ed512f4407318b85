#include "storage/data_dir.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "storage/str_cat.h"

namespace roost {

absl::Status ValidateTableName(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= 128 && name[0] != '.' &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                           c == '-';
                  });
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat("bad table name \"", name,
             "\": use 1 to 128 letters, digits, '.', '_' or '-', not starting "
             "with '.'"));
}

std::string VersionDirName(uint64_t version) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "v%06llu",
                static_cast<unsigned long long>(version));
  return buf;
}

std::optional<uint64_t> ParseVersionDirName(std::string_view name) {
  if (name.size() < 2 || name[0] != 'v') return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] =
      std::from_chars(name.data() + 1, name.data() + name.size(), v);
  if (ec != std::errc() || end != name.data() + name.size() || v == 0) {
    return std::nullopt;
  }
  return v;
}

absl::StatusOr<std::vector<TableVersion>> ListVersions(
    const std::string& table_dir) {
  std::vector<TableVersion> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(table_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const auto v = ParseVersionDirName(name);
    if (!v || !entry.is_directory()) continue;
    const bool complete =
        std::filesystem::exists(entry.path() / std::string(kManifestName));
    out.push_back({*v, entry.path().string(), complete});
  }
  if (ec) {
    return absl::NotFoundError(
        StrCat("cannot list ", table_dir, ": ", ec.message()));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.version < b.version; });
  return out;
}

}  // namespace roost
