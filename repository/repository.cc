#include "repository/repository.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "storage/data_dir.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// How many times a publisher tries the next number, or swaps the pointer
// again, before it gives up: only as many publishers as race on one table.
constexpr int kMaxRaces = 64;

absl::Status ValidateFileName(std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos ||
      name == kClaimName || name == kManifestName || name == "." ||
      name == "..") {
    return absl::InvalidArgumentError(
        StrCat("bad version file name \"", name, "\": not empty, no '/', not ",
               kClaimName, " or ", kManifestName));
  }
  return absl::OkStatus();
}

}  // namespace

std::string TableRepository::VersionKey(std::string_view table,
                                        uint64_t version,
                                        std::string_view name) {
  return StrCat(table, "/", VersionDirName(version), "/", name);
}

absl::StatusOr<std::vector<RepositoryVersion>> TableRepository::ListVersions(
    std::string_view table) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  const std::string prefix = StrCat(table, "/");
  ROOST_ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects,
                         store_->ListAll(prefix));
  std::map<uint64_t, bool> versions;  // number -> complete
  for (const ObjectInfo& o : objects) {
    const std::string_view rest = std::string_view(o.key).substr(prefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos) continue;  // POINTER
    const std::optional<uint64_t> v =
        ParseVersionDirName(rest.substr(0, slash));
    if (!v) continue;
    versions[*v] |= rest.substr(slash + 1) == kManifestName;
  }
  std::vector<RepositoryVersion> out;
  for (const auto& [version, complete] : versions) {
    out.push_back({version, complete});
  }
  return out;
}

absl::StatusOr<uint64_t> TableRepository::ClaimVersion(
    std::string_view table, std::string_view publisher) {
  ROOST_ASSIGN_OR_RETURN(std::vector<RepositoryVersion> versions,
                         ListVersions(table));
  uint64_t next = versions.empty() ? 1 : versions.back().version + 1;
  PutOptions if_absent;
  if_absent.if_absent = true;
  for (int race = 0; race < kMaxRaces; ++race, ++next) {
    if (!ParseVersionDirName(VersionDirName(next))) {
      return absl::FailedPreconditionError(
          StrCat("table ", table, " has run out of version numbers"));
    }
    absl::Status s = store_->Put(VersionKey(table, next, kClaimName),
                                 StrCat(publisher, "\n"), if_absent);
    if (s.ok()) return next;
    if (!absl::IsAlreadyExists(s)) return s;
  }
  return absl::AbortedError(StrCat("table ", table, ": ", kMaxRaces,
                                   " version numbers in a row were taken by "
                                   "other publishers"));
}

absl::Status TableRepository::UploadFile(std::string_view table,
                                         uint64_t version,
                                         const VersionFile& file) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  ROOST_RETURN_IF_ERROR(ValidateFileName(file.name));
  struct stat st;
  if (::stat(file.path.c_str(), &st) != 0) {
    return absl::NotFoundError(StrCat("cannot stat ", file.path));
  }
  const std::string key = VersionKey(table, version, file.name);
  ROOST_RETURN_IF_ERROR(store_->PutFile(key, file.path));
  ROOST_ASSIGN_OR_RETURN(ObjectInfo stored, store_->Head(key));
  if (stored.size != static_cast<uint64_t>(st.st_size)) {
    return absl::DataLossError(StrCat(store_->uri(), "/", key, " holds ",
                                      stored.size, " bytes after uploading ",
                                      st.st_size, " from ", file.path));
  }
  return absl::OkStatus();
}

absl::Status TableRepository::CompleteVersion(std::string_view table,
                                              uint64_t version,
                                              std::string_view manifest) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  absl::StatusOr<ObjectInfo> claim =
      store_->Head(VersionKey(table, version, kClaimName));
  if (absl::IsNotFound(claim.status())) {
    return absl::FailedPreconditionError(
        StrCat(table, " ", VersionDirName(version), " was never claimed"));
  }
  ROOST_RETURN_IF_ERROR(claim.status());
  PutOptions if_absent;
  if_absent.if_absent = true;
  return store_->Put(VersionKey(table, version, kManifestName), manifest,
                     if_absent);
}

absl::StatusOr<std::string> TableRepository::ReadManifest(
    std::string_view table, uint64_t version) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  return store_->Get(VersionKey(table, version, kManifestName));
}

