#include "loader/read_commands.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "loader/sharded_version.h"
#include "storage/partition.h"
#include "storage/row/row_codec.h"
#include "storage/row/row_schema.h"
#include "storage/table.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "storage/version/open_version.h"
#include "util/encoding.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// The MANIFEST of the version `resolved` names (std::nullopt for a bare
// table file), for its schema of rows.
absl::StatusOr<std::optional<Manifest>> VersionManifest(
    const ResolvedTable& resolved) {
  if (!resolved.version_dir) return std::optional<Manifest>();
  absl::StatusOr<Manifest> m =
      ReadManifest(*resolved.version_dir + "/" + std::string(kManifestName));
  if (!m.ok()) return m.status();
  return std::optional<Manifest>(*std::move(m));
}

// inspect's lines of a version of rows: its schema, a field a line, and
// what a forced publish changed.
std::string DescribeSchema(const Manifest& m) {
  std::string out;
  if (!m.schema) return out;
  const RowSchema& schema = *m.schema;
  AppendDescribeLine(&out, "schema",
                     StrCat(kRowEncoding, ", ", schema.size(),
                            schema.size() == 1 ? " field" : " fields",
                            " (docs/format/rows.md)"));
  for (const Field& f : schema.fields()) {
    std::string what(FieldTypeName(f.type));
    if (f.nullable) what += ", nullable";
    if (!f.default_value.is_null()) {
      what += StrCat(", default ", f.default_value.dump());
    }
    out += fmt::format("  {:<16}{}\n", f.name, what);
  }
  if (!m.schema_change.empty()) {
    std::string change = m.schema_change;
    for (size_t i = 0; (i = change.find('\n', i)) != std::string::npos;) {
      change.insert(i + 1, 18, ' ');
      i += 19;
    }
    AppendDescribeLine(&out, "schema_change", change);
  }
  return out;
}

// inspect, verify and get of a sharded version read the shards `shard`
// (--shard I) names, or those whose files are there (sharded_version.h); an
// unsharded version or a file is read whole whatever it says, as
// roost-server --shard serves one.
int RunInspect(const std::string& path, std::optional<uint32_t> shard) {
  auto resolved = ResolveTablePath(path);
  if (!resolved.ok()) return Fail(resolved.status());
  if (auto sharded = ShardedManifest(*resolved)) {
    auto selection = SelectShards(*resolved->version_dir, *sharded, shard);
    if (!selection.ok()) return Fail(selection.status());
    auto text = DescribeShards(*resolved->version_dir, *sharded, *selection);
    if (!text.ok()) return Fail(text.status());
    fmt::print("{}{}", *text, DescribeSchema(*sharded));
    return kExitOk;
  }
  auto manifest = VersionManifest(*resolved);
  if (!manifest.ok()) return Fail(manifest.status());
  auto table = Table::Open(resolved->file, {.verify_checksums = false});
  if (!table.ok()) return Fail(table.status());
  fmt::print("{:<18}{}\n", "file", resolved->file);
  fmt::print("{}", (*table)->Describe());
  if (*manifest) fmt::print("{}", DescribeSchema(**manifest));
  return kExitOk;
}

// A version directory gets the check the server makes before serving
// (OpenVersion), plus the whole-file checksum, of every shard of a sharded
// one; a bare file gets its own checksums.
int RunVerify(const std::string& path, std::optional<uint32_t> shard) {
  auto resolved = ResolveTablePath(path);
  if (!resolved.ok()) return Fail(resolved.status());
  if (auto sharded = ShardedManifest(*resolved)) {
    auto selection = SelectShards(*resolved->version_dir, *sharded, shard);
    if (!selection.ok()) return Fail(selection.status());
    auto report = VerifyShards(*resolved->version_dir, *sharded, *selection);
    if (!report.ok()) return Fail(report.status());
    fmt::print("{}", *report);
    return kExitOk;
  }
  std::unique_ptr<Table> table;
  std::optional<RowSchema> schema;
  if (resolved->version_dir) {
    VersionOpenOptions options;
    options.check_file_checksum = true;
    auto version = OpenVersion(*resolved->version_dir, options);
    if (!version.ok()) return Fail(version.status());
    table = std::move(version->file);
    schema = std::move(version->manifest.schema);
  } else {
    auto file = Table::Open(resolved->file);
    if (!file.ok()) return Fail(file.status());
    table = std::move(*file);
  }
  if (schema) {
    if (absl::Status s = CheckRows(*table, resolved->file, *schema); !s.ok()) {
      return Fail(s);
    }
  }
  fmt::print("{}: ok ({} table, {} keys{}{})\n", resolved->file,
             TableFormatName(table->format()), table->num_keys(),
             resolved->version_dir ? ", MANIFEST agrees" : "",
             schema ? ", every value a row of its schema" : "");
  return kExitOk;
}

