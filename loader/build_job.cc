#include "loader/build_job.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "loader/build_manifest.h"
#include "loader/publish.h"
#include "loader/repository_destination.h"
#include "loader/table_files.h"
#include "storage/block_format.h"
#include "storage/cuckoo_format.h"
#include "storage/file.h"
#include "storage/manifest.h"
#include "storage/partition.h"
#include "util/owned_dir.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// With --max-shrink: refuses `keys` when the newest complete version of the
// table in `table_dir` had more than it by over the allowed share.
absl::Status CheckShrink(const BuildJob& job, const std::string& table_dir,
                         uint64_t keys) {
  if (!job.max_shrink) return absl::OkStatus();
  auto versions = ListVersions(table_dir);
  if (!versions.ok()) return versions.status();
  for (auto it = versions->rbegin(); it != versions->rend(); ++it) {
    if (!it->complete) continue;
    auto previous = ReadManifest(it->path + "/" + std::string(kManifestName));
    if (!previous.ok()) return previous.status();
    const double floor =
        static_cast<double>(previous->keys) * (1 - *job.max_shrink);
    if (static_cast<double>(keys) < floor) {
      return absl::InvalidArgumentError(StrCat(
          "the new version of ", job.table, " holds ", keys, " keys; ",
          VersionDirName(it->version), " holds ", previous->keys,
          ", and --max-shrink ", fmt::format("{:g}", *job.max_shrink * 100),
          "% allows no fewer than ", static_cast<uint64_t>(std::ceil(floor)),
          "; nothing was published"));
    }
    return absl::OkStatus();
  }
  return absl::OkStatus();  // the first version
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
  j["records"] = records;
  j["keys"] = keys;
  j["bad_records"] = bad_records;
  j["duplicates_dropped"] = duplicates;
  j["input_bytes"] = input_bytes;
  j["file_size"] = file_size;
  if (shards > 1) j["shards"] = shards;
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
    // The URI and the AWS_* environment, checked without a request.
    ROOST_RETURN_IF_ERROR(OpenObjectStore(job.repository).status());
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

  // Where the table is written before it is published.
  std::unique_ptr<Publisher> publisher;
  std::string table_path;
  // A repository is opened, and reached, before any input is read.
  std::optional<RepositoryTarget> target;
  if (!job.repository.empty()) {
    ROOST_ASSIGN_OR_RETURN(target, OpenRepositoryTarget(job));
  }
  if (!job.data_dir.empty()) {
    auto p = Publisher::Start(job.data_dir, job.table);
    if (!p.ok()) return p.status();
    publisher = std::move(*p);
    table_path = publisher->staging_dir() + "/" + std::string(kTableFileName);
  }
  // A file is written in a private directory beside its destination
  // (FILE.tmp-<pid>-XXXXXX: mode 0700, a fresh name, where no one can have
  // planted a link or a file), then renamed into place. Removed, with what
  // it holds, on any early return; the next build removes it if this
  // process is killed.
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      if (!dir.empty()) RemoveTree(dir);
    }
  } cleanup;
  // For a repository, the version is built in a private directory under
  // --temp-dir (roost-publish-<pid>-XXXXXX), removed when done and, if
  // this process is killed, by the next build.
  std::string version_dir = publisher ? publisher->staging_dir() : "";
  if (target) {
    const std::string parent =
        job.temp_dir.empty() ? std::filesystem::temp_directory_path().string()
                             : job.temp_dir;
    ROOST_ASSIGN_OR_RETURN(cleanup.dir, MakeOwnedDir(parent, "roost-publish-"));
    version_dir = cleanup.dir;
    table_path = StrCat(version_dir, "/", kTableFileName);
  } else if (!publisher) {
    const std::filesystem::path out(job.output_file);
    const std::string parent =
        out.has_parent_path() ? out.parent_path().string() : ".";
    ROOST_ASSIGN_OR_RETURN(
        cleanup.dir,
        MakeOwnedDir(parent, StrCat(out.filename().string(), ".tmp-")));
    table_path = StrCat(cleanup.dir, "/", kTableFileName);
  }

  // One table file, or one per shard.
  const uint32_t shards = job.shards;
  std::vector<std::string> paths;
  if (shards == 1) {
    paths.push_back(table_path);
  } else {
    for (uint32_t s = 0; s < shards; ++s) {
      paths.push_back(StrCat(version_dir, "/", ShardFileName(s, shards)));
    }
  }
  BuildSummary summary;
  summary.format = job.format;
  summary.shards = shards;
  std::vector<ManifestInput> read;
  std::vector<FileFigures> figures;
  ROOST_RETURN_IF_ERROR(WriteTableFiles(job, *inputs, paths, &read, &figures,
                                        &summary, progress));

  // Verify what was written: every checksum, and the key counts.
  progress->Phase("verify");
  std::vector<ManifestFile> files;
  FileFigures all;
  for (uint32_t s = 0; s < shards; ++s) {
    const std::string shard_name =
        shards == 1 ? "the table" : StrCat("shard ", s, "'s table");
    auto table = Table::Open(paths[s]);
    if (!table.ok()) {
      return absl::DataLossError(
          StrCat(shard_name,
                 " just written fails to open: ", table.status().message()));
    }
    if ((*table)->num_keys() != figures[s].keys) {
      return absl::DataLossError(StrCat(shard_name, " just written holds ",
                                        (*table)->num_keys(), " keys, not ",
                                        figures[s].keys));
    }
    table->reset();
    auto checksum = ChecksumFile(paths[s]);
    if (!checksum.ok()) return checksum.status();
    ManifestFile file;
    file.name = std::filesystem::path(paths[s]).filename().string();
    file.size = std::filesystem::file_size(paths[s]);
    file.xxh3 = *checksum;
    if (shards > 1) {
      file.shard = s;
      file.keys = figures[s].keys;
      file.key_bytes = figures[s].key_bytes;
      file.value_bytes = figures[s].value_bytes;
    }
    summary.file_size += file.size;
    files.push_back(std::move(file));
    all.Merge(figures[s]);
  }
  progress->Done(summary.keys, summary.file_size);

  progress->Phase("publish");
  if (publisher || target) {
    if (publisher) {
      ROOST_RETURN_IF_ERROR(
          CheckShrink(job, publisher->table_dir(), summary.keys));
    } else {
      ROOST_RETURN_IF_ERROR(CheckRepositoryShrink(*target, job, summary.keys));
    }
    Manifest m = MakeManifest(job, std::move(files), all, std::move(read));
    if (target) {
      ROOST_ASSIGN_OR_RETURN(
          RepositoryPublished published,
          PublishToRepository(*target, job, version_dir, std::move(m)));
      summary.path = published.uri;
      summary.version = published.version;
      summary.repository = target->store->uri();
      summary.table = job.table;
      if (job.keep_versions) {
        summary.pruned = published.pruned.deleted;
        summary.abandoned = published.pruned.abandoned;
        summary.retention_error = published.retention_error;
      }
      summary.seconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
      return summary;
    }
    auto published = publisher->Publish([&](uint64_t version) -> absl::Status {
      m.version = version;
      auto file = WritableFile::Create(publisher->staging_dir() + "/" +
                                       std::string(kManifestName));
      if (!file.ok()) return file.status();
      ROOST_RETURN_IF_ERROR((*file)->Append(m.ToJson()));
      return (*file)->Close(/*sync=*/true);
    });
    if (!published.ok()) return published.status();
    summary.path = published->path;
    summary.version = published->version;
  } else {
    ROOST_RETURN_IF_ERROR(FsyncPath(table_path));
    if (::rename(table_path.c_str(), job.output_file.c_str()) != 0) {
      return absl::InternalError(StrCat("cannot rename ", table_path, " to ",
                                        job.output_file, ": ",
                                        std::strerror(errno)));
    }
    const std::filesystem::path parent =
        std::filesystem::absolute(job.output_file).parent_path();
    ROOST_RETURN_IF_ERROR(FsyncPath(parent.string()));
    summary.path = job.output_file;
  }
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return summary;
}

}  // namespace roost
