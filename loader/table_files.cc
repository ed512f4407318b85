#include "loader/table_files.h"

#include <algorithm>
#include <memory>

#include "loader/sorter.h"
#include "loader/unique_pairs.h"
#include "storage/block/block_table_builder.h"
#include "storage/cuckoo/cuckoo_table_builder.h"
#include "storage/partition.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {
// Where each record came from, without storing a location per record: per
// input, the index of its first good record and the positions of the bad
// ones skipped in it.
class Origins {
 public:
  Origins(InputFormat format, const RecordReaderOptions& reader)
      : format_(format),
        record_size_(uint64_t{reader.key_size} + reader.value_size),
        header_(reader.header) {}

  void StartInput(const std::string& path, uint64_t first_record) {
    inputs_.push_back({path, first_record, {}, {}});
  }
  // A bad record was skipped after `good_in_input` good ones of this input.
  void Skipped(uint64_t good_in_input) {
    inputs_.back().skipped.push_back(good_in_input);
  }
  // The input's rows by source (RecordReader::spans()), once it is read.
  void Finished(std::vector<RecordReader::Span> spans) {
    inputs_.back().spans = std::move(spans);
  }

  std::string Of(uint64_t record) const {
    auto it = std::prev(std::upper_bound(
        inputs_.begin(), inputs_.end(), record,
        [](uint64_t r, const Input& in) { return r < in.first; }));
    const uint64_t n = record - it->first;  // good records before it
    if (!it->spans.empty()) {
      auto span = std::prev(
          std::upper_bound(it->spans.begin(), it->spans.end(), n,
                           [](uint64_t r, const RecordReader::Span& s) {
                             return r < s.first_record;
                           }));
      return StrCat(span->source, " row ",
                    span->first_row + (n - span->first_record));
    }
    const uint64_t bad = static_cast<uint64_t>(
        std::upper_bound(it->skipped.begin(), it->skipped.end(), n) -
        it->skipped.begin());
    switch (format_) {
      case InputFormat::kTsv:
      case InputFormat::kJsonLines:
        // Every line is a record or a bad one.
        return StrCat(it->path, ":", n + bad + 1);
      case InputFormat::kCsv:
        // A row may span lines, and which line it started on is not kept.
        return StrCat(it->path, " row ", n + bad + 1,
                      header_ ? " after the header" : "");
      case InputFormat::kFixed:
        return StrCat(it->path, "@", (n + bad) * record_size_);
      case InputFormat::kLengthPrefixed:
      case InputFormat::kArrowColumns:
        break;
    }
    return StrCat(it->path, " record ", n + bad + 1);
  }

 private:
  struct Input {
    std::string path;
    uint64_t first;
    std::vector<uint64_t> skipped;
    std::vector<RecordReader::Span> spans;
  };
  InputFormat format_;
  uint64_t record_size_;
  bool header_;
  std::vector<Input> inputs_;
};

absl::Status DuplicateError(const Origins& origins, std::string_view key,
                            uint64_t first, uint64_t second) {
  return absl::InvalidArgumentError(
      StrCat(origins.Of(second), ": duplicate key ", PrintableKey(key),
             " (first seen at ", origins.Of(first),
             "); --on-duplicate=first or last keeps one"));
}

