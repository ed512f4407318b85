#include "loader/build_job.h"

#include <chrono>
#include <filesystem>
#include <memory>

#include "loader/build_manifest.h"
#include "loader/data_dir_destination.h"
#include "loader/destination.h"
#include "loader/file_destination.h"
#include "loader/repository_destination.h"
#include "loader/shard_destination.h"
#include "loader/table_files.h"
#include "repository/object_store.h"
#include "storage/partition.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// The place `job` names (ValidateBuildJob has checked that it names one),
// staged: the one function that reads which flag it was.
absl::StatusOr<std::unique_ptr<Destination>> OpenDestination(
    const BuildJob& job) {
  if (job.shard) {
    ShardDestinationOptions options;
    options.uri = job.repository;
    options.table = job.table;
    options.version = *job.version;
    options.shard = *job.shard;
    options.shards = job.shards;
    options.temp_dir = job.temp_dir;
    return ShardDestination::Stage(std::move(options));
  }
  if (!job.repository.empty()) {
    RepositoryDestinationOptions options;
    options.uri = job.repository;
    options.table = job.table;
    options.temp_dir = job.temp_dir;
    options.max_shrink = job.max_shrink;
    options.allow_schema_change = job.allow_schema_change;
    if (job.keep_versions) {
      RetentionOptions retention;
      retention.keep_versions = *job.keep_versions;
      retention.abandoned_after = job.abandoned_after;
      options.retention = retention;
    }
    return RepositoryDestination::Stage(std::move(options));
  }
  if (!job.data_dir.empty()) {
    return DataDirDestination::Stage(job.data_dir, job.table, job.max_shrink,
                                     job.allow_schema_change);
  }
  return FileDestination::Stage(job.output_file);
}

// The table file of each shard, in `dir`: table.sst, or one
// shard-IIII-of-NNNN.sst per shard (that of job.shard alone with it).
std::vector<std::string> TableFilePaths(const std::string& dir,
                                        const BuildJob& job) {
  const uint32_t shards = job.shards;
  std::vector<std::string> paths;
  if (job.shard) {
    paths.push_back(StrCat(dir, "/", ShardFileName(*job.shard, shards)));
  } else if (shards == 1) {
    paths.push_back(StrCat(dir, "/", kTableFileName));
  } else {
    for (uint32_t s = 0; s < shards; ++s) {
      paths.push_back(StrCat(dir, "/", ShardFileName(s, shards)));
    }
  }
  return paths;
}

// Opens each file just written, checking every checksum and its key count
// against `figures`, and describes it as its MANIFEST will (a shard's with
// its figures; job.shard's alone with it). Adds their sizes to
// summary->file_size.
absl::StatusOr<std::vector<ManifestFile>> VerifyTableFiles(
    const BuildJob& job, const std::vector<std::string>& paths,
    const std::vector<FileFigures>& figures, BuildSummary* summary) {
  const uint32_t files_written = static_cast<uint32_t>(paths.size());
  const bool sharded = job.shards > 1;
  std::vector<ManifestFile> files;
  for (uint32_t i = 0; i < files_written; ++i) {
    const uint32_t s = job.shard.value_or(i);
    const std::string shard_name =
        sharded ? StrCat("shard ", s, "'s table") : "the table";
    auto table = Table::Open(paths[i]);
    if (!table.ok()) {
      return absl::DataLossError(
          StrCat(shard_name,
                 " just written fails to open: ", table.status().message()));
    }
    if ((*table)->num_keys() != figures[i].keys) {
      return absl::DataLossError(StrCat(shard_name, " just written holds ",
                                        (*table)->num_keys(), " keys, not ",
                                        figures[i].keys));
    }
    table->reset();
    auto checksum = ChecksumFile(paths[i]);
    if (!checksum.ok()) return checksum.status();
    ManifestFile file;
    file.name = std::filesystem::path(paths[i]).filename().string();
    file.size = std::filesystem::file_size(paths[i]);
    file.xxh3 = *checksum;
    if (sharded) {
      file.shard = s;
      file.keys = figures[i].keys;
      file.key_bytes = figures[i].key_bytes;
      file.value_bytes = figures[i].value_bytes;
    }
    summary->file_size += file.size;
    files.push_back(std::move(file));
  }
  return files;
}

