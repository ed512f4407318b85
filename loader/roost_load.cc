// roost-load: builds table files from bulk input and publishes them, inspects
// and verifies them, and looks keys up offline. See `roost-load --help` and
// docs/operations.md.

#include <fmt/format.h>
#include <sysexits.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "absl/strings/escaping.h"
#include "loader/build_job.h"
#include "loader/flag_values.h"
#include "loader/publish.h"
#include "loader/repository_commands.h"
#include "loader/sharded_version.h"
#include "storage/manifest.h"
#include "storage/partition.h"
#include "storage/table.h"
#include "storage/version_check.h"
#include "util/build_info.h"
#include "util/cli.h"
#include "util/encoding.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Exit codes: sysexits.h's, and 1 for `get`'s missing keys.
constexpr int kExitOk = 0;
constexpr int kExitNotFound = 1;  // `get`: some key is not in the table
constexpr int kExitUsage = EX_USAGE;
constexpr int kExitBadInput = EX_DATAERR;  // bad input, corrupt table
constexpr int kExitIo = EX_IOERR;

// `repository`: the error came from a table repository, where Unavailable
// is an unreachable store (an I/O error), not a version still arriving.
int ExitCodeFor(const absl::Status& status, bool repository = false) {
  if (repository && absl::IsUnavailable(status)) return kExitIo;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnavailable:  // a version still arriving
      return kExitBadInput;
    default:
      return kExitIo;
  }
}

// Reports `status` (on stderr, and as JSON on stdout with `json`) and
// returns `code`.
int Report(const absl::Status& status, int code, bool json) {
  if (json) {
    OrderedJson j;
    j["status"] = "error";
    j["error"] = std::string(status.message());
    j["exit_code"] = code;
    fmt::print("{}\n", DumpJson(j));
  }
  fmt::print(stderr, "roost-load: {}\n", std::string(status.message()));
  return code;
}

int Fail(const absl::Status& status, bool json = false,
         bool repository = false) {
  return Report(status, ExitCodeFor(status, repository), json);
}

// A bad flag, flag value or combination of flags.
int Usage(const absl::Status& status, bool json = false) {
  return Report(status, kExitUsage, json);
}

struct BuildFlags {
  BuildJob job;
  std::string input_format = "tsv";
  std::string key_encoding = "raw";
  std::string value_encoding = "raw";
  std::string format = "cuckoo";
  std::string on_duplicate = "error";
  std::string compression = "none";
  std::string index_search = "auto";
  std::string memory_limit = "1G";
  std::string max_value_size = "16M";
  std::string max_shrink;
  // Read as a string so that a value out of range or not a number is our
  // usage error, not CLI11's.
  std::string shards = "1";
  std::string keep_versions;
  std::string abandoned_after = "24h";
  std::string data_timestamp;
  bool data_timestamp_given = false;  // even as ""
  bool no_hash_index = false;
  bool quiet = false;
  std::string output_format = "text";
};

