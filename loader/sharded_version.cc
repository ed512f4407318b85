#include "loader/sharded_version.h"

#include <fmt/format.h>

#include <filesystem>

#include "storage/partition.h"
#include "storage/row/row_codec.h"
#include "storage/version/open_version.h"
#include "util/escape.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

namespace fs = std::filesystem;

std::string ShardPath(const std::string& version_dir, const ManifestFile& f) {
  return StrCat(version_dir, "/", f.name);
}

// Whether the file is there at all. One that cannot be looked at (a
// directory without search permission) counts as there: opening it says
// what is wrong.
bool Here(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  return ec ? ec != std::errc::no_such_file_or_directory
            : st.type() != fs::file_type::not_found;
}

std::string Incomplete(const std::string& path, uint64_t have, uint64_t size) {
  return StrCat("incomplete version: ", path, " has ", have, " of the ", size,
                " bytes its MANIFEST lists");
}

}  // namespace

std::optional<Manifest> ShardedManifest(const ResolvedTable& resolved) {
  if (!resolved.version_dir) return std::nullopt;
  auto m = ReadManifest(StrCat(*resolved.version_dir, "/", kManifestName));
  if (!m.ok() || m->shards == 0) return std::nullopt;
  return *std::move(m);
}

absl::StatusOr<ShardSelection> SelectShards(const std::string& version_dir,
                                            const Manifest& m,
                                            std::optional<uint32_t> shard) {
  ShardSelection selection;
  if (shard) {
    if (*shard >= m.shards) {
      return absl::FailedPreconditionError(
          StrCat(version_dir, " has ", m.shards, " shards, 0 to ", m.shards - 1,
                 "; there is no shard ", *shard));
    }
    selection.why = ShardSelection::Why::kFlag;
    selection.shard = *shard;
    return selection;
  }
  // A MANIFEST whose shards and files disagree is OpenVersion's to refuse
  // (as it does when it opens any shard of it).
  if (m.files.size() != m.shards) return selection;
  for (uint32_t s = 0; s < m.shards; ++s) {
    if (m.files[s].name != ShardFileName(s, m.shards)) return selection;
  }
  std::vector<uint32_t> here;
  std::optional<uint32_t> missing;
  for (uint32_t s = 0; s < m.files.size(); ++s) {
    if (Here(ShardPath(version_dir, m.files[s]))) {
      here.push_back(s);
    } else if (!missing) {
      missing = s;
    }
  }
  if (!missing) return selection;  // every file: kWhole
  if (here.empty()) {
    return absl::UnavailableError(
        StrCat("incomplete version: ", version_dir, " holds none of its ",
               m.files.size(), " shards' files (", m.files.front().name, " to ",
               m.files.back().name, ")"));
  }
  if (here.size() > 1) {
    // Not a server's copy either, which holds one.
    const ManifestFile& f = m.files[*missing];
    return absl::UnavailableError(
        StrCat(Incomplete(ShardPath(version_dir, f), 0, f.size),
               "; --shard I checks shard I's file alone"));
  }
  selection.why = ShardSelection::Why::kCopy;
  selection.shard = here.front();
  return selection;
}

absl::StatusOr<std::string> DescribeShards(const std::string& version_dir,
                                           const Manifest& m,
                                           const ShardSelection& selection) {
  std::string out;
  auto line = [&out](std::string_view name, const auto& value) {
    AppendDescribeLine(&out, name, value);
  };
  line("version", version_dir);
  line("format", StrCat(m.format, " ", m.format_version));
  line("shards", m.partition ? StrCat(m.shards, " (", m.partition->function,
                                      ", seed ", m.partition->seed, ")")
                             : StrCat(m.shards));
  line("keys", m.keys);
  uint64_t bytes = 0;
  for (const ManifestFile& f : m.files) bytes += f.size;
  line("file size", fmt::format("{} bytes (all shards)", bytes));
  for (uint32_t i = 0; i < m.files.size(); ++i) {
    const ManifestFile& f = m.files[i];
    if (!selection.Reads(i)) {
      line(StrCat("shard ", i),
           fmt::format("{}: {} ({} keys, {} bytes)", f.name,
                       selection.why == ShardSelection::Why::kFlag
                           ? StrCat("not read (--shard ", selection.shard, ")")
                           : std::string("not here"),
                       f.keys.value_or(0), f.size));
      continue;
    }
    const std::string path = ShardPath(version_dir, f);
    std::error_code ec;
    const uint64_t size = fs::file_size(path, ec);
    if (!ec && size < f.size) {
      return absl::UnavailableError(Incomplete(path, size, f.size));
    }
    auto table = Table::Open(path, {.verify_checksums = false});
    if (!table.ok()) {
      return absl::Status(table.status().code(),
                          StrCat("shard ", i, ": ", table.status().message()));
    }
    line(StrCat("shard ", i),
         fmt::format("{}: {} keys, {} bytes", f.name, (*table)->num_keys(),
                     (*table)->file_data().size()));
  }
  return out;
}

