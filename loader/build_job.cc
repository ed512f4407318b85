#include "loader/build_job.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "loader/owned_dir.h"
#include "loader/publish.h"
#include "loader/sorter.h"
#include "storage/block_format.h"
#include "storage/cuckoo_format.h"
#include "storage/file.h"
#include "storage/manifest.h"
#include "util/escape.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr std::string_view kLoaderVersion = "roost-load 0.1.0";

// Where each record came from, without storing a location per record: per
// input, the index of its first good record and the positions of the bad
// ones skipped in it.
class Origins {
 public:
  Origins(InputFormat format, const RecordReaderOptions& reader)
      : format_(format),
        record_size_(uint64_t{reader.key_size} + reader.value_size) {}

  void StartInput(const std::string& path, uint64_t first_record) {
    inputs_.push_back({path, first_record, {}});
  }
  // A bad record was skipped after `good_in_input` good ones of this input.
  void Skipped(uint64_t good_in_input) {
    inputs_.back().skipped.push_back(good_in_input);
  }

  std::string Of(uint64_t record) const {
    auto it = std::prev(std::upper_bound(
        inputs_.begin(), inputs_.end(), record,
        [](uint64_t r, const Input& in) { return r < in.first; }));
    const uint64_t n = record - it->first;  // good records before it
    const uint64_t bad = static_cast<uint64_t>(
        std::upper_bound(it->skipped.begin(), it->skipped.end(), n) -
        it->skipped.begin());
    switch (format_) {
      case InputFormat::kTsv:
        return StrCat(it->path, ":", n + bad + 1);
      case InputFormat::kFixed:
        return StrCat(it->path, "@", (n + bad) * record_size_);
      case InputFormat::kLengthPrefixed:
        break;
    }
    return StrCat(it->path, " record ", n + bad + 1);
  }

 private:
  struct Input {
    std::string path;
    uint64_t first;
    std::vector<uint64_t> skipped;
  };
  InputFormat format_;
  uint64_t record_size_;
  std::vector<Input> inputs_;
};

absl::Status DuplicateError(const Origins& origins, std::string_view key,
                            uint64_t first, uint64_t second) {
  return absl::InvalidArgumentError(
      StrCat(origins.Of(second), ": duplicate key ", PrintableKey(key),
             " (first seen at ", origins.Of(first),
             "); --on-duplicate=first or last keeps one"));
}

// Lengths seen, for the MANIFEST's fixed widths.
struct Widths {
  bool any = false;
  bool key_fixed = true, value_fixed = true;
  uint64_t key = 0, value = 0;
  uint64_t key_bytes = 0, value_bytes = 0;
  uint64_t max_key = 0, max_value = 0;

  void Add(std::string_view k, std::string_view v) {
    if (!any) {
      key = k.size();
      value = v.size();
      any = true;
    }
    key_fixed = key_fixed && k.size() == key;
    value_fixed = value_fixed && v.size() == value;
    key_bytes += k.size();
    value_bytes += v.size();
    max_key = std::max<uint64_t>(max_key, k.size());
    max_value = std::max<uint64_t>(max_value, v.size());
  }
};

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

Json OptionsJson(const BuildJob& job) {
  Json o;
  o["format"] = TableFormatName(job.format);
  o["max_value_size"] = job.reader.max_value_size;
  o["on_duplicate"] = job.on_duplicate == DuplicatePolicy::kError ? "error"
                      : job.on_duplicate == DuplicatePolicy::kKeepFirst
                          ? "first"
                          : "last";
  if (job.format == TableFormat::kCuckoo) {
    o["utilization"] = job.cuckoo.utilization;
    o["hash_functions"] = job.cuckoo.num_hash_functions;
    o["overflow_bits_per_block"] = job.cuckoo.overflow_bits_per_block;
    o["max_displacement_depth"] = job.cuckoo.max_displacement_depth;
    o["seed"] = job.cuckoo.seed;
  } else {
    o["block_size"] = job.block.block_size;
    o["restart_interval"] = job.block.restart_interval;
    o["hash_index"] = job.block.hash_index;
    o["hash_index_utilization"] = job.block.hash_index_utilization;
    o["compression"] = CompressionName(job.block.compression);
    o["index_search"] = IndexSearchName(job.block.index_search);
    o["uniformity_threshold"] = job.block.uniformity_threshold;
  }
  return o;
}