int RunBuildCommand(BuildFlags& f) {
  const bool json = f.output_format == "json";
  BuildJob& job = f.job;
  absl::Status s;
  auto assign = [&](auto parsed, auto* out) {
    if (!s.ok()) return;
    if (!parsed.ok()) {
      s = parsed.status();
      return;
    }
    *out = *parsed;
  };
  assign(ParseInputFormat(f.input_format), &job.reader.format);
  assign(ParseEncoding(f.key_encoding), &job.reader.key_encoding);
  assign(ParseEncoding(f.value_encoding), &job.reader.value_encoding);
  assign(ParseTableFormat(f.format), &job.format);
  assign(ParseCompression(f.compression), &job.block.compression);
  assign(ParseIndexSearch(f.index_search), &job.block.index_search);
  assign(ParseSize(f.memory_limit), &job.memory_limit);
  assign(ParseSize(f.max_value_size), &job.reader.max_value_size);
  {
    uint32_t n = 0;
    auto [end, ec] =
        std::from_chars(f.shards.data(), f.shards.data() + f.shards.size(), n);
    if (ec != std::errc() || end != f.shards.data() + f.shards.size() ||
        n < 1 || n > kMaxShards) {
      if (s.ok()) {
        s = absl::InvalidArgumentError(StrCat("bad --shards \"", f.shards,
                                              "\" (a whole number from 1 to ",
                                              kMaxShards, ")"));
      }
    } else {
      job.shards = n;
    }
  }
  if (!f.keep_versions.empty()) {
    assign(ParseKeepVersions(f.keep_versions), &job.keep_versions);
  }
  {
    int64_t seconds = 0;
    assign(ParseDurationSeconds(f.abandoned_after), &seconds);
    job.abandoned_after = std::chrono::seconds(seconds);
  }
  if (f.data_timestamp_given) {
    int64_t seconds = 0;
    assign(ParseTimestamp(f.data_timestamp), &seconds);
    job.data_timestamp = seconds;
  }
  if (!f.max_shrink.empty()) {
    double share = 0;
    assign(ParseShare(f.max_shrink), &share);
    job.max_shrink = share;
  }
  // Every option is checked before any input is opened; a bad one is a
  // usage error.
  if (s.ok()) s = ValidateBuildJob(job);
  if (!s.ok()) return Usage(s, json);
  job.on_duplicate = f.on_duplicate == "first"  ? DuplicatePolicy::kKeepFirst
                     : f.on_duplicate == "last" ? DuplicatePolicy::kKeepLast
                                                : DuplicatePolicy::kError;
  job.block.hash_index = !f.no_hash_index;
  Progress progress(Progress::DefaultMode(f.quiet || json));
  auto summary = RunBuild(job, &progress);
  if (!summary.ok()) {
    return Fail(summary.status(), json, !job.repository.empty());
  }
  if (json) {
    fmt::print("{}\n", DumpJson(summary->ToJson()));
  } else if (!f.quiet) {
    fmt::print(
        stderr,
        "roost-load: published {}: {} table, {} keys{}, {} bytes "
        "({:.2f} bytes/key), {} records read, {} bad, {} duplicates "
        "dropped, {:.2f} s\n",
        summary->path, TableFormatName(summary->format), summary->keys,
        summary->shards > 1 ? fmt::format(" in {} shards", summary->shards)
                            : std::string(),
        summary->file_size,
        summary->keys ? static_cast<double>(summary->file_size) / summary->keys
                      : 0.0,
        summary->records, summary->bad_records, summary->duplicates,
        summary->seconds);
    if (summary->pruned) {
      fmt::print(stderr,
                 "roost-load: retention: {} complete and {} abandoned "
                 "version(s) of {} deleted\n",
                 summary->pruned->size(), summary->abandoned->size(),
                 job.table);
    }
  }
  if (!summary->retention_error.empty()) {
    fmt::print(stderr,
               "roost-load: warning: published, but retention failed: {}\n",
               summary->retention_error);
  }
  return kExitOk;
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
    fmt::print("{}", *text);
    return kExitOk;
  }
  auto table = Table::Open(resolved->file, {.verify_checksums = false});
  if (!table.ok()) return Fail(table.status());
  fmt::print("{:<18}{}\n", "file", resolved->file);
  fmt::print("{}", (*table)->Describe());
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
  if (resolved->version_dir) {
    VersionOpenOptions options;
    options.check_file_checksum = true;
    auto version = OpenVersion(*resolved->version_dir, options);
    if (!version.ok()) return Fail(version.status());
    table = std::move(version->file);
  } else {
    auto file = Table::Open(resolved->file);
    if (!file.ok()) return Fail(file.status());
    table = std::move(*file);
  }
  fmt::print("{}: ok ({} table, {} keys{})\n", resolved->file,
             TableFormatName(table->format()), table->num_keys(),
             resolved->version_dir ? ", MANIFEST agrees" : "");
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
  // A sharded version: each key from its shard's file.
  std::optional<ShardRouter> router;
  std::unique_ptr<Table> table;
  if (auto sharded = ShardedManifest(*resolved)) {
    auto selection = SelectShards(*resolved->version_dir, *sharded, f.shard);
    if (!selection.ok()) return Fail(selection.status());
    router.emplace(*resolved->version_dir, *sharded, *selection);
  } else {
    auto file = Table::Open(resolved->file);
    if (!file.ok()) return Fail(file.status());
    table = std::move(*file);
  }
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
    if (*found) {
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

}  // namespace
}  // namespace roost

