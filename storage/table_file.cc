#include "storage/table_file.h"

#include <filesystem>

#include "storage/block_format.h"
#include "storage/cuckoo_format.h"
#include "storage/data_dir.h"
#include "storage/file.h"
#include "util/str_cat.h"

namespace roost {

std::string_view TableFormatName(TableFormat format) {
  return format == TableFormat::kCuckoo ? "cuckoo" : "block";
}

absl::StatusOr<TableFormat> ParseTableFormat(std::string_view name) {
  if (name == "cuckoo") return TableFormat::kCuckoo;
  if (name == "block") return TableFormat::kBlock;
  return absl::InvalidArgumentError(
      StrCat("unknown format \"", name, "\" (expected cuckoo or block)"));
}

absl::StatusOr<TableFormat> DetectFormat(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  const std::string_view data = (*file)->data();
  if (data.substr(0, kCuckooMagic.size()) == kCuckooMagic) {
    return TableFormat::kCuckoo;
  }
  if (data.size() >= kBlockTableFooterSize &&
      data.substr(data.size() - kBlockTableFooterSize,
                  kBlockTableMagic.size()) == kBlockTableMagic) {
    return TableFormat::kBlock;
  }
  return absl::DataLossError(
      StrCat("corrupt table ", path, ": not a roost table (no magic number)"));
}

absl::StatusOr<std::unique_ptr<TableFile>> TableFile::Open(
    const std::string& path, bool verify_checksums) {
  TableReadOptions options;
  options.verify_checksums = verify_checksums;
  return Open(path, options);
}

absl::StatusOr<std::unique_ptr<TableFile>> TableFile::Open(
    const std::string& path, const TableReadOptions& read_options) {
  const bool verify_checksums = read_options.verify_checksums;
  auto format = DetectFormat(path);
  if (!format.ok()) return format.status();
  std::unique_ptr<TableFile> t(new TableFile());
  t->format_ = *format;
  if (*format == TableFormat::kCuckoo) {
    CuckooReadOptions options;
    options.verify_checksums = verify_checksums;
    options.load_mode = read_options.load_mode;
    auto table = CuckooTable::Open(path, options);
    if (!table.ok()) return table.status();
    t->cuckoo_ = std::move(*table);
  } else {
    BlockTableReadOptions options;
    options.verify_checksums = verify_checksums;
    options.load_mode = read_options.load_mode;
    auto table = BlockTable::Open(path, options);
    if (!table.ok()) return table.status();
    t->block_ = std::move(*table);
  }
  return t;
}

uint64_t TableFile::num_keys() const {
  return cuckoo_ ? cuckoo_->num_keys() : block_->num_entries();
}

uint32_t TableFile::max_key_length() const {
  return cuckoo_ ? cuckoo_->max_key_length() : block_->max_key_length();
}

std::string_view TableFile::file_data() const {
  return cuckoo_ ? cuckoo_->file_data() : block_->file_data();
}

absl::StatusOr<bool> TableFile::Get(std::string_view key,
                                    std::string* value) const {
  if (cuckoo_) {
    std::string_view v;
    if (!cuckoo_->Get(key, &v)) return false;
    value->assign(v);
    return true;
  }
  BlockTable::Value v;
  auto found = block_->Get(key, &v);
  if (!found.ok() || !*found) return found;
  value->assign(v.view());
  return true;
}

std::string TableFile::Describe() const {
  std::string out;
  auto line = [&](std::string_view name, const auto& value) {
    out += fmt::format("{:<18}{}\n", name, value);
  };
  if (cuckoo_) {
    const CuckooHeader& h = cuckoo_->header();
    line("format",
         fmt::format("cuckoo {}.{}", h.major_version, h.minor_version));
    line("file size", fmt::format("{} bytes", h.file_size));
    line("keys", h.num_keys);
    line("layout", CuckooLayoutName(h.layout));
    if (h.layout == CuckooLayout::kInline) {
      line("key width", h.key_width);
      line("value width", h.value_width);
    } else {
      line("key length",
           fmt::format("{}..{}", h.min_key_length, h.max_key_length));
      line("value length",
           fmt::format("{}..{}", h.min_value_length, h.max_value_length));
    }
    line("blocks", fmt::format("{} x {} buckets of {} bytes", h.num_blocks,
                               h.buckets_per_block, h.bucket_size));
    line("hash functions", h.num_hashes);
    line("utilization", fmt::format("{:.4f} built, {:.4f} requested",
                                    h.built_utilization_ppm / 1e6,
                                    h.requested_utilization_ppm / 1e6));
    line("overflow bits", fmt::format("{} per block", h.overflow_bits));
    out += "probe counts      (keys found after N block probes)\n";
    for (int i = 0; i < h.num_hashes; ++i) {
      out += fmt::format(
          "  {:<16}{} ({:.2f}%)\n", i + 1, h.keys_per_hash[i],
          h.num_keys ? 100.0 * h.keys_per_hash[i] / h.num_keys : 0.0);
    }
    return out;
  }
  const BlockTableFooter& f = block_->footer();
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
