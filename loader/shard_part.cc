#include "loader/shard_part.h"

#include <fmt/format.h>

#include <charconv>

#include "loader/table_files.h"
#include "storage/partition.h"
#include "storage/version/data_dir.h"
#include "util/json.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// The whole of `text` as a number of four or more digits.
std::optional<uint32_t> Number(std::string_view text) {
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.size() < 4 || ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return n;
}

// What a shard's file says of its keys and values, back from its part.
FileFigures FiguresOf(const Manifest& part) {
  FileFigures f;
  f.keys = part.keys;
  f.key_fixed = part.key_width.has_value();
  f.value_fixed = part.value_width.has_value();
  f.key = part.key_width.value_or(0);
  f.value = part.value_width.value_or(0);
  f.key_bytes = part.key_bytes;
  f.value_bytes = part.value_bytes;
  f.max_key = part.max_key_length.value_or(0);
  f.max_value = part.max_value_length.value_or(0);
  return f;
}

}  // namespace

std::string ShardPartName(uint32_t shard, uint32_t shards) {
  return fmt::format("shard-{:04}-of-{:04}.json", shard, shards);
}

std::optional<ShardName> ParseShardName(std::string_view name,
                                        std::string_view suffix) {
  constexpr std::string_view kPrefix = "shard-", kOf = "-of-";
  if (!name.starts_with(kPrefix) || !name.ends_with(suffix)) {
    return std::nullopt;
  }
  name.remove_prefix(kPrefix.size());
  name.remove_suffix(suffix.size());
  const size_t of = name.find(kOf);
  if (of == std::string_view::npos) return std::nullopt;
  const std::optional<uint32_t> shard = Number(name.substr(0, of));
  const std::optional<uint32_t> shards = Number(name.substr(of + kOf.size()));
  if (!shard || !shards) return std::nullopt;
  // The one spelling ShardFileName gives: no "shard-00001-of-0004".
  if (fmt::format("{:04}-of-{:04}", *shard, *shards) != name) {
    return std::nullopt;
  }
  return ShardName{*shard, *shards};
}

std::string MakeShardPart(Manifest manifest) {
  manifest.build_time.reset();
  manifest.data_time.reset();
  return manifest.ToJson();
}

absl::StatusOr<Manifest> ParseShardPart(std::string_view text,
                                        std::string_view name,
                                        std::string_view table,
                                        uint64_t version) {
  const auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(
        StrCat("shard part ", name, ": ", what,
               " (it is written by roost-load build --shard; build that "
               "shard again)"));
  };
  absl::StatusOr<Manifest> part = Manifest::Parse(text);
  if (!part.ok()) return bad(std::string(part.status().message()));
  const std::optional<ShardName> named = ParseShardName(name, ".json");
  if (!named) return bad("not a shard part's name");
  if (part->table != table || part->version != version) {
    return bad(StrCat("it is of ", part->table, " version ", part->version,
                      ", not of ", table, " version ", version));
  }
  if (part->shards != named->shards || part->files.size() != 1 ||
      part->files[0].shard != named->shard ||
      part->files[0].name != ShardFileName(named->shard, named->shards) ||
      part->files[0].keys != part->keys ||
      part->files[0].key_bytes != part->key_bytes ||
      part->files[0].value_bytes != part->value_bytes) {
    return bad(StrCat("it does not describe ",
                      ShardFileName(named->shard, named->shards), " alone"));
  }
  return part;
}

absl::StatusOr<Manifest> MergeShardParts(const std::vector<Manifest>& parts) {
  if (parts.empty()) return absl::InvalidArgumentError("no shard parts");
  const Manifest& first = parts[0];
  Manifest m;
  m.table = first.table;
  m.version = first.version;
  m.format = first.format;
  m.format_version = first.format_version;
  m.shards = first.shards;
  m.partition = first.partition;
  m.build_options = first.build_options;
  m.loader = first.loader;
  m.schema = first.schema;
  FileFigures all;
  for (size_t s = 0; s < parts.size(); ++s) {
    const Manifest& p = parts[s];
    const auto disagree = [&](std::string_view what, std::string_view mine,
                              std::string_view theirs) {
      return absl::FailedPreconditionError(
          StrCat("shard ", s, " of ", m.table, " ", VersionDirName(m.version),
                 " was built with another ", what, " than shard 0 (", mine,
                 " against ", theirs,
                 "): the shards of a version are built with the same "
                 "options; build shard ",
                 s, " again with shard 0's"));
    };
    if (p.format != first.format) {
      return disagree("table format", p.format, first.format);
    }
    if (p.format_version != first.format_version) {
      return disagree("format version", p.format_version, first.format_version);
    }
    if (!p.partition || !first.partition ||
        p.partition->function != first.partition->function ||
        p.partition->seed != first.partition->seed) {
      const auto name = [](const std::optional<ManifestPartition>& q) {
        return q ? StrCat(q->function, " seed ", q->seed) : "none";
      };
      return disagree("partition function", name(p.partition),
                      name(first.partition));
    }
    if (p.build_options != first.build_options) {
      return disagree("set of build options", p.build_options.dump(),
                      first.build_options.dump());
    }
    if (p.schema != first.schema) {
      const auto name = [](const std::optional<RowSchema>& q) {
        return q ? DumpJson(q->ToJson(), false) : std::string("none");
      };
      return disagree("schema of rows", name(p.schema), name(first.schema));
    }
    if (p.loader != first.loader) {
      return disagree("roost-load", p.loader, first.loader);
    }
    all.Merge(FiguresOf(p));
    m.files.push_back(p.files[0]);
    m.inputs.insert(m.inputs.end(), p.inputs.begin(), p.inputs.end());
  }
  m.keys = all.keys;
  m.key_bytes = all.key_bytes;
  m.value_bytes = all.value_bytes;
  if (all.keys > 0 && all.key_fixed) {
    m.key_width = static_cast<uint32_t>(all.key);
  }
  if (all.keys > 0 && all.value_fixed) {
    m.value_width = static_cast<uint32_t>(all.value);
  }
  m.max_key_length = all.max_key;
  m.max_value_length = all.max_value;
  return m;
}

}  // namespace roost