int main(int argc, char** argv) {
  using namespace roost;
  CLI::App app{
      "roost-load: builds roost tables from bulk input and publishes them, "
      "inspects and verifies them, and looks keys up offline.\n"
      "Exit codes: 0 ok, 1 key not found (get), 64 bad usage (flags, flag "
      "values and their combinations), 65 bad input data (a malformed "
      "record; input cut short, as a last line without its newline; input "
      "of another format) or a corrupt table, "
      "74 I/O error (also: a table repository unreachable, refusing the "
      "credentials, without the bucket, or failing an upload).",
      "roost-load"};
  app.footer(
      "Examples:\n"
      "  roost-load build -i users.tsv -o users.sst\n"
      "  roost-load build -i 'part-*.tsv.gz' --data-dir /srv/roost --table "
      "users --max-shrink 10%\n"
      "  roost-load build -i users.tsv --data-dir /srv/roost --table users "
      "--shards 4\n"
      "  roost-load build -i records.bin --input-format fixed --key-size 8 "
      "--value-size 8 --format block --compression zstd -o r.sst\n"
      "  roost-load build -i users.tsv --repository s3://tables/prod "
      "--table users --shards 4 --keep-versions 5\n"
      "  roost-load versions --repository s3://tables/prod --table users\n"
      "  roost-load rollback --repository s3://tables/prod --table users "
      "--to v3\n"
      "  roost-load inspect /srv/roost/users\n"
      "  roost-load verify /srv/roost/users/v000003\n"
      "  roost-load get --key-encoding hex /srv/roost/users 7573657231 "
      "00ff\n"
      "Run `roost-load COMMAND --help` for a command's flags.");
  AddVersionFlag(app, VersionLine("roost-load"));
  app.require_subcommand(1);

  BuildFlags f;
  BuildJob& job = f.job;
  CLI::App* b = app.add_subcommand(
      "build",
      "Build a table from input records, verify it, and publish it as a "
      "file (--output) or as the next version of a table (--data-dir or "
      "--repository, with --table).");
  b->add_option("--input,-i", job.inputs,
                "Input files or globs; - for stdin; gzip is detected. Parquet, "
                "Arrow, ORC, Avro, CSV, JSON Lines and zstd, xz or bzip2 "
                "input is named as such (exit 65) with a command that "
                "converts it")
      ->required();
  b->add_option("--output,-o", job.output_file, "Write the table to FILE");
  b->add_option("--data-dir", job.data_dir,
                "Publish into DIR/<table>/v<N>/ (with --table)");
  b->add_option("--repository", job.repository,
                "Publish into a table repository instead: s3://BUCKET[/PREFIX] "
                "(credentials and endpoint from AWS_* variables), a local "
                "path or file:///PATH; with --table. The version is built "
                "under --temp-dir, uploaded, read back against its "
                "checksums, then the MANIFEST, then the pointer");
  b->add_option("--table", job.table,
                "Table name, with --data-dir or --repository");
  b->add_option("--keep-versions", f.keep_versions,
                "With --repository: after publishing, delete complete "
                "versions older than the K newest (never the pointer's, nor "
                "newer ones) and abandoned claims")
      ->type_name("K");
  b->add_option("--abandoned-after", f.abandoned_after,
                "With --keep-versions: an incomplete version silent this "
                "long is abandoned: 90s, 30m, 24h, 7d")
      ->capture_default_str();
  b->add_option("--shards", f.shards,
                "With --data-dir or --repository: split the keys into N table "
                "files "
                "(shard-0000-of-000N.sst, ...) in one version, each key in "
                "the shard docs/format/partitioning.md names; 1 to 1024. 1 is "
                "one table.sst")
      ->type_name("N")
      ->capture_default_str();
  b->add_option("--data-timestamp", f.data_timestamp,
                "With --data-dir or --repository: the time the input data is "
                "of (when it was exported, say), written into the MANIFEST "
                "as data_time and exported by roost-server as "
                "roost_table_data_timestamp_seconds: RFC 3339 "
                "(2024-05-01T12:00:00Z) or Unix seconds")
      ->type_name("TIME");
  b->add_option("--format", f.format, "Table format: cuckoo or block")
      ->check(CLI::IsMember({"cuckoo", "block"}))
      ->capture_default_str();
  b->add_option("--input-format", f.input_format,
                "tsv (key<TAB>value lines, each ending in a newline; an "
                "empty key, a line starting with a tab, is the key \"\", "
                "warned about), fixed (--key-size + --value-size byte "
                "records) or length-prefixed (varint lengths)")
      ->check(CLI::IsMember({"tsv", "fixed", "length-prefixed"}))
      ->capture_default_str();
  b->add_option("--key-encoding", f.key_encoding,
                "TSV keys: raw, hex or base64")
      ->check(CLI::IsMember({"raw", "hex", "base64"}))
      ->capture_default_str();
  b->add_option("--value-encoding", f.value_encoding,
                "TSV values: raw, hex or base64")
      ->check(CLI::IsMember({"raw", "hex", "base64"}))
      ->capture_default_str();
  b->add_option("--key-size", job.reader.key_size, "Fixed records: key bytes")
      ->capture_default_str();
  b->add_option("--value-size", job.reader.value_size,
                "Fixed records: value bytes")
      ->capture_default_str();
  b->add_option("--max-key-size", job.reader.max_key_size,
                "Longest key accepted, in bytes")
      ->capture_default_str();
  b->add_option("--max-value-size", f.max_value_size,
                "Longest value accepted (k, M, G suffixes); longer ones are "
                "bad records. roost-server's default response limit is 32 "
                "MiB, so that one value of 16 MiB always fits")
      ->capture_default_str();
  b->add_flag("--strip-cr", job.reader.strip_cr,
              "TSV: drop the \\r of lines that end in \\r\\n");
  b->add_flag("--allow-missing-final-newline",
              job.reader.allow_missing_final_newline,
              "TSV: read a last line without its newline as a record (a file "
              "written by hand). Without it such a line is input cut short "
              "(a producer stopped mid-line): exit 65, nothing published");
  b->add_flag("--allow-empty", job.allow_empty,
              "Publish a table of no keys when the input has no records "
              "(else an error)");
  b->add_option("--max-shrink", f.max_shrink,
                "With --data-dir or --repository: refuse a version with fewer "
                "keys than the newest one by more than this share (e.g. 10%)");
  b->add_option("--on-duplicate", f.on_duplicate,
                "A key seen twice: error, first or last")
      ->check(CLI::IsMember({"error", "first", "last"}))
      ->capture_default_str();
  b->add_option("--max-bad-records", job.max_bad_records,
                "Skip (and count) up to N malformed TSV lines. A malformed "
                "binary record (where the next one starts is then unknown), "
                "input cut short and input of another format stop the build "
                "whatever N")
      ->capture_default_str();
  b->add_option("--memory-limit", f.memory_limit,
                "Block format: memory for sorting before spilling to disk "
                "(k, M, G suffixes)")
      ->capture_default_str();
  b->add_option("--temp-dir", job.temp_dir,
                "Where sort runs spill (default: the system temp dir)");
  b->add_option("--utilization", job.cuckoo.utilization,
                "Cuckoo: fraction of buckets to fill, in (0, 1)")
      ->capture_default_str();
  b->add_option("--hash-functions", job.cuckoo.num_hash_functions,
                "Cuckoo: candidate blocks per key, 2 to 8")
      ->capture_default_str();
  b->add_option("--overflow-bits", job.cuckoo.overflow_bits_per_block,
                "Cuckoo: overflow bits per block: 1, 2, 4 or 8")
      ->capture_default_str();
  b->add_option("--max-displacement-depth", job.cuckoo.max_displacement_depth,
                "Cuckoo: longest displacement chain tried per insertion")
      ->capture_default_str();
  b->add_option("--block-size", job.block.block_size,
                "Block: target data block size in bytes")
      ->capture_default_str();
  b->add_option("--restart-interval", job.block.restart_interval,
                "Block: entries between full keys")
      ->capture_default_str();
  b->add_flag("--no-hash-index", f.no_hash_index,
              "Block: no hash index in data blocks");
  b->add_option("--filter-bits-per-key", job.block.filter_bits_per_key,
                "Block: bits a key of the table's Bloom filter, 0 to 32 "
                "(10: about 1% of missing keys get past it; format 2.0); 0 "
                "writes no filter (format 1.0, for readers older than 2.0)")
      ->capture_default_str();
  b->add_option("--compression", f.compression, "Block: none, snappy or zstd")
      ->check(CLI::IsMember({"none", "snappy", "zstd"}))
      ->capture_default_str();
  b->add_option("--index-search", f.index_search,
                "Block: binary, interpolation or auto")
      ->check(CLI::IsMember({"binary", "interpolation", "auto"}))
      ->capture_default_str();
  b->add_flag("--quiet,-q", f.quiet, "No progress or summary on stderr");
  b->add_option("--output-format", f.output_format,
                "Summary format: text (stderr) or json (stdout)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  std::string path;
  // --shard of inspect, verify and get.
  uint32_t shard = 0;
  const std::string shard_help =
      "Of a sharded version, read shard I's file alone (the others need not "
      "be there). Without it, the shards' files that are there are read: "
      "all of them, or the one a server's copy holds (roost-server --shard "
      "keeps the MANIFEST and its shard's file); an unsharded version is "
      "read whole either way";
  auto add_shard = [&](CLI::App* command) {
    command->add_option("--shard", shard, shard_help)
        ->type_name("I")
        ->check(CLI::Range(0u, kMaxShards - 1));
  };
  auto shard_of = [&](CLI::App* command) {
    return command->count("--shard") > 0 ? std::optional<uint32_t>(shard)
                                         : std::nullopt;
  };
  CLI::App* inspect = app.add_subcommand(
      "inspect", "Print a table's header and statistics (FILE or DIR).");
  inspect
      ->add_option("table", path,
                   "Table file, version directory, or table directory "
                   "(its newest version)")
      ->required();
  add_shard(inspect);
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check every checksum of a table, and its MANIFEST when given a "
      "directory; exit 0 only if all hold.");
  verify->add_option("table", path, "Table file or directory")->required();
  add_shard(verify);
  GetFlags g;
  CLI::App* get = app.add_subcommand(
      "get",
      "Look keys up offline; exit 1 if any is missing. Output as roost-get's: "
      "KEY<TAB>VALUE on stdout for each key found (KEY as given), "
      "`roost-load: \"KEY\": not found` on stderr for each one not found.");
  get->add_option("table", g.path, "Table file or directory")->required();
  get->add_option("keys", g.keys, "Keys, in --key-encoding")->required();
  get->add_option("--key-encoding", g.key_encoding,
                  "How KEYs are given: raw bytes, hex or base64 (bad hex or "
                  "base64 is a usage error, exit 64)")
      ->check(CLI::IsMember({"raw", "hex", "base64"}))
      ->capture_default_str();
  get->add_option("--value-encoding", g.value_encoding,
                  "How values are printed: raw bytes, hex (lowercase) or "
                  "base64 (standard alphabet, padded)")
      ->check(CLI::IsMember({"raw", "hex", "base64"}))
      ->capture_default_str();
  add_shard(get);

  RepositoryCommandFlags rf;
  const RepositorySubcommands repo = AddRepositorySubcommands(app, rf);

  // Each command's --help ends with its own examples, not all of the
  // program's (a subcommand inherits the footer it was added under).
  b->footer(
      "Examples:\n"
      "  roost-load build -i users.tsv -o users.sst\n"
      "  roost-load build -i 'part-*.tsv.gz' --data-dir /srv/roost --table "
      "users --max-shrink 10%\n"
      "  producer | roost-load build -i - --data-dir /srv/roost --table users "
      "--shards 4\n"
      "  roost-load build -i records.bin --input-format fixed --key-size 8 "
      "--value-size 8 --format block --compression zstd -o r.sst\n"
      "  roost-load build -i users.tsv --repository s3://tables/prod "
      "--table users --shards 4 --keep-versions 5");
  inspect->footer(
      "Examples:\n"
      "  roost-load inspect /srv/roost/users            # its newest version\n"
      "  roost-load inspect users.sst");
  verify->footer(
      "Examples:\n"
      "  roost-load verify /srv/roost/users/v000003\n"
      "  roost-load verify users.sst");
  get->footer(
      "Examples:\n"
      "  roost-load get /srv/roost/users user:000042 user:000043\n"
      "  roost-load get --key-encoding hex /srv/roost/users 7573657231 00ff");
  repo.versions->footer(
      "Example:\n"
      "  roost-load versions --repository s3://tables/prod --table users");
  repo.rollback->footer(
      "Example:\n"
      "  roost-load rollback --repository s3://tables/prod --table users "
      "--to v3");
  repo.prune->footer(
      "Example:\n"
      "  roost-load prune --repository s3://tables/prod --table users "
      "--keep-versions 5 --abandoned-after 7d");

  if (std::optional<int> exit = ParseCommandLine(app, argc, argv)) {
    return *exit;
  }
  if (b->parsed()) {
    if (b->count("--abandoned-after") > 0 && f.keep_versions.empty()) {
      return Usage(absl::InvalidArgumentError(
                       "--abandoned-after goes with --keep-versions"),
                   f.output_format == "json");
    }
    f.data_timestamp_given = b->count("--data-timestamp") > 0;
    return RunBuildCommand(f);
  }
  for (auto [command, validate, run] :
       {std::tuple{repo.versions, &ValidateVersions, &RunVersions},
        std::tuple{repo.rollback, &ValidateRollback, &RunRollback},
        std::tuple{repo.prune, &ValidatePrune, &RunPrune}}) {
    if (!command->parsed()) continue;
    const bool json = rf.output_format == "json";
    if (absl::Status s = validate(rf); !s.ok()) return Usage(s, json);
    if (absl::Status s = run(rf); !s.ok()) return Fail(s, json, true);
    return kExitOk;
  }
  if (inspect->parsed()) return RunInspect(path, shard_of(inspect));
  if (verify->parsed()) return RunVerify(path, shard_of(verify));
  g.shard = shard_of(get);
  return RunGet(g);
}
