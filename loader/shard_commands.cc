#include "loader/shard_commands.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "loader/flag_values.h"
#include "loader/repository_commands.h"
#include "loader/repository_destination.h"
#include "loader/schema_change.h"
#include "loader/shard_part.h"
#include "repository/object_store.h"
#include "repository/repository.h"
#include "repository/retention.h"
#include "storage/partition.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "util/json.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Shards' files read back at once by publish: enough to keep a store busy.
constexpr uint32_t kVerifyThreads = 8;

absl::Status ValidateCommon(const ShardCommandFlags& f) {
  if (f.repository.empty()) {
    return absl::InvalidArgumentError("--repository URI is required");
  }
  if (f.table.empty()) {
    return absl::InvalidArgumentError("--table NAME is required");
  }
  ROOST_RETURN_IF_ERROR(ValidateTableName(f.table));
  // The URI and the AWS_* environment, checked without a request.
  return OpenObjectStore(f.repository).status();
}

absl::StatusOr<uint32_t> ParseShards(const std::string& text) {
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      n < 2 || n > kMaxShards) {
    return absl::InvalidArgumentError(StrCat("bad --shards \"", text,
                                             "\" (a whole number from 2 to ",
                                             kMaxShards, ")"));
  }
  return n;
}

// "roost-load claim pid 1234 on build-7", recorded in the CLAIM for people.
std::string ClaimerName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return StrCat("roost-load claim pid ", ::getpid(), " on ",
                host[0] != '\0' ? host : "unknown host");
}

// What publish reads of the version before it writes anything.
struct Staged {
  uint32_t shards = 0;
  std::vector<Manifest> parts;  // parts[I]: shard I's
};

class Publisher {
 public:
  Publisher(const ShardCommandFlags& f, uint64_t version,
            std::unique_ptr<ObjectStore> store)
      : f_(f),
        version_(version),
        store_(std::move(store)),
        repository_(store_.get()) {}

  absl::Status Run();

 private:
  // "file:///r/users/v000007".
  std::string Where() const {
    return StrCat(store_->uri(), "/", f_.table, "/", VersionDirName(version_));
  }
  // "cannot publish users v000007 in file:///r: WHAT; nothing was
  // published", with `code`.
  absl::Status Refuse(absl::StatusCode code, std::string_view what) const {
    return absl::Status(
        code,
        StrCat("cannot publish ", f_.table, " ", VersionDirName(version_),
               " in ", store_->uri(), ": ", what, "; nothing was published"));
  }
  absl::Status Store(const absl::Status& s) const {
    if (s.ok()) return s;
    return absl::Status(
        absl::IsNotFound(s) ? absl::StatusCode::kUnavailable : s.code(),
        StrCat("cannot publish ", f_.table, " ", VersionDirName(version_),
               " in ", store_->uri(), ": ", s.message()));
  }
  absl::Status CheckOpen();
  absl::StatusOr<Staged> ReadParts();
  absl::Status VerifyFiles(const Staged& staged);
  void DeleteParts(uint32_t shards);

  const ShardCommandFlags& f_;
  const uint64_t version_;
  std::unique_ptr<ObjectStore> store_;
  TableRepository repository_;
  std::vector<std::string> warnings_;
};

absl::Status Publisher::CheckOpen() {
  absl::StatusOr<ObjectInfo> claim =
      store_->Head(TableRepository::VersionKey(f_.table, version_, kClaimName));
  if (absl::IsNotFound(claim.status())) {
    return Refuse(absl::StatusCode::kFailedPrecondition,
                  StrCat(Where(),
                         " is not claimed (roost-load claim gives "
                         "the number its shards are built for)"));
  }
  ROOST_RETURN_IF_ERROR(Store(claim.status()));
  absl::StatusOr<ObjectInfo> manifest = store_->Head(
      TableRepository::VersionKey(f_.table, version_, kManifestName));
  if (manifest.ok()) {
    return absl::FailedPreconditionError(
        StrCat("cannot publish ", f_.table, " ", VersionDirName(version_),
               " in ", store_->uri(),
               ": it is published already (it has its MANIFEST); claim a "
               "new version for new data"));
  }
  if (!absl::IsNotFound(manifest.status())) return Store(manifest.status());
  return absl::OkStatus();
}