absl::StatusOr<std::optional<Pointer>> TableRepository::ReadPointer(
    std::string_view table) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  const std::string key = StrCat(table, "/", kPointerName);
  // The ETag first: if the pointer moves between the two reads, a swap with
  // this ETag fails, as it should.
  absl::StatusOr<ObjectInfo> info = store_->Head(key);
  if (absl::IsNotFound(info.status())) return std::nullopt;
  ROOST_RETURN_IF_ERROR(info.status());
  absl::StatusOr<std::string> text = store_->Get(key);
  if (absl::IsNotFound(text.status())) return std::nullopt;
  ROOST_RETURN_IF_ERROR(text.status());
  std::string_view name = *text;
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) {
    name.remove_suffix(1);
  }
  const std::optional<uint64_t> version = ParseVersionDirName(name);
  if (!version) {
    return absl::DataLossError(StrCat(store_->uri(), "/", key,
                                      " names no version: \"",
                                      name.substr(0, 64), "\""));
  }
  return Pointer{*version, info->etag};
}

absl::Status TableRepository::CheckComplete(std::string_view table,
                                            uint64_t version) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  absl::StatusOr<ObjectInfo> manifest =
      store_->Head(VersionKey(table, version, kManifestName));
  if (absl::IsNotFound(manifest.status())) {
    return absl::FailedPreconditionError(
        StrCat(table, " ", VersionDirName(version),
               " is not a complete version (no MANIFEST)"));
  }
  return manifest.status();
}

absl::Status TableRepository::WritePointer(
    std::string_view table, uint64_t version,
    const std::optional<Pointer>& expected) {
  PutOptions options;
  if (expected) {
    options.if_match = expected->etag;
  } else {
    options.if_absent = true;
  }
  absl::Status s = store_->Put(StrCat(table, "/", kPointerName),
                               StrCat(VersionDirName(version), "\n"), options);
  if (absl::IsAlreadyExists(s)) {
    return absl::FailedPreconditionError(s.message());
  }
  return s;
}

absl::Status TableRepository::SwapPointer(
    std::string_view table, uint64_t version,
    const std::optional<Pointer>& expected) {
  ROOST_RETURN_IF_ERROR(CheckComplete(table, version));
  return WritePointer(table, version, expected);
}

absl::Status TableRepository::MovePointer(std::string_view table,
                                          uint64_t version) {
  ROOST_RETURN_IF_ERROR(CheckComplete(table, version));
  for (int race = 0; race < kMaxRaces; ++race) {
    ROOST_ASSIGN_OR_RETURN(std::optional<Pointer> now, ReadPointer(table));
    if (now && now->version == version) return absl::OkStatus();
    absl::Status s = WritePointer(table, version, now);
    if (!absl::IsFailedPrecondition(s)) return s;  // else it moved: again
  }
  return absl::AbortedError(StrCat("the pointer of ", table,
                                   " kept moving under ", kMaxRaces,
                                   " attempts to set it"));
}

absl::StatusOr<uint64_t> TableRepository::Publish(
    std::string_view table, const std::vector<VersionFile>& files,
    const std::function<absl::StatusOr<std::string>(uint64_t)>& make_manifest,
    std::string_view publisher) {
  ROOST_ASSIGN_OR_RETURN(const uint64_t version,
                         ClaimVersion(table, publisher));
  for (const VersionFile& file : files) {
    ROOST_RETURN_IF_ERROR(UploadFile(table, version, file));
  }
  ROOST_ASSIGN_OR_RETURN(const std::string manifest, make_manifest(version));
  ROOST_RETURN_IF_ERROR(CompleteVersion(table, version, manifest));
  for (int race = 0; race < kMaxRaces; ++race) {
    ROOST_ASSIGN_OR_RETURN(std::optional<Pointer> now, ReadPointer(table));
    // Forward only: a newer version published meanwhile keeps the pointer.
    if (now && now->version >= version) return version;
    absl::Status s = WritePointer(table, version, now);
    if (s.ok()) return version;
    if (!absl::IsFailedPrecondition(s)) return s;
  }
  return absl::AbortedError(StrCat("the pointer of ", table,
                                   " kept moving while publishing ",
                                   VersionDirName(version)));
}

}  // namespace roost