// The rules of a build of one shard (job.shard), beyond the others.
absl::Status ValidateShardJob(const BuildJob& job) {
  if (job.repository.empty()) {
    return absl::InvalidArgumentError(
        "--shard goes with --repository: the shards of a version are built "
        "into a table repository, then published together");
  }
  if (job.shards < 2) {
    return absl::InvalidArgumentError(StrCat(
        "--shard needs --shards N of 2 to ", kMaxShards,
        " (one shard is a whole version: roost-load build --repository)"));
  }
  if (*job.shard >= job.shards) {
    return absl::InvalidArgumentError(
        StrCat("--shard ", *job.shard, " is out of range: shards of ",
               job.shards, " are 0 to ", job.shards - 1));
  }
  if (job.on_duplicate != DuplicatePolicy::kError) {
    // Which value a retried attempt keeps would hang on the order its
    // records arrive in, and two attempts must write the same file.
    return absl::InvalidArgumentError(
        "--on-duplicate first or last goes not with --shard: which value "
        "is kept would depend on the order the records arrive in, which a "
        "retried task need not repeat; drop duplicates before the shard "
        "build, or leave --on-duplicate error");
  }
  const char* whole_version = job.keep_versions    ? "--keep-versions"
                              : job.max_shrink     ? "--max-shrink"
                              : job.data_timestamp ? "--data-timestamp"
                              : job.allow_schema_change
                                  ? "--allow-schema-change"
                                  : nullptr;
  if (whole_version != nullptr) {
    return absl::InvalidArgumentError(
        StrCat(whole_version,
               " goes not with --shard: it is of the whole version "
               "(roost-load publish takes --keep-versions, "
               "--data-timestamp and --allow-schema-change)"));
  }
  return absl::OkStatus();
}

}  // namespace

OrderedJson BuildSummary::ToJson() const {
  OrderedJson j;
  j["status"] = "ok";
  j["path"] = path;
  if (!repository.empty()) {
    j["repository"] = repository;
    j["table"] = table;
    j["version_name"] = version ? VersionDirName(*version) : "";
  }
  j["version"] = version ? OrderedJson(*version) : OrderedJson();
  j["format"] = TableFormatName(format);
  {
    OrderedJson in;
    InputOptionsJson(input, &in);
    j["input"] = in;
  }
  j["records"] = records;
  j["keys"] = keys;
  j["bad_records"] = bad_records;
  j["duplicates_dropped"] = duplicates;
  j["input_bytes"] = input_bytes;
  j["file_size"] = file_size;
  if (shards > 1) j["shards"] = shards;
  if (shard) j["shard"] = *shard;
  j["sort_runs_spilled"] = sort_runs;
  if (format == TableFormat::kCuckoo) {
    j["cuckoo_retries"] = cuckoo_retries;
    j["utilization"] = utilization;
  }
  if (pruned) j["pruned_versions"] = *pruned;
  if (abandoned) j["abandoned_versions_deleted"] = *abandoned;
  if (!retention_error.empty()) j["retention_error"] = retention_error;
  j["seconds"] = seconds;
  return j;
}