// What the build warns of, once an input is read: something about it the
// user should know, although every record of it is stored as it was.
void WarnAboutInput(const std::string& name, InputFormat format,
                    const RecordReader& reader, Progress* progress) {
  if (const uint64_t line = reader.first_cr_line()) {
    progress->Warn(StrCat(name, ":", line,
                          ": warning: lines end in \\r, which stays at the "
                          "end of each value; --strip-cr drops it"));
  }
  // Most often the header line pandas' to_csv writes (its index column
  // unnamed), or a key column missing from some rows.
  if (const uint64_t line = reader.first_empty_key_line();
      line != 0 && format != InputFormat::kTsv) {
    progress->Warn(StrCat(name, ":", line,
                          ": warning: empty key, stored as the key \"\""));
  } else if (line != 0) {
    progress->Warn(StrCat(name, ":", line,
                          ": warning: empty key (the line starts with a "
                          "tab), stored as the key \"\": a header line, or "
                          "a missing key?"));
  }
  const RecordReader::CsvQuoting quoting = reader.csv_quoting();
  if (quoting.values > 0) {
    const std::string_view v = quoting.first_value;
    const bool printable = std::all_of(
        v.begin(), v.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    progress->Warn(StrCat(
        name, ": warning: values are CSV-quoted: each of the first ",
        quoting.values,
        " after line 1 starts and ends with \" and doubles the quotes inside",
        printable ? StrCat(" (line ", quoting.first_line, ": ", v, ")") : "",
        ", as a CSV writer quotes them; they are stored as they are, quotes "
        "included. Write the TSV unquoted (pandas: to_csv(sep=\"\\t\", "
        "quoting=csv.QUOTE_NONE, header=False))"));
  }
}

// With --rows: the schema of the rows `reader` returned, which is the
// build's, and must be the same for every input.
absl::Status TakeRowSchema(const std::string& path, const RecordReader& reader,
                           BuildSummary* summary) {
  const RowSchema* schema = reader.row_schema();
  const std::string name = path == "-" ? "<stdin>" : path;
  if (schema == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(name,
               ": no row schema (--rows reads csv, jsonl and "
               "arrow-columns input)"));
  }
  if (!summary->schema) {
    summary->schema = *schema;
  } else if (!(*summary->schema == *schema)) {
    return absl::InvalidArgumentError(
        StrCat(name, ": its rows' schema ", DumpJson(schema->ToJson(), false),
               " is not the one of the inputs before it, ",
               DumpJson(summary->schema->ToJson(), false),
               ": every input of a build of rows has the same columns and "
               "types"));
  }
  return absl::OkStatus();
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
        // Only a malformed TSV line, CSV row or JSON line is skipped.
        // Input cut short (DataLoss), of another format or unreadable is
        // final; and after a malformed binary record (or an unterminated
        // CSV quote, or a CSV header without the columns asked for) there
        // is no telling where the next record starts, so skipping it would
        // drop every record after it unseen: the reader has stopped().
        if (more.status().code() != absl::StatusCode::kInvalidArgument ||
            (*reader)->stopped()) {
          return more.status();
        }
        if (++summary->bad_records > job.max_bad_records) {
          return more.status();
        }
        origins->Skipped(good_here);
        progress->Note(StrCat("skipping ", more.status().message()));
        continue;
      }
      if (!*more) break;
      if (job.shard) {
        // A shard build's input holds its shard's records alone: a record
        // of another shard is a bad record, skipped (whatever the input
        // format: its framing is sound) within --max-bad-records.
        const uint32_t owner = PartitionOf(key, job.shards);
        if (owner != *job.shard) {
          absl::Status wrong = absl::InvalidArgumentError(
              StrCat(origins->Of(summary->records), ": key ", PrintableKey(key),
                     " belongs to shard ", owner, " of ", job.shards,
                     ", not to shard ", *job.shard,
                     " being built: the input of --shard I holds shard I's "
                     "records alone (docs/format/partitioning.md)"));
          if (++summary->bad_records > job.max_bad_records) return wrong;
          origins->Skipped(good_here);
          progress->Note(StrCat("skipping ", wrong.message()));
          continue;
        }
      }
      absl::Status s = sink(key, value);
      if (!s.ok()) return s;
      ++good_here;
      ++summary->records;
      progress->UpdateWith(summary->records, [&] {
        return bytes_before + (*reader)->bytes_read();
      });
    }
    if (job.reader.rows) {
      ROOST_RETURN_IF_ERROR(TakeRowSchema(path, **reader, summary));
    }
    origins->Finished((*reader)->spans());
    WarnAboutInput(path == "-" ? "<stdin>" : path, job.reader.format, **reader,
                   progress);
    const uint64_t bytes = (*reader)->bytes_read();
    bytes_before += bytes;
    read->push_back({path, bytes});
  }
  summary->input_bytes = bytes_before;
  progress->Done(summary->records, bytes_before);
  // A shard with no records is a valid empty table: the partition sent
  // none of the version's keys there.
  if (summary->records == 0 && !job.allow_empty && !job.shard) {
    return absl::InvalidArgumentError(
        "no records in the input; --allow-empty publishes an empty table");
  }
  return absl::OkStatus();
}

// What a cuckoo table's figures are, from its builder's report.
FileFigures FiguresOf(const CuckooBuildReport& report) {
  FileFigures f;
  f.keys = report.num_keys;
  f.key_fixed = report.min_key_length == report.max_key_length;
  f.value_fixed = report.min_value_length == report.max_value_length;
  f.key = report.min_key_length;
  f.value = report.min_value_length;
  f.key_bytes = report.key_bytes;
  f.value_bytes = report.value_bytes;
  f.max_key = report.max_key_length;
  f.max_value = report.max_value_length;
  return f;
}