// Reads every input, calling `sink(key, value)` for each good record.
template <typename Sink>
absl::Status ReadInputs(const BuildJob& job,
                        const std::vector<std::string>& inputs,
                        Origins* origins, std::vector<ManifestInput>* read,
                        BuildSummary* summary, Progress* progress,
                        Sink&& sink) {
  progress->Phase("read");
  uint64_t bytes_before = 0;
  for (const std::string& path : inputs) {
    auto reader = RecordReader::Open(path, job.reader);
    if (!reader.ok()) return reader.status();
    origins->StartInput(path == "-" ? "<stdin>" : path, summary->records);
    uint64_t good_here = 0;
    std::string_view key, value;
    while (true) {
      absl::StatusOr<bool> more = (*reader)->Next(&key, &value);
      if (!more.ok()) {
        if (more.status().code() != absl::StatusCode::kInvalidArgument) {
          return more.status();  // I/O: final
        }
        if (++summary->bad_records > job.max_bad_records) {
          return more.status();
        }
        origins->Skipped(good_here);
        progress->Note(StrCat("skipping ", more.status().message()));
        // A binary reader cannot find the next record after a bad one.
        if (job.reader.format != InputFormat::kTsv) break;
        continue;
      }
      if (!*more) break;
      absl::Status s = sink(key, value);
      if (!s.ok()) return s;
      ++good_here;
      ++summary->records;
      progress->Update(summary->records,
                       bytes_before + (*reader)->bytes_read());
    }
    if (const uint64_t line = (*reader)->first_cr_line()) {
      progress->Warn(StrCat(path == "-" ? "<stdin>" : path, ":", line,
                            ": warning: lines end in \\r, which stays at the "
                            "end of each value; --strip-cr drops it"));
    }
    const uint64_t bytes = (*reader)->bytes_read();
    bytes_before += bytes;
    read->push_back({path, bytes});
  }
  summary->input_bytes = bytes_before;
  progress->Done(summary->records, bytes_before);
  if (summary->records == 0 && !job.allow_empty) {
    return absl::InvalidArgumentError(
        "no records in the input; --allow-empty publishes an empty table");
  }
  return absl::OkStatus();
}

}  // namespace

OrderedJson BuildSummary::ToJson() const {
  OrderedJson j;
  j["status"] = "ok";
  j["path"] = path;
  j["version"] = version ? OrderedJson(*version) : OrderedJson();
  j["format"] = TableFormatName(format);
  j["records"] = records;
  j["keys"] = keys;
  j["bad_records"] = bad_records;
  j["duplicates_dropped"] = duplicates;
  j["input_bytes"] = input_bytes;
  j["file_size"] = file_size;
  j["sort_runs_spilled"] = sort_runs;
  if (format == TableFormat::kCuckoo) {
    j["cuckoo_retries"] = cuckoo_retries;
    j["utilization"] = utilization;
  }
  j["seconds"] = seconds;
  return j;
}