absl::StatusOr<Staged> Publisher::ReadParts() {
  const std::string prefix =
      StrCat(f_.table, "/", VersionDirName(version_), "/");
  absl::StatusOr<std::vector<ObjectInfo>> objects = store_->ListAll(prefix);
  ROOST_RETURN_IF_ERROR(Store(objects.status()));
  // Every part there, by its name's (N, I).
  std::map<uint32_t, std::map<uint32_t, ObjectInfo>> parts;
  for (const ObjectInfo& o : *objects) {
    const std::string_view name = std::string_view(o.key).substr(prefix.size());
    if (auto n = ParseShardName(name, ".json")) {
      parts[n->shards][n->shard] = o;
    }
  }
  Staged staged;
  if (!f_.shards.empty()) {
    ROOST_ASSIGN_OR_RETURN(staged.shards, ParseShards(f_.shards));
  } else if (parts.size() == 1) {
    staged.shards = parts.begin()->first;
  } else if (parts.empty()) {
    return Refuse(absl::StatusCode::kFailedPrecondition,
                  StrCat("no shard of it is built (no shard-IIII-of-NNNN.json "
                         "in ",
                         Where(), "/); roost-load build --shard I --version ",
                         VersionDirName(version_), " builds one"));
  }
  // Parts of another shard count: tasks told different N's.
  for (const auto& [n, of_n] : parts) {
    if (staged.shards != 0 && n == staged.shards) continue;
    std::string counts;
    for (const auto& [m, of_m] : parts) {
      counts += StrCat(counts.empty() ? "" : ", ", of_m.size(), " of ", m, " (",
                       ShardPartName(of_m.begin()->first, m), ", ...)");
    }
    return Refuse(
        absl::StatusCode::kFailedPrecondition,
        StrCat("its shards were built for different shard counts: ", counts,
               staged.shards != 0 ? StrCat("; --shards is ", staged.shards)
                                  : std::string(),
               ". Every shard of a version is built with the same "
               "--shards N; claim a new version and build them "
               "again"));
  }
  const std::map<uint32_t, ObjectInfo>& mine = parts[staged.shards];
  std::vector<std::string> missing;
  for (uint32_t s = 0; s < staged.shards; ++s) {
    if (!mine.contains(s)) {
      missing.push_back(
          StrCat("shard ", s, " (", ShardPartName(s, staged.shards), ")"));
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) {
      list += StrCat(list.empty() ? "" : ", ", m);
    }
    return Refuse(absl::StatusCode::kFailedPrecondition,
                  StrCat(missing.size(), " of its ", staged.shards,
                         " shards are not built: ", list, " not in ", Where(),
                         "/; build them (roost-load build --shard I --shards ",
                         staged.shards, " --version ", VersionDirName(version_),
                         "), then publish again"));
  }
  for (const auto& [s, info] : mine) {
    if (info.size > kMaxManifestSize) {
      return Refuse(absl::StatusCode::kFailedPrecondition,
                    StrCat(info.key, " is ", info.size,
                           " bytes, more than a shard part holds (",
                           kMaxManifestSize, "): not read"));
    }
    absl::StatusOr<std::string> text =
        info.size == 0 ? std::string()
                       : store_->Get(info.key, ByteRange{0, info.size});
    ROOST_RETURN_IF_ERROR(Store(text.status()));
    absl::StatusOr<Manifest> part =
        ParseShardPart(*text, std::string_view(info.key).substr(prefix.size()),
                       f_.table, version_);
    if (!part.ok()) {
      return Refuse(absl::StatusCode::kInvalidArgument,
                    std::string(part.status().message()));
    }
    staged.parts.push_back(*std::move(part));
  }
  return staged;
}