// Cuckoo tables: one builder per file; each holds its pairs until Finish().
absl::Status WriteCuckooFiles(const BuildJob& job,
                              const std::vector<std::string>& inputs,
                              const std::vector<std::string>& paths,
                              std::vector<ManifestInput>* read,
                              std::vector<FileFigures>* figures,
                              BuildSummary* summary, Progress* progress) {
  const uint32_t shards = static_cast<uint32_t>(paths.size());
  CuckooBuildOptions options = job.cuckoo;
  options.threads = job.threads;
  options.on_duplicate = job.on_duplicate;
  std::vector<std::unique_ptr<CuckooTableBuilder>> builders;
  for (const std::string& path : paths) {
    ROOST_ASSIGN_OR_RETURN(std::unique_ptr<CuckooTableBuilder> builder,
                           CuckooTableBuilder::Create(path, options));
    builders.push_back(std::move(builder));
  }
  // Sharded: the input record number of each pair added to each shard, so
  // that a duplicate a shard's builder finds is reported at its input line.
  std::vector<std::vector<uint64_t>> records(shards > 1 ? shards : 0);
  Origins origins(job.reader.format, job.reader);
  ROOST_RETURN_IF_ERROR(
      ReadInputs(job, inputs, &origins, read, summary, progress,
                 [&](std::string_view k, std::string_view v) {
                   if (shards == 1) return builders[0]->Add(k, v);
                   const uint32_t shard = PartitionOf(k, shards);
                   records[shard].push_back(summary->records);
                   return builders[shard]->Add(k, v);
                 }));
  progress->Phase("build");
  double utilization_sum = 0;  // weighted by keys
  uint64_t file_bytes = 0;
  for (uint32_t s = 0; s < shards; ++s) {
    auto report = builders[s]->Finish();
    if (!report.ok()) {
      if (auto dup = builders[s]->duplicate()) {
        const auto record = [&](uint64_t i) {
          return shards == 1 ? i : records[s][i];
        };
        return DuplicateError(origins, dup->key, record(dup->first),
                              record(dup->second));
      }
      return report.status();
    }
    builders[s].reset();  // its pairs are written: free them
    if (shards > 1) std::vector<uint64_t>().swap(records[s]);
    if (report->retries > 0) {
      progress->Note(StrCat(
          "could not place every key",
          shards > 1 ? StrCat(" of shard ", s) : "", " at utilization ",
          report->requested_utilization, "; retried ", report->retries,
          " times and built at ", fmt::format("{:.3f}", report->utilization)));
    }
    FileFigures& f = (*figures)[s];
    f = FiguresOf(*report);
    summary->keys += report->num_keys;
    summary->duplicates += report->duplicates_dropped;
    summary->cuckoo_retries += report->retries;
    file_bytes += report->file_size;
    utilization_sum += report->utilization * static_cast<double>(f.keys);
    if (shards == 1) summary->utilization = report->utilization;
  }
  if (shards > 1 && summary->keys > 0) {
    summary->utilization = utilization_sum / static_cast<double>(summary->keys);
  }
  progress->Done(summary->keys, file_bytes);
  return absl::OkStatus();
}

// A sharded block build sorts (shard, key): each key behind its shard
// number, 4 bytes big-endian, so that one sort orders the shards one after
// the other and each shard's keys within it.
constexpr size_t kShardPrefix = 4;

void AppendShardPrefix(uint32_t shard, std::string* out) {
  for (int i = 3; i >= 0; --i)
    out->push_back(static_cast<char>(shard >> (8 * i)));
}

uint32_t ShardOfPrefixed(std::string_view key) {
  uint32_t shard = 0;
  for (size_t i = 0; i < kShardPrefix; ++i) {
    shard = (shard << 8) | static_cast<uint8_t>(key[i]);
  }
  return shard;
}