absl::Status ValidateBuildJob(const BuildJob& job) {
  if (job.output_file.empty() == job.data_dir.empty()) {
    return absl::InvalidArgumentError(
        "give either --output FILE or --data-dir DIR with --table NAME");
  }
  if (!job.data_dir.empty()) {
    if (job.table.empty()) {
      return absl::InvalidArgumentError("--data-dir needs --table NAME");
    }
    ROOST_RETURN_IF_ERROR(ValidateTableName(job.table));
  } else if (!job.table.empty()) {
    return absl::InvalidArgumentError("--table goes with --data-dir");
  }
  if (job.max_shrink && job.data_dir.empty()) {
    return absl::InvalidArgumentError("--max-shrink goes with --data-dir");
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
  if (!publisher) {
    const std::filesystem::path out(job.output_file);
    const std::string parent =
        out.has_parent_path() ? out.parent_path().string() : ".";
    ROOST_ASSIGN_OR_RETURN(
        cleanup.dir,
        MakeOwnedDir(parent, StrCat(out.filename().string(), ".tmp-")));
    table_path = StrCat(cleanup.dir, "/", kTableFileName);
  }

  BuildSummary summary;
  summary.format = job.format;
  Origins origins(job.reader.format, job.reader);
  std::vector<ManifestInput> read;
  Widths widths;

  if (job.format == TableFormat::kCuckoo) {
    CuckooBuildOptions options = job.cuckoo;
    options.on_duplicate = job.on_duplicate;
    ROOST_ASSIGN_OR_RETURN(std::unique_ptr<CuckooTableBuilder> builder,
                           CuckooTableBuilder::Create(table_path, options));
    ROOST_RETURN_IF_ERROR(
        ReadInputs(job, *inputs, &origins, &read, &summary, progress,
                   [&](std::string_view k, std::string_view v) {
                     return builder->Add(k, v);
                   }));
    progress->Phase("build");
    auto report = builder->Finish();
    if (!report.ok()) {
      if (auto dup = builder->duplicate()) {
        return DuplicateError(origins, dup->key, dup->first, dup->second);
      }
      return report.status();
    }
    progress->Done(report->num_keys, report->file_size);
    if (report->retries > 0) {
      progress->Note(StrCat("could not place every key at utilization ",
                            report->requested_utilization, "; retried ",
                            report->retries, " times and built at ",
                            fmt::format("{:.3f}", report->utilization)));
    }
    summary.keys = report->num_keys;
    widths.any = report->num_keys > 0;
    widths.key_fixed = report->min_key_length == report->max_key_length;
    widths.value_fixed = report->min_value_length == report->max_value_length;
    widths.key = report->min_key_length;
    widths.value = report->min_value_length;
    widths.key_bytes = report->key_bytes;
    widths.value_bytes = report->value_bytes;
    widths.max_key = report->max_key_length;
    widths.max_value = report->max_value_length;
    summary.duplicates = report->duplicates_dropped;
    summary.cuckoo_retries = report->retries;
    summary.utilization = report->utilization;
  } else {
    SorterOptions sort_options;
    sort_options.memory_limit = job.memory_limit;
    sort_options.temp_dir = job.temp_dir;
    ExternalSorter sorter(sort_options);
    ROOST_RETURN_IF_ERROR(
        ReadInputs(job, *inputs, &origins, &read, &summary, progress,
                   [&](std::string_view k, std::string_view v) {
                     return sorter.Add(k, v);
                   }));
    progress->Phase("sort");
    ROOST_RETURN_IF_ERROR(sorter.Finish());
    summary.sort_runs = sorter.runs_spilled();
    progress->Done(summary.records, summary.input_bytes);
    if (summary.sort_runs > 0) {
      progress->Note(StrCat("sorted in ", summary.sort_runs,
                            " runs spilled to disk (--memory-limit)"));
    }
    progress->Phase("build");
    auto builder = BlockTableBuilder::Create(table_path, job.block);
    if (!builder.ok()) return builder.status();
    // Equal keys arrive together, in input order: keep one by the policy.
    std::string held_key, held_value;
    uint64_t held_sequence = 0;
    bool holding = false;
    std::string_view key, value;
    uint64_t sequence = 0;
    auto emit = [&]() -> absl::Status {
      widths.Add(held_key, held_value);
      ++summary.keys;
      progress->Update(summary.keys, 0);
      return (*builder)->Add(held_key, held_value);
    };
    while (true) {
      absl::StatusOr<bool> more = sorter.Next(&key, &value, &sequence);
      if (!more.ok()) return more.status();
      if (!*more) break;
      if (holding && key == std::string_view(held_key)) {
        if (job.on_duplicate == DuplicatePolicy::kError) {
          return DuplicateError(origins, key, held_sequence, sequence);
        }
        ++summary.duplicates;
        if (job.on_duplicate == DuplicatePolicy::kKeepLast) {
          held_value.assign(value);
          held_sequence = sequence;
        }
        continue;
      }
      if (holding) ROOST_RETURN_IF_ERROR(emit());
      held_key.assign(key);
      held_value.assign(value);
      held_sequence = sequence;
      holding = true;
    }
    if (holding) ROOST_RETURN_IF_ERROR(emit());
    auto report = (*builder)->Finish();
    if (!report.ok()) return report.status();
    progress->Done(summary.keys, report->file_size);
  }

  // Verify what was written: every checksum, and the key count.
  progress->Phase("verify");
  auto table = Table::Open(table_path);
  if (!table.ok()) {
    return absl::DataLossError(StrCat("the table just written fails to open: ",
                                      table.status().message()));
  }
  if ((*table)->num_keys() != summary.keys) {
    return absl::DataLossError(StrCat("the table just written holds ",
                                      (*table)->num_keys(), " keys, not ",
                                      summary.keys));
  }
  table->reset();
  auto checksum = ChecksumFile(table_path);
  if (!checksum.ok()) return checksum.status();
  summary.file_size = std::filesystem::file_size(table_path);
  progress->Done(summary.keys, summary.file_size);

  progress->Phase("publish");
  if (publisher) {
    ROOST_RETURN_IF_ERROR(
        CheckShrink(job, publisher->table_dir(), summary.keys));
    Manifest m;
    m.table = job.table;
    m.format = std::string(TableFormatName(job.format));
    m.format_version =
        job.format == TableFormat::kCuckoo
            ? StrCat(kCuckooMajorVersion, ".", kCuckooMinorVersion)
            : StrCat(kBlockTableMajorVersion, ".", kBlockTableMinorVersion);
    m.keys = summary.keys;
    m.key_bytes = widths.key_bytes;
    m.value_bytes = widths.value_bytes;
    if (widths.any && widths.key_fixed) m.key_width = widths.key;
    if (widths.any && widths.value_fixed) m.value_width = widths.value;
    m.max_key_length = widths.max_key;
    m.max_value_length = widths.max_value;
    m.files.push_back(
        {std::string(kTableFileName), summary.file_size, *checksum});
    m.build_options = OptionsJson(job);
    m.inputs = read;
    m.loader = std::string(kLoaderVersion);
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