struct GetFlags {
  std::string path;
  std::vector<std::string> keys;  // as given, in key_encoding
  std::string key_encoding = "raw";
  std::string value_encoding = "raw";
  std::optional<uint32_t> shard;
};

// Looks keys up offline, with roost-get's flags, output and exit codes:
// "KEY<TAB>VALUE" on stdout for a key found (KEY as given, VALUE in
// --value-encoding), `roost-load: "KEY": not found` on stderr otherwise.
// A key of a shard not read (a server's copy, --shard) is neither: it is
// named on stderr, and the exit code is 65.
int RunGet(const GetFlags& f) {
  std::vector<std::string> keys;
  for (const std::string& text : f.keys) {
    const std::string what = StrCat("key ", PrintableKey(text));
    absl::StatusOr<std::string> key =
        f.key_encoding == "hex"      ? DecodeHex(text, what)
        : f.key_encoding == "base64" ? DecodeBase64(text, what)
                                     : absl::StatusOr<std::string>(text);
    if (!key.ok()) return Usage(key.status());
    keys.push_back(*std::move(key));
  }
  auto resolved = ResolveTablePath(f.path);
  if (!resolved.ok()) return Fail(resolved.status());
  // One block cache for every file read (every shard's), as a server has
  // one: small, since each key is read once.
  TableReadOptions read;
  read.block_cache = std::make_shared<BlockCache>(kDefaultBlockCacheBytes);
  // A sharded version: each key from its shard's file.
  std::optional<ShardRouter> router;
  std::unique_ptr<Table> table;
  // A version of rows: each value printed as its JSON object (with
  // --value-encoding raw, the default).
  std::optional<RowSchema> schema;
  if (auto sharded = ShardedManifest(*resolved)) {
    auto selection = SelectShards(*resolved->version_dir, *sharded, f.shard);
    if (!selection.ok()) return Fail(selection.status());
    router.emplace(*resolved->version_dir, *sharded, *selection, read);
    schema = sharded->schema;
  } else {
    auto manifest = VersionManifest(*resolved);
    if (!manifest.ok()) return Fail(manifest.status());
    if (*manifest) schema = (*manifest)->schema;
    auto file = Table::Open(resolved->file, read);
    if (!file.ok()) return Fail(file.status());
    table = std::move(*file);
  }
  const bool as_rows = schema.has_value() && f.value_encoding == "raw";
  int code = kExitOk;
  bool unread = false;  // a key of a shard not read
  std::string value;
  for (size_t i = 0; i < keys.size(); ++i) {
    const Table* t = table.get();
    if (router) {
      if (const uint32_t s = router->ShardOf(keys[i]); !router->Reads(s)) {
        std::fflush(stdout);
        fmt::print(stderr, "roost-load: {}: {}\n", PrintableKey(f.keys[i]),
                   router->WhyNotRead(s));
        unread = true;
        continue;
      }
      auto routed = router->TableFor(keys[i]);
      if (!routed.ok()) return Fail(routed.status());
      t = *routed;
    }
    auto found = t->Get(keys[i], &value);
    if (!found.ok()) return Fail(found.status());
    if (*found && as_rows) {
      if (absl::Status s = CheckRow(*schema, value); !s.ok()) {
        return Fail(absl::DataLossError(
            StrCat(f.path, ": key ", PrintableKey(f.keys[i]),
                   ": its value is not a row of the version's schema: ",
                   s.message())));
      }
      // As roost-get --rows prints it.
      OrderedJson line;
      line["key"] = f.keys[i];
      line["row"] = RowToJson(*schema, value);
      const std::string json = DumpJson(line, false);
      std::fwrite(json.data(), 1, json.size(), stdout);
      std::fputc('\n', stdout);
    } else if (*found) {
      const absl::string_view v(value.data(), value.size());
      const std::string out =
          f.value_encoding == "hex"      ? absl::BytesToHexString(v)
          : f.value_encoding == "base64" ? absl::Base64Escape(v)
                                         : value;
      // Keys and values are bytes: write them whole, zero bytes included.
      std::fwrite(f.keys[i].data(), 1, f.keys[i].size(), stdout);
      std::fputc('\t', stdout);
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fputc('\n', stdout);
    } else {
      std::fflush(stdout);  // keep the output in key order on a terminal
      fmt::print(stderr, "roost-load: {}: not found\n",
                 PrintableKey(f.keys[i]));
      code = kExitNotFound;
    }
  }
  return unread ? kExitBadInput : code;
}

