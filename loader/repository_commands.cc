#include "loader/repository_commands.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <ctime>
#include <memory>

#include "repository/object_store.h"
#include "repository/repository.h"
#include "repository/retention.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "util/json.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

absl::StatusOr<uint64_t> ParseCount(std::string_view text) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return absl::InvalidArgumentError("not a whole number");
  }
  return n;
}

absl::Status ValidateCommon(const RepositoryCommandFlags& f) {
  if (f.repository.empty()) {
    return absl::InvalidArgumentError("--repository URI is required");
  }
  if (f.table.empty()) {
    return absl::InvalidArgumentError("--table NAME is required");
  }
  ROOST_RETURN_IF_ERROR(ValidateTableName(f.table));
  // The URI and the AWS_* environment. A credential service's refusal or
  // silence is not a usage error: it comes again, as an I/O error, when
  // the command opens the store.
  absl::Status s = OpenObjectStore(f.repository).status();
  return absl::IsInvalidArgument(s) ? s : absl::OkStatus();
}

// "2026-11-26T06:10:00Z", or "-" for 0 (unknown).
std::string TimeText(int64_t unix_seconds) {
  if (unix_seconds == 0) return "-";
  const time_t t = static_cast<time_t>(unix_seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// An opened repository, and its error messages' prefix.
struct Opened {
  std::unique_ptr<ObjectStore> store;
  std::unique_ptr<TableRepository> repository;
};

absl::StatusOr<Opened> Open(const RepositoryCommandFlags& f) {
  Opened o;
  ROOST_ASSIGN_OR_RETURN(o.store, OpenObjectStore(f.repository));
  o.repository = std::make_unique<TableRepository>(o.store.get());
  return o;
}

absl::Status InRepository(const absl::Status& s, const Opened& o,
                          const RepositoryCommandFlags& f) {
  if (s.ok()) return s;
  return absl::Status(s.code(), StrCat("table ", f.table, " in ",
                                       o.store->uri(), ": ", s.message()));
}

}  // namespace

absl::StatusOr<uint64_t> ParseVersionArgument(const std::string& text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == 'v') digits.remove_prefix(1);
  absl::StatusOr<uint64_t> n = ParseCount(digits);
  if (!n.ok() || *n == 0 || !ParseVersionDirName(VersionDirName(*n))) {
    return absl::InvalidArgumentError(
        StrCat("bad version \"", text,
               "\" (a version such as v000003, v3 or 3, from 1)"));
  }
  return *n;
}

absl::StatusOr<uint64_t> ParseKeepVersions(const std::string& text) {
  absl::StatusOr<uint64_t> keep = ParseCount(text);
  if (!keep.ok() || *keep == 0) {
    return absl::InvalidArgumentError(
        StrCat("bad --keep-versions \"", text,
               "\" (a whole number from 1: the version served stays)"));
  }
  return *keep;
}

absl::StatusOr<int64_t> ParseDurationSeconds(const std::string& text) {
  std::string_view digits = text;
  int64_t unit = 1;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 's':
        unit = 1;
        digits.remove_suffix(1);
        break;
      case 'm':
        unit = 60;
        digits.remove_suffix(1);
        break;
      case 'h':
        unit = 3600;
        digits.remove_suffix(1);
        break;
      case 'd':
        unit = 86400;
        digits.remove_suffix(1);
        break;
      default:
        break;
    }
  }
  absl::StatusOr<uint64_t> n = ParseCount(digits);
  constexpr uint64_t kMaxSeconds = uint64_t{100} * 365 * 86400;
  if (!n.ok() || *n > kMaxSeconds / unit) {
    return absl::InvalidArgumentError(
        StrCat("bad duration \"", text,
               "\" (a whole number of seconds, or with s, m, h or d: 90s, "
               "30m, 24h, 7d; at most 100 years)"));
  }
  return static_cast<int64_t>(*n) * unit;
}