// Block tables: one external sort (one --memory-limit, one set of runs),
// then the shards' files written in turn from the sorted stream.
absl::Status WriteBlockFiles(const BuildJob& job,
                             const std::vector<std::string>& inputs,
                             const std::vector<std::string>& paths,
                             std::vector<ManifestInput>* read,
                             std::vector<FileFigures>* figures,
                             BuildSummary* summary, Progress* progress) {
  const uint32_t shards = static_cast<uint32_t>(paths.size());
  const size_t prefix = shards > 1 ? kShardPrefix : 0;
  SorterOptions sort_options;
  sort_options.memory_limit = job.memory_limit;
  sort_options.temp_dir = job.temp_dir;
  sort_options.threads = job.threads;
  ExternalSorter sorter(sort_options);
  Origins origins(job.reader.format, job.reader);
  std::string prefixed;
  // Records per shard: each file's builder is told how many keys to expect
  // (at most these; duplicates dropped make fewer), so that it sizes its
  // filter up front instead of keeping a hash of every key.
  std::vector<uint64_t> shard_records(shards, 0);
  ROOST_RETURN_IF_ERROR(
      ReadInputs(job, inputs, &origins, read, summary, progress,
                 [&](std::string_view k, std::string_view v) {
                   if (shards == 1) {
                     ++shard_records[0];
                     return sorter.Add(k, v);
                   }
                   prefixed.clear();
                   const uint32_t shard = PartitionOf(k, shards);
                   ++shard_records[shard];
                   AppendShardPrefix(shard, &prefixed);
                   prefixed.append(k);
                   return sorter.Add(prefixed, v);
                 }));
  progress->Phase("sort");
  ROOST_RETURN_IF_ERROR(sorter.Finish());
  summary->sort_runs = sorter.runs_spilled();
  progress->Done(summary->records, summary->input_bytes);
  if (summary->sort_runs > 0) {
    progress->Note(StrCat("sorted in ", summary->sort_runs,
                          " runs spilled to disk (--memory-limit)"));
  }
  progress->Phase("build");
  // The file being written (shard `building`), and the first shard whose
  // file is not started yet.
  std::unique_ptr<BlockTableBuilder> builder;
  uint32_t building = 0;
  uint32_t next = 0;
  uint64_t file_bytes = 0;
  auto finish = [&]() -> absl::Status {
    auto report = builder->Finish();
    if (!report.ok()) return report.status();
    file_bytes += report->file_size;
    builder.reset();
    return absl::OkStatus();
  };
  // Ends the file being written, writes the (empty) files of the shards
  // before `shard` that have no keys, and starts shard `shard`'s (unless it
  // is `shards`: the end).
  auto start_shard = [&](uint32_t shard) -> absl::Status {
    if (builder) ROOST_RETURN_IF_ERROR(finish());
    for (; next <= shard && next < shards; ++next) {
      BlockBuildOptions options = job.block;
      options.expected_keys = shard_records[next];
      auto b = BlockTableBuilder::Create(paths[next], options);
      if (!b.ok()) return b.status();
      builder = std::move(*b);
      building = next;
      if (next < shard) ROOST_RETURN_IF_ERROR(finish());
    }
    return absl::OkStatus();
  };
  // Equal keys resolved by the policy; on two or more threads the next
  // pairs are read out of the sorter while these are built.
  UniquePairReader pairs(
      &sorter, job.on_duplicate,
      [&](std::string_view key, uint64_t first, uint64_t second) {
        return DuplicateError(origins, key.substr(prefix), first, second);
      },
      job.threads > 1);
  while (true) {
    ROOST_ASSIGN_OR_RETURN(const PairBatch* batch, pairs.Next());
    if (batch->empty()) break;
    for (size_t i = 0; i < batch->size(); ++i) {
      const std::string_view key = batch->key(i);
      const uint32_t shard = shards > 1 ? ShardOfPrefixed(key) : 0;
      if (!builder || shard != building) {
        ROOST_RETURN_IF_ERROR(start_shard(shard));
      }
      const std::string_view k = key.substr(prefix);
      (*figures)[building].Add(k, batch->value(i));
      ++summary->keys;
      progress->Update(summary->keys, 0);
      ROOST_RETURN_IF_ERROR(builder->Add(k, batch->value(i)));
    }
  }
  summary->duplicates += pairs.duplicates();
  ROOST_RETURN_IF_ERROR(start_shard(shards));  // the rest, empty
  if (builder) ROOST_RETURN_IF_ERROR(finish());
  progress->Done(summary->keys, file_bytes);
  return absl::OkStatus();
}

