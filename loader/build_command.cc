#include "loader/build_command.h"

#include <fmt/format.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "loader/build_job.h"
#include "loader/flag_values.h"
#include "loader/progress.h"
#include "loader/record_reader.h"
#include "loader/repository_commands.h"
#include "repository/aws_credentials.h"
#include "storage/block/block_format.h"
#include "storage/partition.h"
#include "storage/row/row_schema.h"
#include "storage/table.h"
#include "util/cli.h"
#include "util/file.h"
#include "util/json.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// The CPUs this process may run on (its affinity mask; taskset and
// container CPU sets narrow it).
int AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

struct BuildFlags {
  BuildJob job;
  std::string input_format = "tsv";
  std::string delimiter = ",";
  bool no_header = false;
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
  std::string threads = "auto";
  std::string shard;    // --shard I, "" when not given
  std::string version;  // --version V, with --shard
  std::string keep_versions;
  std::string abandoned_after = "24h";
  std::string data_timestamp;
  bool data_timestamp_given = false;  // even as ""
  bool no_hash_index = false;
  bool quiet = false;
  std::string output_format = "text";
  std::string schema_file;  // --schema FILE
};

// --delimiter: one byte, or "tab" / "\t" for a tab.
absl::StatusOr<char> ParseDelimiter(const std::string& d) {
  if (d == "tab" || d == "\\t") return '\t';
  if (d.size() != 1 || d[0] == '"' || d[0] == '\n' || d[0] == '\r') {
    return absl::InvalidArgumentError(StrCat(
        "bad --delimiter \"", d,
        "\" (one byte, not a quote or a line end; tab or \\t for a tab)"));
  }
  return d[0];
}

// The flags of one input format given with another: a usage error naming
// the first.
absl::Status CheckInputFlags(const CLI::App& b, const std::string& format) {
  struct Owned {
    const char* flag;
    const char* format;
  };
  static constexpr Owned kOwned[] = {
      {"--delimiter", "csv"},   {"--no-header", "csv"},
      {"--key-column", "csv"},  {"--value-column", "csv"},
      {"--key-field", "jsonl"}, {"--value-field", "jsonl"},
  };
  for (const Owned& o : kOwned) {
    if (b.count(o.flag) > 0 && format != o.format) {
      return absl::InvalidArgumentError(StrCat(
          o.flag, " goes with --input-format ", o.format, ", not ", format));
    }
  }
  return absl::OkStatus();
}