absl::Status Publisher::VerifyFiles(const Staged& staged) {
  const uint32_t n = staged.shards;
  std::vector<absl::Status> results(n);
  auto verify = [&](uint32_t s) {
    const ManifestFile& file = staged.parts[s].files[0];
    const std::string key =
        TableRepository::VersionKey(f_.table, version_, file.name);
    absl::StatusOr<ObjectInfo> info = store_->Head(key);
    if (absl::IsNotFound(info.status())) {
      results[s] =
          absl::DataLossError(StrCat("shard ", s, "'s file ", file.name,
                                     " is missing beside its "
                                     "part"));
      return;
    }
    if (!info.ok()) {
      results[s] = info.status();
      return;
    }
    if (info->size != file.size) {
      results[s] = absl::DataLossError(
          StrCat("shard ", s, "'s file ", file.name, " holds ", info->size,
                 " bytes, its part says ", file.size));
      return;
    }
    absl::Status checked = repository_.VerifyObject(
        f_.table, version_, file.name, file.size, file.xxh3);
    if (absl::IsDataLoss(checked)) {
      checked = absl::DataLossError(StrCat(
          "shard ", s, "'s file ", file.name,
          " does not read back as its part says (", checked.message(), ")"));
    }
    results[s] = checked;
  };
  std::atomic<uint32_t> next{0};
  std::vector<std::thread> threads;
  const uint32_t workers = std::min(n, kVerifyThreads);
  for (uint32_t t = 0; t < workers; ++t) {
    threads.emplace_back([&] {
      for (uint32_t s = next++; s < n; s = next++) verify(s);
    });
  }
  for (std::thread& t : threads) t.join();
  for (uint32_t s = 0; s < n; ++s) {
    if (absl::IsDataLoss(results[s])) {
      return Refuse(absl::StatusCode::kDataLoss,
                    StrCat(results[s].message(),
                           ": corrupt or replaced since it was built; build "
                           "shard ",
                           s, " again"));
    }
    ROOST_RETURN_IF_ERROR(Store(results[s]));
  }
  return absl::OkStatus();
}

void Publisher::DeleteParts(uint32_t shards) {
  for (uint32_t s = 0; s < shards; ++s) {
    absl::Status d = store_->Delete(TableRepository::VersionKey(
        f_.table, version_, ShardPartName(s, shards)));
    if (!d.ok() && !absl::IsNotFound(d)) {
      warnings_.push_back(
          StrCat("published, but its shard part could not be "
                 "deleted (harmless; retention deletes it "
                 "with its version): ",
                 d.message()));
      return;
    }
  }
}

absl::Status Publisher::Run() {
  const auto start = std::chrono::steady_clock::now();
  ROOST_RETURN_IF_ERROR(CheckOpen());
  ROOST_ASSIGN_OR_RETURN(Staged staged, ReadParts());
  absl::StatusOr<Manifest> merged = MergeShardParts(staged.parts);
  if (!merged.ok()) {
    return Refuse(merged.status().code(),
                  std::string(merged.status().message()));
  }
  Manifest& m = *merged;
  {
    uint64_t newest = 0;
    absl::StatusOr<std::optional<Manifest>> previous = NewestCompleteManifest(
        &repository_, store_->uri(), f_.table, version_, &newest);
    ROOST_RETURN_IF_ERROR(Store(previous.status()));
    if (*previous) {
      absl::Status s = CheckSchemaChange(
          **previous,
          StrCat(store_->uri(), "/", f_.table, "/", VersionDirName(newest)),
          f_.allow_schema_change, &m);
      if (!s.ok()) return s;
    }
  }
  ROOST_RETURN_IF_ERROR(VerifyFiles(staged));
  m.build_time = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  if (f_.data_timestamp_given) {
    ROOST_ASSIGN_OR_RETURN(m.data_time, ParseTimestamp(f_.data_timestamp));
  }
  absl::Status completed =
      repository_.CompleteVersion(f_.table, version_, m.ToJson());
  if (absl::IsAlreadyExists(completed)) {
    return absl::FailedPreconditionError(StrCat(
        "cannot publish ", f_.table, " ", VersionDirName(version_), " in ",
        store_->uri(), ": another publish completed it meanwhile"));
  }
  ROOST_RETURN_IF_ERROR(Store(completed));
  absl::StatusOr<bool> moved = repository_.AdvancePointer(f_.table, version_);
  ROOST_RETURN_IF_ERROR(Store(moved.status()));
  DeleteParts(staged.shards);
  std::optional<PruneResult> pruned;
  std::string retention_error;
  if (!f_.keep_versions.empty()) {
    RetentionOptions retention;
    ROOST_ASSIGN_OR_RETURN(retention.keep_versions,
                           ParseKeepVersions(f_.keep_versions));
    ROOST_ASSIGN_OR_RETURN(const int64_t seconds,
                           ParseDurationSeconds(f_.abandoned_after));
    retention.abandoned_after = std::chrono::seconds(seconds);
    absl::StatusOr<PruneResult> p =
        PruneTable(&repository_, f_.table, retention);
    if (p.ok()) {
      pruned = *std::move(p);
    } else {
      pruned = PruneResult();
      retention_error = std::string(p.status().message());
    }
  }
  uint64_t bytes = 0;
  for (const ManifestFile& file : m.files) bytes += file.size;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (f_.output_format == "json") {
    OrderedJson j;
    j["status"] = "ok";
    j["path"] = Where();
    j["repository"] = store_->uri();
    j["table"] = f_.table;
    j["version_name"] = VersionDirName(version_);
    j["version"] = version_;
    j["format"] = m.format;
    j["keys"] = m.keys;
    j["file_size"] = bytes;
    j["shards"] = staged.shards;
    j["pointer_moved"] = *moved;
    if (pruned) {
      j["pruned_versions"] = pruned->deleted;
      j["abandoned_versions_deleted"] = pruned->abandoned;
    }
    if (!retention_error.empty()) j["retention_error"] = retention_error;
    j["seconds"] = seconds;
    fmt::print("{}\n", DumpJson(j));
  } else if (!f_.quiet) {
    fmt::print(stderr,
               "roost-load: published {}: {} table, {} keys in {} shards, {} "
               "bytes{}, {:.2f} s\n",
               Where(), m.format, m.keys, staged.shards, bytes,
               *moved ? "" : " (the pointer names a newer version: not moved)",
               seconds);
    if (pruned && retention_error.empty()) {
      fmt::print(stderr,
                 "roost-load: retention: {} complete and {} abandoned "
                 "version(s) of {} deleted\n",
                 pruned->deleted.size(), pruned->abandoned.size(), f_.table);
    }
  }
  for (const std::string& w : warnings_) {
    fmt::print(stderr, "roost-load: warning: {}\n", w);
  }
  if (!retention_error.empty()) {
    fmt::print(stderr,
               "roost-load: warning: published, but retention failed: {}\n",
               retention_error);
  }
  return absl::OkStatus();
}