// --shard of inspect, verify and get: the flag bound to `shard`, and
// whether it was given.
void AddShardFlag(CLI::App* command, uint32_t& shard) {
  command
      ->add_option(
          "--shard", shard,
          "Of a sharded version, read shard I's file alone (the others need "
          "not be there). Without it, the shards' files that are there are "
          "read: all of them, or the one a server's copy holds (roost-server "
          "--shard keeps the MANIFEST and its shard's file); an unsharded "
          "version is read whole either way")
      ->type_name("I")
      ->check(CLI::Range(0u, kMaxShards - 1));
}

std::optional<uint32_t> ShardOf(const CLI::App* command, uint32_t shard) {
  return command->count("--shard") > 0 ? std::optional<uint32_t>(shard)
                                       : std::nullopt;
}

// inspect and verify: a table and --shard.
struct TableFlags {
  std::string path;
  uint32_t shard = 0;
};

}  // namespace

Command AddInspectCommand(CLI::App& app) {
  auto f = std::make_shared<TableFlags>();
  CLI::App* inspect = app.add_subcommand(
      "inspect", "Print a table's header and statistics (FILE or DIR).");
  inspect
      ->add_option("table", f->path,
                   "Table file, version directory, or table directory "
                   "(its newest version)")
      ->required();
  AddShardFlag(inspect, f->shard);
  inspect->footer(
      "Examples:\n"
      "  roost-load inspect /srv/roost/users            # its newest version\n"
      "  roost-load inspect users.sst");
  return {inspect, [inspect, f] {
            return RunInspect(f->path, ShardOf(inspect, f->shard));
          }};
}

Command AddVerifyCommand(CLI::App& app) {
  auto f = std::make_shared<TableFlags>();
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check every checksum of a table, and its MANIFEST when given a "
      "directory; exit 0 only if all hold.");
  verify->add_option("table", f->path, "Table file or directory")->required();
  AddShardFlag(verify, f->shard);
  verify->footer(
      "Examples:\n"
      "  roost-load verify /srv/roost/users/v000003\n"
      "  roost-load verify users.sst");
  return {verify, [verify, f] {
            return RunVerify(f->path, ShardOf(verify, f->shard));
          }};
}

Command AddGetCommand(CLI::App& app) {
  auto g = std::make_shared<GetFlags>();
  auto shard = std::make_shared<uint32_t>(0);
  CLI::App* get = app.add_subcommand(
      "get",
      "Look keys up offline; exit 1 if any is missing. Output as roost-get's: "
      "KEY<TAB>VALUE on stdout for each key found (KEY as given), "
      "`roost-load: \"KEY\": not found` on stderr for each one not found. "
      "A version of rows (build --rows) prints each row found as a line of "
      "JSON, as roost-get --rows: {\"key\": KEY, \"row\": {FIELD: VALUE, "
      "...}} (--value-encoding hex or base64: KEY<TAB>its bytes).");
  get->add_option("table", g->path, "Table file or directory")->required();
  get->add_option("keys", g->keys, "Keys, in --key-encoding")->required();
  get->add_option("--key-encoding", g->key_encoding,
                  "How KEYs are given: raw bytes, hex or base64 (bad hex or "
                  "base64 is a usage error, exit 64)")
      ->check(CLI::IsMember({"raw", "hex", "base64"}))
      ->capture_default_str();
  get->add_option("--value-encoding", g->value_encoding,
                  "How values are printed: raw bytes (a row: a line of "
                  "JSON), hex (lowercase) or base64 (standard alphabet, "
                  "padded)")
      ->check(CLI::IsMember({"raw", "hex", "base64"}))
      ->capture_default_str();
  AddShardFlag(get, *shard);
  get->footer(
      "Examples:\n"
      "  roost-load get /srv/roost/users user:000042 user:000043\n"
      "  roost-load get --key-encoding hex /srv/roost/users 7573657231 00ff");
  return {get, [get, g, shard] {
            g->shard = ShardOf(get, *shard);
            return RunGet(*g);
          }};
}

}  // namespace roost
