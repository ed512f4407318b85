#include "storage/version/data_dir.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "util/str_cat.h"

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
  if (ec != std::errc() || end != name.data() + name.size() || v == 0 ||
      VersionDirName(v) != name) {
    return std::nullopt;
  }
  return v;
}

std::optional<uint64_t> ParseVersionText(std::string_view text) {
  if (auto v = ParseVersionDirName(text)) return v;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v == 0) {
    return std::nullopt;
  }
  return v;
}

absl::StatusOr<std::vector<TableVersion>> ListVersions(
    const std::string& table_dir) {
  std::vector<TableVersion> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(table_dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::filesystem::path& path = it->path();
    const auto v = ParseVersionDirName(path.filename().string());
    std::error_code type_ec;
    if (!v || !it->is_directory(type_ec)) continue;
    TableVersion version{*v, path.string(), false, ""};
    // stat(2) the MANIFEST: ENOENT means incomplete; anything else (EACCES
    // on a directory without search permission) is a problem to report.
    struct stat st;
    const std::string manifest = (path / std::string(kManifestName)).string();
    if (::stat(manifest.c_str(), &st) == 0) {
      version.complete = S_ISREG(st.st_mode);
      if (!version.complete) {
        version.problem =
            StrCat("cannot open ", manifest, ": not a regular file");
      }
    } else if (errno != ENOENT) {
      version.problem =
          StrCat("cannot search ", path.string(), ": ", std::strerror(errno));
    }
    out.push_back(std::move(version));
  }
  if (ec) {
    std::string message = StrCat("cannot list ", table_dir, ": ", ec.message());
    if (ec == std::errc::permission_denied) {
      return absl::PermissionDeniedError(std::move(message));
    }
    return absl::NotFoundError(std::move(message));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.version < b.version; });
  return out;
}

absl::StatusOr<uint64_t> NextVersion(
    const std::vector<TableVersion>& versions) {
  if (versions.empty()) return 1;
  const uint64_t newest = versions.back().version;
  if (newest == std::numeric_limits<uint64_t>::max()) {
    return absl::FailedPreconditionError(StrCat(
        "no version number is left after ", VersionDirName(newest), " in ",
        std::filesystem::path(versions.back().path).parent_path().string()));
  }
  return newest + 1;
}

std::string VersionFingerprint(const std::string& version_dir) {
  std::string out;
  std::vector<std::string> paths = {version_dir,
                                    StrCat(version_dir, "/", kManifestName),
                                    StrCat(version_dir, "/", kTableFileName)};
  // A sharded version's files ("shard-0000-of-0004.sst", ...).
  std::vector<std::string> shard_files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(version_dir, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with("shard-")) shard_files.push_back(it->path().string());
  }
  std::sort(shard_files.begin(), shard_files.end());
  paths.insert(paths.end(), shard_files.begin(), shard_files.end());
  for (const std::string& path : paths) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      out += StrCat("-", errno, ";");
      continue;
    }
    out += StrCat(st.st_ino, ":", st.st_size, ":", st.st_mode, ":",
                  st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, ":",
                  st.st_ctim.tv_sec, ".", st.st_ctim.tv_nsec, ";");
  }
  return out;
}

absl::StatusOr<ResolvedTable> ResolveTablePath(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    if (!std::filesystem::exists(path, ec)) {
      return absl::NotFoundError(
          StrCat("cannot open ", path, ": No such file or directory"));
    }
    return ResolvedTable{path, std::nullopt};
  }
  std::filesystem::path dir(path);
  if (!std::filesystem::exists(dir / std::string(kManifestName), ec)) {
    // A table directory: its newest complete version.
    auto versions = ListVersions(path);
    if (!versions.ok()) return versions.status();
    std::optional<std::string> newest;
    for (const TableVersion& v : *versions) {
      if (v.complete) newest = v.path;
    }
    if (!newest) {
      return absl::NotFoundError(
          StrCat(path, " holds no table file, MANIFEST or complete version"));
    }
    dir = *newest;
  }
  return ResolvedTable{(dir / std::string(kTableFileName)).string(),
                       dir.string()};
}

}  // namespace roost
