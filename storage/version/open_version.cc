#include "storage/version/open_version.h"

#include <filesystem>

#include "storage/partition.h"
#include "storage/version/data_dir.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

namespace fs = std::filesystem;

absl::Status Disagree(const std::string& manifest_path, std::string_view what,
                      const auto& manifest_says, const auto& file_has,
                      std::string_view file_label = "the table file") {
  return absl::InvalidArgumentError(StrCat(manifest_path, ": says ", what, " ",
                                           manifest_says, "; ", file_label,
                                           " has ", file_has));
}

// Step 3 for a sharded version: its shard fields agree with each other.
absl::Status CheckShardLayout(const std::string& manifest_path,
                              const Manifest& m) {
  if (m.partition->function != kPartitionFunction ||
      m.partition->seed != kPartitionSeed) {
    return absl::FailedPreconditionError(
        StrCat(manifest_path, ": unsupported partition function \"",
               m.partition->function, "\" with seed ", m.partition->seed,
               " (this build knows \"", kPartitionFunction, "\" with seed ",
               kPartitionSeed, ")"));
  }
  if (m.files.size() != m.shards) {
    return absl::InvalidArgumentError(
        StrCat(manifest_path, ": lists ", m.files.size(), " files for ",
               m.shards, " shards; a sharded version holds one per shard"));
  }
  uint64_t keys = 0, key_bytes = 0, value_bytes = 0;
  for (uint32_t i = 0; i < m.shards; ++i) {
    const ManifestFile& f = m.files[i];
    const std::string expected = ShardFileName(i, m.shards);
    if (*f.shard != i || f.name != expected) {
      return absl::InvalidArgumentError(StrCat(
          manifest_path, ": shard ", i, ": lists file ", f.name, " of shard ",
          *f.shard, " where ", expected, " of shard ", i, " belongs"));
    }
    keys += *f.keys;
    key_bytes += *f.key_bytes;
    value_bytes += *f.value_bytes;
  }
  if (keys != m.keys || key_bytes != m.key_bytes ||
      value_bytes != m.value_bytes) {
    return absl::InvalidArgumentError(StrCat(
        manifest_path, ": its shards hold ", keys, " keys of ", key_bytes,
        " bytes and values of ", value_bytes, " bytes; the version says ",
        m.keys, ", ", m.key_bytes, " and ", m.value_bytes));
  }
  return absl::OkStatus();
}