absl::Status ValidateBuildJob(const BuildJob& job) {
  const int destinations = !job.output_file.empty() + !job.data_dir.empty() +
                           !job.repository.empty();
  if (destinations != 1) {
    return absl::InvalidArgumentError(
        destinations == 0
            ? "give either --output FILE or --data-dir DIR with --table NAME "
              "(or --repository URI with --table NAME)"
            : "--output, --data-dir and --repository are mutually exclusive: "
              "give one");
  }
  const bool versioned = job.output_file.empty();
  const std::string_view where =
      job.repository.empty() ? "--data-dir" : "--repository";
  if (versioned) {
    if (job.table.empty()) {
      return absl::InvalidArgumentError(StrCat(where, " needs --table NAME"));
    }
    ROOST_RETURN_IF_ERROR(ValidateTableName(job.table));
  } else if (!job.table.empty()) {
    return absl::InvalidArgumentError(
        "--table goes with --data-dir or --repository");
  }
  if (job.shards < 1 || job.shards > kMaxShards) {
    return absl::InvalidArgumentError(
        StrCat("--shards ", job.shards, " is out of range: 1 to ", kMaxShards));
  }
  if (job.shard.has_value() != job.version.has_value()) {
    return absl::InvalidArgumentError(
        job.shard ? "--shard goes with --version V, the version roost-load "
                    "claim gave"
                  : "--version goes with --shard I (and --shards N): a "
                    "build of one shard of a claimed version");
  }
  if (job.shard) {
    ROOST_RETURN_IF_ERROR(ValidateShardJob(job));
  }
  if (job.shards > 1 && !versioned) {
    return absl::InvalidArgumentError(
        "--shards goes with --data-dir or --repository: the shards' files are "
        "published together as one version");
  }
  if (job.max_shrink && !versioned) {
    return absl::InvalidArgumentError(
        "--max-shrink goes with --data-dir or --repository");
  }
  if (!job.repository.empty()) {
    // The URI and the AWS_* environment. Finding credentials may ask a
    // service (STS, instance metadata): its refusal or silence is not a
    // usage error, and comes again, as an I/O error, when the store is
    // opened to publish.
    if (absl::Status s = OpenObjectStore(job.repository).status();
        absl::IsInvalidArgument(s)) {
      return s;
    }
  }
  if (job.data_timestamp && job.data_dir.empty() && job.repository.empty()) {
    return absl::InvalidArgumentError(
        "--data-timestamp goes with --data-dir or --repository (it is "
        "written into the version's MANIFEST; a table file has none)");
  }
  if (job.keep_versions && job.repository.empty()) {
    return absl::InvalidArgumentError("--keep-versions goes with --repository");
  }
  if (job.keep_versions && *job.keep_versions == 0) {
    return absl::InvalidArgumentError(
        "--keep-versions must be at least 1: the version published stays");
  }
  if (job.reader.rows) {
    if (!versioned) {
      return absl::InvalidArgumentError(
          "--rows goes with --data-dir or --repository: the rows' schema is "
          "written into the version's MANIFEST (a table file has none)");
    }
    const InputFormat format = job.reader.format;
    if (format == InputFormat::kArrowColumns) {
      if (job.reader.schema != nullptr) {
        return absl::InvalidArgumentError(
            "--schema goes not with --input-format arrow-columns: the "
            "stream's column types are the schema");
      }
    } else if (format == InputFormat::kCsv ||
               format == InputFormat::kJsonLines) {
      if (job.reader.schema == nullptr) {
        return absl::InvalidArgumentError(
            StrCat("--rows with --input-format ", InputFormatName(format),
                   " needs --schema FILE, the rows' schema as JSON "
                   "(docs/format/rows.md)"));
      }
      if (format == InputFormat::kCsv && !job.reader.value_column.empty()) {
        return absl::InvalidArgumentError(
            "--value-column goes not with --rows: the row's fields are the "
            "columns --schema names");
      }
    } else {
      return absl::InvalidArgumentError(
          StrCat("--rows reads --input-format csv, jsonl (with --schema) or "
                 "arrow-columns (roost-build --rows), not ",
                 InputFormatName(format)));
    }
  } else if (job.reader.schema != nullptr) {
    return absl::InvalidArgumentError("--schema goes with --rows");
  }
  if (job.allow_schema_change && !versioned) {
    return absl::InvalidArgumentError(
        "--allow-schema-change goes with --data-dir or --repository");
  }
  if (job.reader.format == InputFormat::kJsonLines &&
      job.reader.key_field.empty()) {
    return absl::InvalidArgumentError(
        "--input-format jsonl needs --key-field (a member name, or a JSON "
        "pointer such as /user/id)");
  }
  if (job.reader.format == InputFormat::kFixed &&
      (job.reader.key_size == 0 || job.reader.value_size == 0)) {
    return absl::InvalidArgumentError(
        "--input-format fixed needs --key-size and --value-size");
  }
  if (job.format == TableFormat::kCuckoo) {
    return ValidateCuckooBuildOptions(job.cuckoo);
  }
  return ValidateBlockBuildOptions(job.block);
}

absl::StatusOr<BuildSummary> RunBuild(const BuildJob& job, Progress* progress) {
  const auto start = std::chrono::steady_clock::now();
  ROOST_RETURN_IF_ERROR(ValidateBuildJob(job));
  auto inputs = ExpandInputs(job.inputs);
  if (!inputs.ok()) return inputs.status();
  // Reached (a repository) and staged before any input is read; what it
  // staged goes with it on any early return.
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<Destination> destination,
                         OpenDestination(job));

  const std::vector<std::string> paths =
      TableFilePaths(destination->staging_dir(), job);
  BuildSummary summary;
  summary.format = job.format;
  summary.shards = job.shards;
  summary.shard = job.shard;
  summary.input = job.reader;
  std::vector<ManifestInput> read;
  std::vector<FileFigures> figures;
  ROOST_RETURN_IF_ERROR(WriteTableFiles(job, *inputs, paths, &read, &figures,
                                        &summary, progress));

  // Verify what was written: every checksum, and the key counts.
  progress->Phase("verify");
  ROOST_ASSIGN_OR_RETURN(std::vector<ManifestFile> files,
                         VerifyTableFiles(job, paths, figures, &summary));
  FileFigures all;
  for (const FileFigures& f : figures) all.Merge(f);
  progress->Done(summary.keys, summary.file_size);

  progress->Phase("publish");
  ROOST_ASSIGN_OR_RETURN(
      Publication published,
      destination->Publish(MakeManifest(job, std::move(files), all,
                                        std::move(read), summary.schema)));
  summary.path = std::move(published.path);
  summary.version = published.version;
  if (!published.repository.empty()) {
    summary.repository = std::move(published.repository);
    summary.table = job.table;
  }
  if (published.pruned) {
    summary.pruned = std::move(published.pruned->deleted);
    summary.abandoned = std::move(published.pruned->abandoned);
  }
  summary.retention_error = std::move(published.retention_error);
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return summary;
}

}  // namespace roost