void AddCommonFlags(CLI::App* c, ShardCommandFlags& f) {
  c->add_option("--repository", f.repository,
                "The table repository: s3://BUCKET[/PREFIX] (credentials "
                "and endpoint from AWS_* variables), a local path or "
                "file:///PATH")
      ->required();
  c->add_option("--table", f.table, "Table name")->required();
  c->add_option("--output-format", f.output_format,
                "Output: text or json (stdout)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

}  // namespace

absl::Status ValidateClaim(const ShardCommandFlags& f) {
  return ValidateCommon(f);
}

absl::Status ValidatePublish(const ShardCommandFlags& f) {
  ROOST_RETURN_IF_ERROR(ValidateCommon(f));
  if (f.version.empty()) {
    return absl::InvalidArgumentError(
        "--version V is required: the version roost-load claim gave");
  }
  ROOST_RETURN_IF_ERROR(ParseVersionArgument(f.version).status());
  if (!f.shards.empty()) ROOST_RETURN_IF_ERROR(ParseShards(f.shards).status());
  if (!f.keep_versions.empty()) {
    ROOST_RETURN_IF_ERROR(ParseKeepVersions(f.keep_versions).status());
  }
  ROOST_RETURN_IF_ERROR(ParseDurationSeconds(f.abandoned_after).status());
  if (f.data_timestamp_given) {
    ROOST_RETURN_IF_ERROR(ParseTimestamp(f.data_timestamp).status());
  }
  return absl::OkStatus();
}

absl::Status RunClaim(const ShardCommandFlags& f) {
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<ObjectStore> store,
                         OpenObjectStore(f.repository));
  TableRepository repository(store.get());
  absl::StatusOr<uint64_t> version =
      repository.ClaimVersion(f.table, ClaimerName());
  if (!version.ok()) {
    return absl::Status(absl::IsNotFound(version.status())
                            ? absl::StatusCode::kUnavailable
                            : version.status().code(),
                        StrCat("cannot claim a version of ", f.table, " in ",
                               store->uri(), ": ", version.status().message()));
  }
  if (f.output_format == "json") {
    OrderedJson j;
    j["status"] = "ok";
    j["repository"] = store->uri();
    j["table"] = f.table;
    j["version"] = *version;
    j["version_name"] = VersionDirName(*version);
    j["path"] =
        StrCat(store->uri(), "/", f.table, "/", VersionDirName(*version));
    fmt::print("{}\n", DumpJson(j));
  } else {
    fmt::print("{}\n", VersionDirName(*version));
  }
  return absl::OkStatus();
}