// A shard build's cuckoo table (job.shard): its pairs sorted by key in
// bounded memory before they are added, so that the file is a function of
// the set of records, not of their order (the builder places keys in the
// order they come: the same pairs in another order make another file), and
// a retried attempt writes the same bytes. Only --on-duplicate error goes
// with --shard (build_job.cc): equal keys arrive together and are refused.
absl::Status WriteSortedCuckooFile(const BuildJob& job,
                                   const std::vector<std::string>& inputs,
                                   const std::string& path,
                                   std::vector<ManifestInput>* read,
                                   FileFigures* figures, BuildSummary* summary,
                                   Progress* progress) {
  SorterOptions sort_options;
  sort_options.memory_limit = job.memory_limit;
  sort_options.temp_dir = job.temp_dir;
  sort_options.threads = job.threads;
  ExternalSorter sorter(sort_options);
  Origins origins(job.reader.format, job.reader);
  ROOST_RETURN_IF_ERROR(ReadInputs(job, inputs, &origins, read, summary,
                                   progress,
                                   [&](std::string_view k, std::string_view v) {
                                     return sorter.Add(k, v);
                                   }));
  progress->Phase("sort");
  ROOST_RETURN_IF_ERROR(sorter.Finish());
  summary->sort_runs = sorter.runs_spilled();
  progress->Done(summary->records, summary->input_bytes);
  progress->Phase("build");
  CuckooBuildOptions options = job.cuckoo;
  options.threads = job.threads;
  options.on_duplicate = DuplicatePolicy::kError;
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<CuckooTableBuilder> builder,
                         CuckooTableBuilder::Create(path, options));
  UniquePairReader pairs(
      &sorter, DuplicatePolicy::kError,
      [&](std::string_view key, uint64_t first, uint64_t second) {
        return DuplicateError(origins, key, first, second);
      },
      job.threads > 1);
  while (true) {
    ROOST_ASSIGN_OR_RETURN(const PairBatch* batch, pairs.Next());
    if (batch->empty()) break;
    for (size_t i = 0; i < batch->size(); ++i) {
      ROOST_RETURN_IF_ERROR(builder->Add(batch->key(i), batch->value(i)));
    }
  }
  ROOST_ASSIGN_OR_RETURN(CuckooBuildReport report, builder->Finish());
  if (report.retries > 0) {
    progress->Note(StrCat("could not place every key at utilization ",
                          report.requested_utilization, "; retried ",
                          report.retries, " times and built at ",
                          fmt::format("{:.3f}", report.utilization)));
  }
  *figures = FiguresOf(report);
  summary->keys = report.num_keys;
  summary->cuckoo_retries = report.retries;
  summary->utilization = report.utilization;
  progress->Done(summary->keys, report.file_size);
  return absl::OkStatus();
}

}  // namespace

void FileFigures::Add(std::string_view k, std::string_view v) {
  if (keys++ == 0) {
    key = k.size();
    value = v.size();
  }
  key_fixed = key_fixed && k.size() == key;
  value_fixed = value_fixed && v.size() == value;
  key_bytes += k.size();
  value_bytes += v.size();
  max_key = std::max<uint64_t>(max_key, k.size());
  max_value = std::max<uint64_t>(max_value, v.size());
}

void FileFigures::Merge(const FileFigures& other) {
  if (other.keys == 0) return;
  if (keys == 0) {
    *this = other;
    return;
  }
  key_fixed = key_fixed && other.key_fixed && key == other.key;
  value_fixed = value_fixed && other.value_fixed && value == other.value;
  keys += other.keys;
  key_bytes += other.key_bytes;
  value_bytes += other.value_bytes;
  max_key = std::max(max_key, other.max_key);
  max_value = std::max(max_value, other.max_value);
}

absl::Status WriteTableFiles(const BuildJob& job,
                             const std::vector<std::string>& inputs,
                             const std::vector<std::string>& paths,
                             std::vector<ManifestInput>* read,
                             std::vector<FileFigures>* figures,
                             BuildSummary* summary, Progress* progress) {
  figures->assign(paths.size(), FileFigures());
  if (job.shard && job.format == TableFormat::kCuckoo) {
    return WriteSortedCuckooFile(job, inputs, paths[0], read, &(*figures)[0],
                                 summary, progress);
  }
  // A shard build's block table: the one file of paths, sorted as an
  // unsharded build sorts (the same bytes as a one-host --shards N build's
  // file of that shard).
  if (job.format == TableFormat::kCuckoo) {
    return WriteCuckooFiles(job, inputs, paths, read, figures, summary,
                            progress);
  }
  return WriteBlockFiles(job, inputs, paths, read, figures, summary, progress);
}

}  // namespace roost