// --schema FILE: the rows' schema, as docs/format/rows.md's JSON.
absl::StatusOr<std::shared_ptr<const RowSchema>> ReadSchemaFile(
    const std::string& path) {
  constexpr uint64_t kMaxSchemaFile = 16 << 20;
  absl::StatusOr<std::string> text = ReadRegularFile(path, kMaxSchemaFile);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        StrCat("--schema ", path, ": ", text.status().message()));
  }
  absl::StatusOr<Json> json = ParseJson(*text);
  if (!json.ok()) {
    return absl::InvalidArgumentError(
        StrCat("--schema ", path, ": ", json.status().message()));
  }
  absl::StatusOr<RowSchema> schema = RowSchema::FromJson(*json);
  if (!schema.ok()) {
    return absl::InvalidArgumentError(
        StrCat("--schema ", path, ": ", schema.status().message()));
  }
  return std::make_shared<const RowSchema>(*std::move(schema));
}

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
  assign(ParseDelimiter(f.delimiter), &job.reader.delimiter);
  job.reader.header = !f.no_header;
  assign(ParseEncoding(f.key_encoding), &job.reader.key_encoding);
  assign(ParseEncoding(f.value_encoding), &job.reader.value_encoding);
  assign(ParseTableFormat(f.format), &job.format);
  assign(ParseCompression(f.compression), &job.block.compression);
  assign(ParseIndexSearch(f.index_search), &job.block.index_search);
  assign(ParseSize(f.memory_limit), &job.memory_limit);
  assign(ParseSize(f.max_value_size), &job.reader.max_value_size);
  if (!f.schema_file.empty()) {
    assign(ReadSchemaFile(f.schema_file), &job.reader.schema);
  }
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
  if (f.threads == "auto") {
    job.threads = std::clamp(AvailableCpus(), 1, kMaxBuildThreads);
  } else {
    int n = 0;
    auto [end, ec] = std::from_chars(f.threads.data(),
                                     f.threads.data() + f.threads.size(), n);
    if (ec != std::errc() || end != f.threads.data() + f.threads.size() ||
        n < 1 || n > kMaxBuildThreads) {
      if (s.ok()) {
        s = absl::InvalidArgumentError(StrCat(
            "bad --threads \"", f.threads,
            "\" (auto, or a whole number from 1 to ", kMaxBuildThreads, ")"));
      }
    } else {
      job.threads = n;
    }
  }
  if (!f.shard.empty()) {
    uint32_t i = 0;
    auto [end, ec] =
        std::from_chars(f.shard.data(), f.shard.data() + f.shard.size(), i);
    if (ec != std::errc() || end != f.shard.data() + f.shard.size()) {
      if (s.ok()) {
        s = absl::InvalidArgumentError(
            StrCat("bad --shard \"", f.shard, "\" (a shard number: 0 to N-1)"));
      }
    } else {
      job.shard = i;
    }
  }
  if (!f.version.empty()) {
    assign(ParseVersionArgument(f.version), &job.version.emplace());
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
  job.on_duplicate = f.on_duplicate == "first"  ? DuplicatePolicy::kKeepFirst
                     : f.on_duplicate == "last" ? DuplicatePolicy::kKeepLast
                                                : DuplicatePolicy::kError;
  job.block.hash_index = !f.no_hash_index;
  // Every option is checked before any input is opened; a bad one is a
  // usage error.
  if (f.quiet || json) SetAwsCredentialsLog(nullptr);
  if (s.ok()) s = ValidateBuildJob(job);
  if (!s.ok()) return Usage(s, json);
  Progress progress(Progress::DefaultMode(f.quiet || json));
  auto summary = RunBuild(job, &progress);
  if (!summary.ok()) {
    return Fail(summary.status(), json, !job.repository.empty());
  }
  if (json) {
    fmt::print("{}\n", DumpJson(summary->ToJson()));
  } else if (!f.quiet && summary->shard) {
    fmt::print(stderr,
               "roost-load: uploaded {}: shard {} of {} ({} table, {} keys, "
               "{} bytes), {} records read, {} bad, {:.2f} s; not served "
               "until roost-load publish\n",
               summary->path, *summary->shard, summary->shards,
               TableFormatName(summary->format), summary->keys,
               summary->file_size, summary->records, summary->bad_records,
               summary->seconds);
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

}  // namespace

Command AddBuildCommand(CLI::App& app) {
  auto flags = std::make_shared<BuildFlags>();
  BuildFlags& f = *flags;
  BuildJob& job = f.job;
  CLI::App* b = app.add_subcommand(
      "build",
      "Build a table from input records, verify it, and publish it as a "
      "file (--output) or as the next version of a table (--data-dir or "
      "--repository, with --table).");
  b->add_option("--input,-i", job.inputs,
                "Input files or globs; - for stdin; gzip and zstd are "
                "detected. Parquet and Arrow input is refused (exit 65) "
                "naming roost-build, which reads them; ORC, Avro, xz, bzip2, "
                "CSV and JSON Lines given as TSV are named (exit 65) with "
                "the flag or command that reads or converts them")
      ->required();
  b->add_option("--output,-o", job.output_file, "Write the table to FILE");
  b->add_option("--data-dir", job.data_dir,
                "Publish into DIR/<table>/v<N>/ (with --table)");
  b->add_option("--repository", job.repository,
                "Publish into a table repository instead: s3://BUCKET[/PREFIX] "
                "(credentials from the AWS default chain, endpoint from "
                "AWS_* variables), a local "
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
  b->add_option("--shard", f.shard,
                "With --repository, --shards N and --version V: build shard "
                "I alone (0 to N-1) of claimed version V from input holding "
                "that shard's records only (another shard's record is a bad "
                "record), sorted by key so that a retried attempt uploads "
                "the same bytes; upload shard-IIII-of-NNNN.sst and its part "
                "(.json) and publish nothing: roost-load publish does, once "
                "every shard is there")
      ->type_name("I");
  b->add_option("--version", f.version,
                "With --shard: the version roost-load claim gave (v000007, "
                "v7 or 7)")
      ->type_name("V");
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
                "warned about), csv (RFC 4180, --key-column ...), jsonl "
                "(one JSON value a line, --key-field ...), fixed "
                "(--key-size + --value-size byte records), "
                "length-prefixed (varint lengths) or arrow-columns (typed "
                "columns from roost-build: Parquet, Arrow, Feather)")
      ->check(CLI::IsMember(
          {"tsv", "csv", "jsonl", "fixed", "length-prefixed", "arrow-columns"}))
      ->capture_default_str();
  b->add_flag("--rows", job.reader.rows,
              "Store each value as a row of typed fields (docs/format/"
              "rows.md) rather than a JSON object, and the rows' schema in "
              "the MANIFEST: arrow-columns input (roost-build --rows), each "
              "value column a nullable field of its Arrow type, or csv and "
              "jsonl input with --schema. Needs --data-dir or --repository");
  b->add_option("--schema", f.schema_file,
                "With --rows and csv or jsonl input: FILE holds the rows' "
                "schema as JSON (docs/format/rows.md); each field is the "
                "column or member of its name, converted to its type")
      ->type_name("FILE");
  b->add_option("--delimiter", f.delimiter,
                "CSV: the field separator, one byte; tab or \\t for a tab")
      ->type_name("C")
      ->capture_default_str();
  b->add_flag("--no-header", f.no_header,
              "CSV: the first row is a record, not column names; columns "
              "are then named by number from 1 (--key-column 1)");
  b->add_option("--key-column", job.reader.key_column,
                "CSV: the column (header name, or number with --no-header) "
                "whose field is the key (default: the first column)")
      ->type_name("NAME");
  b->add_option("--value-column", job.reader.value_column,
                "CSV: the column whose field, as it is, is the value "
                "(default: every other column as a JSON object of strings in "
                "header order, {\"name\":\"value\",...}; CSV is untyped)")
      ->type_name("NAME");
  b->add_option("--key-field", job.reader.key_field,
                "JSON Lines (required): the key's member name, or a JSON "
                "pointer (/user/id); a string's bytes or an integer's "
                "decimal text")
      ->type_name("F");
  b->add_option("--value-field", job.reader.value_field,
                "JSON Lines: the value's member name or JSON pointer; a "
                "string's bytes, any other value its minified JSON (default: "
                "the whole line)")
      ->type_name("F");
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
              "TSV, CSV, JSON Lines: read a last line without its newline as "
              "a record (a file written by hand). Without it such a line is "
              "input cut short "
              "(a producer stopped mid-line): exit 65, nothing published");
  b->add_flag("--allow-empty", job.allow_empty,
              "Publish a table of no keys when the input has no records "
              "(else an error)");
  b->add_option("--max-shrink", f.max_shrink,
                "With --data-dir or --repository: refuse a version with fewer "
                "keys than the newest one by more than this share (e.g. 10%)");
  b->add_flag("--allow-schema-change", job.allow_schema_change,
              "With --data-dir or --repository: publish even when the "
              "version's schema of rows may not follow the newest "
              "version's (a field dropped, renamed, retyped or newly "
              "required; rows over opaque values or the reverse), "
              "recording the change in its MANIFEST's schema_change");
  b->add_option("--on-duplicate", f.on_duplicate,
                "A key seen twice: error, first or last")
      ->check(CLI::IsMember({"error", "first", "last"}))
      ->capture_default_str();
  b->add_option(
       "--max-bad-records", job.max_bad_records,
       "Skip (and count) up to N malformed TSV lines, CSV rows or JSON "
       "lines (with --shard, also records of another shard, in any input "
       "format). A malformed binary record (where the next one starts "
       "is then unknown), an unterminated CSV quote, a CSV header "
       "without the columns asked for, input cut short and input of "
       "another format stop the build whatever N")
      ->capture_default_str();
  b->add_option("--memory-limit", f.memory_limit,
                "Block format and --shard: memory for sorting before "
                "spilling to disk (k, M, G suffixes)")
      ->capture_default_str();
  b->add_option("--temp-dir", job.temp_dir,
                "Where sort runs spill, and where --repository and --shard "
                "builds stage the version before uploading it (default: "
                "$TMPDIR, else /tmp)");
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
  b->add_option("--threads", f.threads,
                "Threads that place the keys and write the buckets of a "
                "cuckoo table, and that sort a block build's records in "
                "memory; above 1, a block build also reads the sorted pairs "
                "on one thread while it builds the blocks on another. The "
                "file is the same for any count. auto: every CPU this "
                "process may run on")
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

  // Its --help ends with its own examples, not all of the program's (a
  // subcommand inherits the footer it was added under).
  b->footer(
      "Examples:\n"
      "  roost-load build -i users.tsv -o users.sst\n"
      "  roost-load build -i 'part-*.tsv.gz' --data-dir /srv/roost --table "
      "users --max-shrink 10%\n"
      "  producer | roost-load build -i - --data-dir /srv/roost --table users "
      "--shards 4\n"
      "  roost-load build -i 'users-*.csv.zst' --input-format csv "
      "--key-column id -o users.sst\n"
      "  roost-load build -i events.jsonl.gz --input-format jsonl "
      "--key-field /user/id --value-field /profile -o events.sst\n"
      "  roost-load build -i records.bin --input-format fixed --key-size 8 "
      "--value-size 8 --format block --compression zstd -o r.sst\n"
      "  roost-load build -i users.tsv --repository s3://tables/prod "
      "--table users --shards 4 --keep-versions 5\n"
      "  roost-load build -i part-0001.tsv --repository s3://tables/prod "
      "--table users --shards 4 --shard 1 --version v7");
  return {b, [b, flags]() -> int {
            BuildFlags& f = *flags;
            if (b->count("--abandoned-after") > 0 && f.keep_versions.empty()) {
              return Usage(absl::InvalidArgumentError(
                               "--abandoned-after goes with --keep-versions"),
                           f.output_format == "json");
            }
            if (absl::Status s = CheckInputFlags(*b, f.input_format); !s.ok()) {
              return Usage(s, f.output_format == "json");
            }
            f.data_timestamp_given = b->count("--data-timestamp") > 0;
            return RunBuildCommand(f);
          }};
}

}  // namespace roost