absl::Status RunPublish(const ShardCommandFlags& f) {
  ROOST_ASSIGN_OR_RETURN(const uint64_t version,
                         ParseVersionArgument(f.version));
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<ObjectStore> store,
                         OpenObjectStore(f.repository));
  return Publisher(f, version, std::move(store)).Run();
}

Command AddClaimCommand(CLI::App& app) {
  auto f = std::make_shared<ShardCommandFlags>();
  CLI::App* claim = app.add_subcommand(
      "claim",
      "Claim the next version number of a table in a repository and print "
      "it (v000007), for the shards of a version built in parallel (build "
      "--shard I --version V on each host, then publish).");
  AddCommonFlags(claim, *f);
  claim->footer(
      "Example:\n"
      "  V=$(roost-load claim --repository s3://tables/prod --table users)");
  return {claim, [f] {
            const bool json = f->output_format == "json";
            if (absl::Status s = ValidateClaim(*f); !s.ok()) {
              return Usage(s, json);
            }
            if (absl::Status s = RunClaim(*f); !s.ok()) {
              return Fail(s, json, true);
            }
            return kExitOk;
          }};
}

Command AddPublishCommand(CLI::App& app) {
  auto f = std::make_shared<ShardCommandFlags>();
  CLI::App* publish = app.add_subcommand(
      "publish",
      "Publish a claimed version whose shards were built apart (build "
      "--shard I --version V): check that every shard is there, agrees and "
      "reads back intact, write the MANIFEST and move the pointer; any "
      "refusal publishes nothing (exit 65; 74 when the store fails).");
  AddCommonFlags(publish, *f);
  publish
      ->add_option("--version", f->version,
                   "The version roost-load claim gave: v000007, v7 or 7")
      ->type_name("V")
      ->required();
  publish
      ->add_option("--shards", f->shards,
                   "The shard count the version must have (2 to 1024); "
                   "default: the one its shard parts name")
      ->type_name("N");
  publish
      ->add_option("--keep-versions", f->keep_versions,
                   "After publishing, delete complete versions older than "
                   "the K newest (never the pointer's, nor newer ones) and "
                   "abandoned claims")
      ->type_name("K");
  publish
      ->add_option("--abandoned-after", f->abandoned_after,
                   "With --keep-versions: an incomplete version silent this "
                   "long is abandoned: 90s, 30m, 24h, 7d")
      ->capture_default_str();
  publish
      ->add_option("--data-timestamp", f->data_timestamp,
                   "The time the input data is of, written into the "
                   "MANIFEST as data_time: RFC 3339 (2024-05-01T12:00:00Z) "
                   "or Unix seconds")
      ->type_name("TIME");
  publish->add_flag(
      "--allow-schema-change", f->allow_schema_change,
      "Publish even when the version's schema of rows may not follow the "
      "newest complete version's (a field dropped, renamed, retyped or "
      "newly required; rows over opaque values or the reverse), recording "
      "the change in its MANIFEST's schema_change");
  publish->add_flag("--quiet,-q", f->quiet, "No summary on stderr");
  publish->footer(
      "Example:\n"
      "  roost-load publish --repository s3://tables/prod --table users "
      "--version v7 --shards 4 --keep-versions 5");
  return {publish, [publish, f] {
            const bool json = f->output_format == "json";
            if (publish->count("--abandoned-after") > 0 &&
                f->keep_versions.empty()) {
              return Usage(absl::InvalidArgumentError(
                               "--abandoned-after goes with --keep-versions"),
                           json);
            }
            f->data_timestamp_given = publish->count("--data-timestamp") > 0;
            if (absl::Status s = ValidatePublish(*f); !s.ok()) {
              return Usage(s, json);
            }
            if (absl::Status s = RunPublish(*f); !s.ok()) {
              return Fail(s, json, true);
            }
            return kExitOk;
          }};
}

}  // namespace roost
