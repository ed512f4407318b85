#include "loader/sharded_version.h"

#include <fmt/format.h>

#include "storage/partition.h"
#include "storage/version_check.h"
#include "util/str_cat.h"

namespace roost {

std::optional<Manifest> ShardedManifest(const ResolvedTable& resolved) {
  if (!resolved.version_dir) return std::nullopt;
  auto m = ReadManifest(StrCat(*resolved.version_dir, "/", kManifestName));
  if (!m.ok() || m->shards == 0) return std::nullopt;
  return *std::move(m);
}

absl::StatusOr<std::string> DescribeShards(const std::string& version_dir,
                                           const Manifest& m) {
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
  for (size_t i = 0; i < m.files.size(); ++i) {
    const ManifestFile& f = m.files[i];
    auto table = Table::Open(StrCat(version_dir, "/", f.name),
                             {.verify_checksums = false});
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

absl::StatusOr<std::string> VerifyShards(const std::string& version_dir,
                                         const Manifest& manifest) {
  std::string out;
  uint64_t keys = 0;
  std::string format;
  for (uint32_t s = 0; s < manifest.shards; ++s) {
    VersionOpenOptions options;
    options.check_file_checksum = true;
    options.shard = s;
    auto version = OpenVersion(version_dir, options);
    if (!version.ok()) return version.status();
    const Table& t = *version->file;
    keys += t.num_keys();
    format = TableFormatName(t.format());
    out += fmt::format("{}/{}: ok (shard {}, {} table, {} keys)\n", version_dir,
                       version->file_name, s, format, t.num_keys());
  }
  out += fmt::format("{}: ok ({} shards, {} table, {} keys, MANIFEST agrees)\n",
                     version_dir, manifest.shards, format, keys);
  return out;
}

absl::StatusOr<const Table*> ShardRouter::TableFor(std::string_view key) {
  const uint32_t shard =
      PartitionOf(key, static_cast<uint32_t>(tables_.size()));
  if (!tables_[shard]) {
    VersionOpenOptions options;
    options.shard = shard;
    auto version = OpenVersion(dir_, options);
    if (!version.ok()) return version.status();
    tables_[shard] = std::move(version->file);
  }
  return tables_[shard].get();
}

}  // namespace roost
