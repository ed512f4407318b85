#include "storage/version_check.h"

#include <filesystem>

#include "storage/data_dir.h"
#include "util/str_cat.h"

namespace roost {
namespace {

namespace fs = std::filesystem;

absl::Status Disagree(const std::string& manifest_path, std::string_view what,
                      const auto& manifest_says, const auto& file_has) {
  return absl::InvalidArgumentError(StrCat(manifest_path, ": says ", what, " ",
                                           manifest_says,
                                           "; the table file has ", file_has));
}

// Step 4 of the header comment.
absl::Status CheckAgainstFile(const std::string& manifest_path,
                              const Manifest& m, const Table& file) {
  const std::string_view format = TableFormatName(file.format());
  if (m.format != format)
    return Disagree(manifest_path, "format", m.format, format);
  const TableProperties f = file.properties();
  if (m.format_version != f.format_version) {
    return Disagree(manifest_path, "format version", m.format_version,
                    f.format_version);
  }
  if (m.keys != f.num_keys) {
    return Disagree(manifest_path, "keys", m.keys, f.num_keys);
  }
  if (f.key_bytes && m.key_bytes != *f.key_bytes) {
    return Disagree(manifest_path, "key bytes", m.key_bytes, *f.key_bytes);
  }
  if (f.value_bytes && m.value_bytes != *f.value_bytes) {
    return Disagree(manifest_path, "value bytes", m.value_bytes,
                    *f.value_bytes);
  }
  if (f.num_keys > 0) {
    const uint64_t min_key_length = f.min_key_length.value_or(0);
    // The MANIFEST gives a key width exactly when every key has one length.
    const bool one_length =
        f.key_width.has_value() ||
        (f.min_key_length && *f.min_key_length == f.max_key_length);
    if (m.key_width) {
      if (f.max_key_length != *m.key_width ||
          (f.key_width && *f.key_width != *m.key_width) ||
          (f.min_key_length && *f.min_key_length != *m.key_width)) {
        return Disagree(manifest_path, "key width", *m.key_width,
                        StrCat("keys of ", min_key_length, " to ",
                               f.max_key_length, " bytes"));
      }
    } else if (one_length) {
      return Disagree(manifest_path, "key width",
                      "none (keys of several lengths)",
                      StrCat("keys of exactly ", f.max_key_length, " bytes"));
    }
    if (m.value_width && f.value_width && *m.value_width != *f.value_width) {
      return Disagree(manifest_path, "value width", *m.value_width,
                      *f.value_width);
    }
    // Where the file records no key bytes (checked exactly above), they
    // lie between its shortest and longest keys'.
    if (!f.key_bytes && f.min_key_length &&
        (m.key_bytes < f.num_keys * min_key_length ||
         m.key_bytes > f.num_keys * f.max_key_length)) {
      return Disagree(manifest_path, "key bytes", m.key_bytes,
                      StrCat(f.num_keys, " keys of ", min_key_length, " to ",
                             f.max_key_length, " bytes"));
    }
  }
  if (m.max_key_length && *m.max_key_length != f.max_key_length) {
    return Disagree(manifest_path, "longest key", *m.max_key_length,
                    f.max_key_length);
  }
  if (m.max_value_length && f.max_value_length &&
      *m.max_value_length != *f.max_value_length) {
    return Disagree(manifest_path, "longest value", *m.max_value_length,
                    *f.max_value_length);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OpenedVersion> OpenVersion(const std::string& dir,
                                          const VersionOpenOptions& options) {
  OpenedVersion out;
  // 1. The directory's name and its table's.
  const fs::path path = fs::path(dir).lexically_normal();
  const fs::path version_dir = path.has_filename() ? path : path.parent_path();
  const std::string name = version_dir.filename().string();
  const auto version = ParseVersionDirName(name);
  if (!version) {
    return absl::InvalidArgumentError(
        StrCat(dir, " is not a version directory (expected a name such as ",
               VersionDirName(1), ")"));
  }
  out.version = *version;
  out.table = version_dir.parent_path().filename().string();
  if (absl::Status s = ValidateTableName(out.table); !s.ok()) {
    return absl::InvalidArgumentError(
        StrCat(dir, " is not in a table directory: ", s.message()));
  }

  // 2. The MANIFEST names this table and version.
  const std::string manifest_path =
      (version_dir / std::string(kManifestName)).string();
  auto manifest = ReadManifest(manifest_path);
  if (!manifest.ok()) return manifest.status();
  out.manifest = std::move(*manifest);
  const Manifest& m = out.manifest;
  if (m.table != out.table || m.version != out.version) {
    return absl::InvalidArgumentError(
        StrCat(manifest_path, ": is for table \"", m.table, "\" version ",
               m.version, ", not \"", out.table, "\" version ", out.version));
  }

  // 3. It lists table.sst, which is all there.
  if (m.files.size() != 1 || m.files[0].name != kTableFileName) {
    return absl::InvalidArgumentError(
        StrCat(manifest_path, ": lists ", m.files.size(),
               " files; a version holds exactly one, ", kTableFileName));
  }
  const std::string table_path =
      (version_dir / std::string(kTableFileName)).string();
  std::error_code ec;
  const uint64_t size = fs::file_size(table_path, ec);
  if (ec == std::errc::no_such_file_or_directory ||
      (!ec && size < m.files[0].size)) {
    return absl::UnavailableError(
        StrCat("incomplete version: ", table_path, " has ", ec ? 0 : size,
               " of the ", m.files[0].size, " bytes its MANIFEST lists"));
  }
  if (!ec && size != m.files[0].size) {
    return Disagree(manifest_path, StrCat(kTableFileName, " size"),
                    m.files[0].size, size);
  }

  // 4. The table file opens and agrees.
  auto file = Table::Open(table_path, options.read);
  if (!file.ok()) return file.status();
  out.file = std::move(*file);
  if (out.file->file_data().size() != m.files[0].size) {
    // Changed between the stat and the mapping.
    return absl::UnavailableError(
        StrCat("incomplete version: ", table_path, " changed while opened"));
  }
  if (absl::Status s = CheckAgainstFile(manifest_path, m, *out.file); !s.ok()) {
    return s;
  }

  // 5. The whole-file checksum.
  if (options.check_file_checksum) {
    auto sum = ChecksumFile(table_path);
    if (!sum.ok()) return sum.status();
    if (*sum != m.files[0].xxh3) {
      return absl::DataLossError(
          StrCat(table_path, ": checksum disagrees with the MANIFEST"));
    }
  }
  return out;
}

}  // namespace roost