namespace {

// --repository, --table and --output-format, bound to `f`.
void AddCommonFlags(CLI::App* c, RepositoryCommandFlags& f) {
  c->add_option("--repository", f.repository,
                "The table repository: s3://BUCKET[/PREFIX] (credentials "
                "from the AWS default chain, endpoint from AWS_* "
                "variables), a local path or "
                "file:///PATH")
      ->required();
  c->add_option("--table", f.table, "Table name")->required();
  c->add_option("--output-format", f.output_format,
                "Output: text or json (stdout)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

// The command's run: its usage errors (exit 64), then the command, whose
// errors come from the repository.
Command Runs(CLI::App* c, std::shared_ptr<RepositoryCommandFlags> f,
             absl::Status (*validate)(const RepositoryCommandFlags&),
             absl::Status (*run)(const RepositoryCommandFlags&)) {
  return {c, [f, validate, run] {
            const bool json = f->output_format == "json";
            if (absl::Status s = validate(*f); !s.ok()) return Usage(s, json);
            if (absl::Status s = run(*f); !s.ok()) return Fail(s, json, true);
            return kExitOk;
          }};
}

}  // namespace

Command AddVersionsCommand(CLI::App& app) {
  auto f = std::make_shared<RepositoryCommandFlags>();
  CLI::App* versions = app.add_subcommand(
      "versions",
      "List a table's versions in a repository: complete or not, which one "
      "the pointer names (*), files, keys, bytes, when claimed and "
      "published.");
  AddCommonFlags(versions, *f);
  versions->footer(
      "Example:\n"
      "  roost-load versions --repository s3://tables/prod --table users");
  return Runs(versions, f, &ValidateVersions, &RunVersions);
}

Command AddRollbackCommand(CLI::App& app) {
  auto f = std::make_shared<RepositoryCommandFlags>();
  CLI::App* rollback = app.add_subcommand(
      "rollback",
      "Move a table's pointer in a repository to a complete version (every "
      "server follows); a missing or incomplete version is refused (exit "
      "65) and the pointer stays.");
  AddCommonFlags(rollback, *f);
  rollback->add_option("--to", f->to, "The version: v000003, v3 or 3")
      ->required();
  rollback->footer(
      "Example:\n"
      "  roost-load rollback --repository s3://tables/prod --table users "
      "--to v3");
  return Runs(rollback, f, &ValidateRollback, &RunRollback);
}

Command AddPruneCommand(CLI::App& app) {
  auto f = std::make_shared<RepositoryCommandFlags>();
  CLI::App* prune = app.add_subcommand(
      "prune",
      "Delete a table's complete versions older than the --keep-versions "
      "newest (never the one the pointer names, nor newer ones) and its "
      "abandoned claims (incomplete versions silent for --abandoned-after).");
  AddCommonFlags(prune, *f);
  prune
      ->add_option("--keep-versions", f->keep_versions,
                   "Complete versions to keep, newest first; at least 1")
      ->required();
  prune
      ->add_option("--abandoned-after", f->abandoned_after,
                   "An incomplete version none of whose objects was written "
                   "for this long is abandoned: 90s, 30m, 24h, 7d")
      ->capture_default_str();
  prune->footer(
      "Example:\n"
      "  roost-load prune --repository s3://tables/prod --table users "
      "--keep-versions 5 --abandoned-after 7d");
  return Runs(prune, f, &ValidatePrune, &RunPrune);
}

absl::Status ValidateVersions(const RepositoryCommandFlags& f) {
  return ValidateCommon(f);
}

absl::Status ValidateRollback(const RepositoryCommandFlags& f) {
  ROOST_RETURN_IF_ERROR(ValidateCommon(f));
  if (f.to.empty())
    return absl::InvalidArgumentError("--to VERSION is required");
  return ParseVersionArgument(f.to).status();
}

absl::Status ValidatePrune(const RepositoryCommandFlags& f) {
  ROOST_RETURN_IF_ERROR(ValidateCommon(f));
  ROOST_RETURN_IF_ERROR(ParseKeepVersions(f.keep_versions).status());
  return ParseDurationSeconds(f.abandoned_after).status();
}

absl::Status RunVersions(const RepositoryCommandFlags& f) {
  ROOST_ASSIGN_OR_RETURN(Opened o, Open(f));
  absl::StatusOr<std::vector<VersionObjects>> versions =
      o.repository->ListVersionObjects(f.table);
  ROOST_RETURN_IF_ERROR(InRepository(versions.status(), o, f));
  absl::StatusOr<std::optional<Pointer>> pointer =
      o.repository->ReadPointer(f.table);
  ROOST_RETURN_IF_ERROR(InRepository(pointer.status(), o, f));
  // 0: no pointer (versions count from 1).
  const uint64_t pointed = *pointer ? (*pointer)->version : 0;

  OrderedJson list = OrderedJson::array();
  std::string text = fmt::format(
      "repository {}\ntable      {}\npointer    {}\n\n", o.store->uri(),
      f.table, pointed ? VersionDirName(pointed) : "(none)");
  text +=
      fmt::format("  {:<9} {:<10} {:>5} {:>12} {:>14}  {:<20}  {}\n", "version",
                  "state", "files", "keys", "bytes", "claimed", "published");
  for (const VersionObjects& v : *versions) {
    // Keys from the MANIFEST; a MANIFEST that does not parse is reported,
    // never fatal: the listing is how one finds such a version.
    std::optional<uint64_t> keys;
    std::string problem;
    if (v.complete) {
      absl::StatusOr<std::string> manifest =
          o.repository->ReadManifest(f.table, v.version);
      absl::StatusOr<Manifest> parsed =
          manifest.ok() ? Manifest::Parse(*manifest)
                        : absl::StatusOr<Manifest>(manifest.status());
      if (parsed.ok()) {
        keys = parsed->keys;
      } else {
        problem = std::string(parsed.status().message());
      }
    }
    const bool is_pointed = pointed == v.version;
    OrderedJson j;
    j["version"] = v.version;
    j["name"] = VersionDirName(v.version);
    j["complete"] = v.complete;
    j["pointer"] = is_pointed;
    j["files"] = v.FileCount();
    j["keys"] = keys ? OrderedJson(*keys) : OrderedJson();
    j["bytes"] = v.FileBytes();
    j["claimed_at"] =
        v.ClaimedAt() ? OrderedJson(TimeText(v.ClaimedAt())) : OrderedJson();
    j["published_at"] = v.CompletedAt() ? OrderedJson(TimeText(v.CompletedAt()))
                                        : OrderedJson();
    if (!problem.empty()) j["error"] = problem;
    list.push_back(std::move(j));
    text += fmt::format(
        "{} {:<9} {:<10} {:>5} {:>12} {:>14}  {:<20}  {}{}\n",
        is_pointed ? "*" : " ", VersionDirName(v.version),
        v.complete ? "complete" : "incomplete", v.FileCount(),
        keys ? std::to_string(*keys) : "-", v.FileBytes(),
        TimeText(v.ClaimedAt()), TimeText(v.CompletedAt()),
        problem.empty() ? "" : StrCat("  (MANIFEST: ", problem, ")"));
  }
  if (f.output_format == "json") {
    OrderedJson j;
    j["status"] = "ok";
    j["repository"] = o.store->uri();
    j["table"] = f.table;
    j["pointer"] =
        pointed ? OrderedJson(VersionDirName(pointed)) : OrderedJson();
    j["versions"] = std::move(list);
    fmt::print("{}\n", DumpJson(j));
  } else {
    fmt::print("{}", text);
  }
  return absl::OkStatus();
}

absl::Status RunRollback(const RepositoryCommandFlags& f) {
  ROOST_ASSIGN_OR_RETURN(const uint64_t version, ParseVersionArgument(f.to));
  ROOST_ASSIGN_OR_RETURN(Opened o, Open(f));
  absl::StatusOr<std::optional<Pointer>> before =
      o.repository->ReadPointer(f.table);
  // A damaged pointer is what a rollback repairs.
  const bool damaged = absl::IsDataLoss(before.status());
  if (damaged) before = std::optional<Pointer>();
  ROOST_RETURN_IF_ERROR(InRepository(before.status(), o, f));
  absl::Status moved = o.repository->MovePointer(f.table, version);
  if (absl::IsFailedPrecondition(moved)) {
    // Missing or incomplete: say which, and that nothing moved.
    absl::StatusOr<std::vector<RepositoryVersion>> versions =
        o.repository->ListVersions(f.table);
    bool exists = false;
    if (versions.ok()) {
      for (const RepositoryVersion& v : *versions)
        exists |= v.version == version;
    }
    return absl::FailedPreconditionError(
        StrCat("cannot roll ", f.table, " in ", o.store->uri(), " back to ",
               VersionDirName(version), ": ",
               exists ? "it is not complete (no MANIFEST)"
                      : "there is no such version",
               "; the pointer still names ",
               *before ? VersionDirName((*before)->version) : "nothing"));
  }
  ROOST_RETURN_IF_ERROR(InRepository(moved, o, f));
  const std::string from = damaged   ? "(damaged)"
                           : *before ? VersionDirName((*before)->version)
                                     : "(none)";
  if (f.output_format == "json") {
    OrderedJson j;
    j["status"] = "ok";
    j["repository"] = o.store->uri();
    j["table"] = f.table;
    j["previous"] = *before || damaged ? OrderedJson(from) : OrderedJson();
    j["pointer"] = VersionDirName(version);
    fmt::print("{}\n", DumpJson(j));
  } else {
    fmt::print("{} in {}: pointer moved from {} to {}\n", f.table,
               o.store->uri(), from, VersionDirName(version));
  }
  return absl::OkStatus();
}

absl::Status RunPrune(const RepositoryCommandFlags& f) {
  RetentionOptions options;
  ROOST_ASSIGN_OR_RETURN(options.keep_versions,
                         ParseKeepVersions(f.keep_versions));
  ROOST_ASSIGN_OR_RETURN(const int64_t seconds,
                         ParseDurationSeconds(f.abandoned_after));
  options.abandoned_after = std::chrono::seconds(seconds);
  ROOST_ASSIGN_OR_RETURN(Opened o, Open(f));
  absl::StatusOr<PruneResult> pruned =
      PruneTable(o.repository.get(), f.table, options);
  ROOST_RETURN_IF_ERROR(InRepository(pruned.status(), o, f));
  const auto names = [](const std::vector<uint64_t>& versions) {
    std::vector<std::string> out;
    for (uint64_t v : versions) out.push_back(VersionDirName(v));
    return out;
  };
  if (f.output_format == "json") {
    OrderedJson j;
    j["status"] = "ok";
    j["repository"] = o.store->uri();
    j["table"] = f.table;
    j["deleted"] = names(pruned->deleted);
    j["abandoned_deleted"] = names(pruned->abandoned);
    fmt::print("{}\n", DumpJson(j));
  } else {
    std::string list;
    for (const std::string& n : names(pruned->deleted)) list += " " + n;
    for (const std::string& n : names(pruned->abandoned)) list += " " + n;
    fmt::print("{} in {}: deleted {} complete and {} abandoned version(s){}\n",
               f.table, o.store->uri(), pruned->deleted.size(),
               pruned->abandoned.size(), list.empty() ? "" : ":" + list);
  }
  return absl::OkStatus();
}

}  // namespace roost