// Step 4 of the header comment. For a shard, `m` holds the shard's figures
// (keys, key and value bytes) and the version's widths and longest key and
// value, which bound the shard's.
absl::Status CheckAgainstFile(const std::string& manifest_path,
                              const Manifest& m, const Table& file,
                              bool shard = false,
                              std::string_view file_label = "the table file") {
  auto Disagree = [&](std::string_view what, const auto& manifest_says,
                      const auto& file_has) {
    return roost::Disagree(manifest_path, what, manifest_says, file_has,
                           file_label);
  };
  const std::string_view format = TableFormatName(file.format());
  if (m.format != format) return Disagree("format", m.format, format);
  const TableProperties f = file.properties();
  if (m.format_version != f.format_version) {
    return Disagree("format version", m.format_version, f.format_version);
  }
  if (m.keys != f.num_keys) {
    return Disagree("keys", m.keys, f.num_keys);
  }
  if (f.key_bytes && m.key_bytes != *f.key_bytes) {
    return Disagree("key bytes", m.key_bytes, *f.key_bytes);
  }
  if (f.value_bytes && m.value_bytes != *f.value_bytes) {
    return Disagree("value bytes", m.value_bytes, *f.value_bytes);
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
        return Disagree("key width", *m.key_width,
                        StrCat("keys of ", min_key_length, " to ",
                               f.max_key_length, " bytes"));
      }
    } else if (one_length && !shard) {
      // (One shard of keys of several lengths may hold keys of one.)
      return Disagree("key width", "none (keys of several lengths)",
                      StrCat("keys of exactly ", f.max_key_length, " bytes"));
    }
    if (m.value_width && f.value_width && *m.value_width != *f.value_width) {
      return Disagree("value width", *m.value_width, *f.value_width);
    }
    // Where the file records no key bytes (checked exactly above), they
    // lie between its shortest and longest keys'.
    if (!f.key_bytes && f.min_key_length &&
        (m.key_bytes < f.num_keys * min_key_length ||
         m.key_bytes > f.num_keys * f.max_key_length)) {
      return Disagree("key bytes", m.key_bytes,
                      StrCat(f.num_keys, " keys of ", min_key_length, " to ",
                             f.max_key_length, " bytes"));
    }
  }
  // A shard's longest key and value are at most the version's.
  if (m.max_key_length && (shard ? f.max_key_length > *m.max_key_length
                                 : *m.max_key_length != f.max_key_length)) {
    return Disagree("longest key", *m.max_key_length, f.max_key_length);
  }
  if (m.max_value_length && f.max_value_length &&
      (shard ? *f.max_value_length > *m.max_value_length
             : *m.max_value_length != *f.max_value_length)) {
    return Disagree("longest value", *m.max_value_length, *f.max_value_length);
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

  // 3. It lists table.sst, or one file per shard, and the file to open is
  // all there.
  const ManifestFile* entry = &m.files[0];
  if (m.shards == 0) {
    if (m.files.size() != 1 || m.files[0].name != kTableFileName) {
      return absl::InvalidArgumentError(
          StrCat(manifest_path, ": lists ", m.files.size(),
                 " files; a version holds exactly one, ", kTableFileName));
    }
  } else {
    ROOST_RETURN_IF_ERROR(CheckShardLayout(manifest_path, m));
    if (!options.shard) {
      return absl::FailedPreconditionError(
          StrCat(dir, " is a sharded version of ", m.shards,
                 " shards; open one of its shards (roost-server --shard I)"));
    }
    if (*options.shard >= m.shards) {
      return absl::FailedPreconditionError(
          StrCat(dir, " has ", m.shards, " shards, 0 to ", m.shards - 1,
                 "; there is no shard ", *options.shard));
    }
    out.shard = *options.shard;
    entry = &m.files[*options.shard];
  }
  out.file_name = entry->name;
  const std::string label =
      m.shards == 0 ? std::string("the table file")
                    : StrCat("shard ", *out.shard, "'s file ", entry->name);
  const std::string table_path = (version_dir / entry->name).string();
  std::error_code ec;
  const uint64_t size = fs::file_size(table_path, ec);
  if (ec == std::errc::no_such_file_or_directory ||
      (!ec && size < entry->size)) {
    return absl::UnavailableError(
        StrCat("incomplete version: ", table_path, " has ", ec ? 0 : size,
               " of the ", entry->size, " bytes its MANIFEST lists"));
  }
  if (!ec && size != entry->size) {
    return Disagree(manifest_path, StrCat(entry->name, " size"), entry->size,
                    size, label);
  }

  // 4. The table file opens and agrees.
  auto file = Table::Open(table_path, options.read);
  if (!file.ok()) {
    if (m.shards == 0) return file.status();
    return absl::Status(file.status().code(), StrCat("shard ", *out.shard, ": ",
                                                     file.status().message()));
  }
  out.file = std::move(*file);
  if (out.file->file_data().size() != entry->size) {
    // Changed between the stat and the mapping.
    return absl::UnavailableError(
        StrCat("incomplete version: ", table_path, " changed while opened"));
  }
  if (m.shards == 0) {
    ROOST_RETURN_IF_ERROR(CheckAgainstFile(manifest_path, m, *out.file));
  } else {
    // The shard's own figures, and the version's bounds.
    Manifest shard_view;
    shard_view.format = m.format;
    shard_view.format_version = m.format_version;
    shard_view.keys = *entry->keys;
    shard_view.key_bytes = *entry->key_bytes;
    shard_view.value_bytes = *entry->value_bytes;
    shard_view.key_width = m.key_width;
    shard_view.value_width = m.value_width;
    shard_view.max_key_length = m.max_key_length;
    shard_view.max_value_length = m.max_value_length;
    ROOST_RETURN_IF_ERROR(CheckAgainstFile(
        StrCat(manifest_path, ": shard ", *out.shard), shard_view, *out.file,
        /*shard=*/true, label));
  }

  // 5. The whole-file checksum.
  if (options.check_file_checksum) {
    auto sum = ChecksumFile(table_path);
    if (!sum.ok()) return sum.status();
    if (*sum != entry->xxh3) {
      return absl::DataLossError(
          StrCat(table_path, ": checksum disagrees with the MANIFEST"));
    }
  }
  return out;
}

}  // namespace roost