absl::Status CheckRows(const Table& table, const std::string& file,
                       const RowSchema& schema) {
  return table.ForEachPair([&](std::string_view key, std::string_view value) {
    if (absl::Status s = CheckRow(schema, value); !s.ok()) {
      return absl::DataLossError(StrCat(
          file, ": key ", PrintableKey(key),
          ": its value is not a row of the version's schema: ", s.message()));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::string> VerifyShards(const std::string& version_dir,
                                         const Manifest& manifest,
                                         const ShardSelection& selection) {
  std::string out;
  uint64_t keys = 0;
  std::string format;
  for (uint32_t s = 0; s < manifest.shards; ++s) {
    if (!selection.Reads(s)) continue;
    VersionOpenOptions options;
    options.check_file_checksum = true;
    options.shard = s;
    auto version = OpenVersion(version_dir, options);
    if (!version.ok()) return version.status();
    const Table& t = *version->file;
    if (manifest.schema) {
      ROOST_RETURN_IF_ERROR(CheckRows(
          t, StrCat(version_dir, "/", version->file_name), *manifest.schema));
    }
    keys += t.num_keys();
    format = TableFormatName(t.format());
    out +=
        fmt::format("{}/{}: ok (shard {}, {} table, {} keys{})\n", version_dir,
                    version->file_name, s, format, t.num_keys(),
                    manifest.schema ? ", every value a row of its schema" : "");
  }
  const uint32_t one = selection.shard;
  switch (selection.why) {
    case ShardSelection::Why::kWhole:
      out += fmt::format(
          "{}: ok ({} shards, {} table, {} keys, MANIFEST agrees)\n",
          version_dir, manifest.shards, format, keys);
      break;
    case ShardSelection::Why::kCopy:
      out += fmt::format(
          "{}: ok (a copy of shard {} of {}, as a server keeps it: the other "
          "shards' files are not here; {} table, {} of the version's {} keys, "
          "MANIFEST agrees)\n",
          version_dir, one, manifest.shards, format, keys, manifest.keys);
      break;
    case ShardSelection::Why::kFlag:
      out += fmt::format(
          "{}: ok (shard {} of {} (--shard {}); {} table, {} of the version's "
          "{} keys, MANIFEST agrees)\n",
          version_dir, one, manifest.shards, one, format, keys, manifest.keys);
      break;
  }
  return out;
}

uint32_t ShardRouter::ShardOf(std::string_view key) const {
  return PartitionOf(key, static_cast<uint32_t>(tables_.size()));
}

std::string ShardRouter::WhyNotRead(uint32_t s) const {
  const std::string where = StrCat("in shard ", s, " of ", tables_.size());
  if (selection_.why == ShardSelection::Why::kFlag) {
    return StrCat(where, ", not read (--shard ", selection_.shard, ")");
  }
  return StrCat(where, ", whose file is not in ", dir_, " (it holds shard ",
                selection_.shard, ")");
}

absl::StatusOr<const Table*> ShardRouter::TableFor(std::string_view key) {
  const uint32_t shard = ShardOf(key);
  if (!tables_[shard]) {
    VersionOpenOptions options;
    options.read = read_;
    options.shard = shard;
    auto version = OpenVersion(dir_, options);
    if (!version.ok()) return version.status();
    tables_[shard] = std::move(version->file);
  }
  return tables_[shard].get();
}

}  // namespace roost
