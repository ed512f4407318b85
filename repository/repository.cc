#include "repository/repository.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <map>
#include <memory>

#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// How many times a publisher tries the next number, or swaps the pointer
// again, before it gives up: only as many publishers as race on one table.
constexpr int kMaxRaces = 64;

// VerifyObject reads uploads back in ranges of this many bytes.
constexpr uint64_t kVerifyChunk = uint64_t{8} << 20;

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

int64_t VersionObjects::ClaimedAt() const {
  for (const ObjectInfo& o : objects) {
    if (o.key.ends_with(StrCat("/", kClaimName))) return o.modified_unix;
  }
  return 0;
}

int64_t VersionObjects::CompletedAt() const {
  for (const ObjectInfo& o : objects) {
    if (o.key.ends_with(StrCat("/", kManifestName))) return o.modified_unix;
  }
  return 0;
}

int64_t VersionObjects::LastWrittenAt() const {
  int64_t newest = 0;
  for (const ObjectInfo& o : objects)
    newest = std::max(newest, o.modified_unix);
  return newest;
}

namespace {
bool IsFileObject(const ObjectInfo& o) {
  return !o.key.ends_with(StrCat("/", kClaimName)) &&
         !o.key.ends_with(StrCat("/", kManifestName));
}
}  // namespace

uint64_t VersionObjects::FileCount() const {
  return std::count_if(objects.begin(), objects.end(), IsFileObject);
}

uint64_t VersionObjects::FileBytes() const {
  uint64_t bytes = 0;
  for (const ObjectInfo& o : objects) {
    if (IsFileObject(o)) bytes += o.size;
  }
  return bytes;
}

std::string TableRepository::VersionKey(std::string_view table,
                                        uint64_t version,
                                        std::string_view name) {
  return StrCat(table, "/", VersionDirName(version), "/", name);
}

absl::StatusOr<std::vector<VersionObjects>> TableRepository::ListVersionObjects(
    std::string_view table) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  const std::string prefix = StrCat(table, "/");
  ROOST_ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects,
                         store_->ListAll(prefix));
  std::map<uint64_t, VersionObjects> versions;
  for (ObjectInfo& o : objects) {
    const std::string_view rest = std::string_view(o.key).substr(prefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos) continue;  // POINTER
    const std::optional<uint64_t> v =
        ParseVersionDirName(rest.substr(0, slash));
    if (!v) continue;
    VersionObjects& version = versions[*v];
    version.version = *v;
    version.complete |= rest.substr(slash + 1) == kManifestName;
    version.objects.push_back(std::move(o));
  }
  std::vector<VersionObjects> out;
  for (auto& [number, version] : versions) out.push_back(std::move(version));
  return out;
}

absl::StatusOr<std::vector<RepositoryVersion>> TableRepository::ListVersions(
    std::string_view table) {
  ROOST_ASSIGN_OR_RETURN(std::vector<VersionObjects> versions,
                         ListVersionObjects(table));
  std::vector<RepositoryVersion> out;
  for (const VersionObjects& v : versions) {
    out.push_back({v.version, v.complete});
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
  if (file.xxh3) {
    ROOST_RETURN_IF_ERROR(
        VerifyObject(table, version, file.name, stored.size, *file.xxh3));
  }
  return absl::OkStatus();
}

absl::Status TableRepository::VerifyObject(std::string_view table,
                                           uint64_t version,
                                           std::string_view name, uint64_t size,
                                           uint64_t xxh3) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  const std::string key = VersionKey(table, version, name);
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(
      XXH3_createState(), &XXH3_freeState);
  if (state == nullptr || XXH3_64bits_reset(state.get()) != XXH_OK) {
    return absl::ResourceExhaustedError("cannot allocate an XXH3 state");
  }
  uint64_t read = 0;
  while (read < size) {
    const uint64_t length = std::min(kVerifyChunk, size - read);
    absl::StatusOr<std::string> chunk =
        store_->Get(key, ByteRange{read, length});
    if (absl::IsOutOfRange(chunk.status()) ||
        (chunk.ok() && chunk->size() != length)) {
      return absl::DataLossError(StrCat(store_->uri(), "/", key,
                                        ": read back shorter than the ", size,
                                        " bytes uploaded"));
    }
    ROOST_RETURN_IF_ERROR(chunk.status());
    XXH3_64bits_update(state.get(), chunk->data(), chunk->size());
    read += length;
  }
  const uint64_t stored = XXH3_64bits_digest(state.get());
  if (stored != xxh3) {
    return absl::DataLossError(StrCat(
        store_->uri(), "/", key, ": checksum mismatch after upload: xxh3 ",
        fmt::format("{:016x}", stored), " read back, ",
        fmt::format("{:016x}", xxh3), " built"));
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

absl::Status TableRepository::DeleteVersion(std::string_view table,
                                            uint64_t version) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  ROOST_ASSIGN_OR_RETURN(std::optional<Pointer> pointer, ReadPointer(table));
  if (pointer && pointer->version == version) {
    return absl::FailedPreconditionError(StrCat("will not delete ", table, " ",
                                                VersionDirName(version),
                                                ": the pointer names it"));
  }
  const std::string prefix = StrCat(table, "/", VersionDirName(version), "/");
  ROOST_ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects,
                         store_->ListAll(prefix));
  // MANIFEST first, CLAIM last: at every step the version is incomplete
  // (never served, never pointed to) and still holds its number.
  ROOST_RETURN_IF_ERROR(store_->Delete(StrCat(prefix, kManifestName)));
  for (const ObjectInfo& o : objects) {
    const std::string_view name = std::string_view(o.key).substr(prefix.size());
    if (name == kManifestName || name == kClaimName) continue;
    ROOST_RETURN_IF_ERROR(store_->Delete(o.key));
  }
  ROOST_RETURN_IF_ERROR(store_->Delete(StrCat(prefix, kClaimName)));
  // Once more: a publisher taken for dead that completed the version while
  // its files went (CompleteVersion saw the CLAIM still there) must not
  // leave a MANIFEST naming files that are gone.
  return store_->Delete(StrCat(prefix, kManifestName));
}

absl::StatusOr<std::string> TableRepository::ReadBounded(const std::string& key,
                                                         uint64_t max_size,
                                                         ObjectInfo* info) {
  ROOST_ASSIGN_OR_RETURN(*info, store_->Head(key));
  const auto too_large = [&](uint64_t size) {
    return absl::FailedPreconditionError(
        StrCat(store_->uri(), "/", key, " is larger than ", max_size,
               " bytes (", size, " bytes): not read"));
  };
  if (info->size > max_size) return too_large(info->size);
  if (info->size == 0) return std::string();
  // Bounded again: the object may have been replaced since the Head.
  absl::StatusOr<std::string> text =
      store_->Get(key, ByteRange{0, max_size + 1});
  if (absl::IsOutOfRange(text.status())) return std::string();  // now empty
  ROOST_RETURN_IF_ERROR(text.status());
  if (text->size() > max_size) return too_large(text->size());
  return text;
}

absl::StatusOr<std::string> TableRepository::ReadManifest(
    std::string_view table, uint64_t version) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  ObjectInfo info;
  absl::StatusOr<std::string> text = ReadBounded(
      VersionKey(table, version, kManifestName), kMaxManifestSize, &info);
  if (absl::IsFailedPrecondition(text.status())) {
    return absl::ResourceExhaustedError(text.status().message());
  }
  return text;
}

absl::StatusOr<std::optional<Pointer>> TableRepository::ReadPointer(
    std::string_view table) {
  ROOST_RETURN_IF_ERROR(ValidateTableName(table));
  const std::string key = StrCat(table, "/", kPointerName);
  // The ETag first (Head): if the pointer moves between the two reads, a
  // swap with this ETag fails, as it should.
  ObjectInfo info;
  absl::StatusOr<std::string> text = ReadBounded(key, kMaxPointerSize, &info);
  if (absl::IsNotFound(text.status())) return std::nullopt;
  if (absl::IsFailedPrecondition(text.status())) {
    // The wrong file uploaded: damaged, as a POINTER naming no version is
    // (a rollback replaces it).
    return absl::DataLossError(StrCat(
        store_->uri(), "/", key, " is ", info.size,
        " bytes, more than a POINTER holds (", kMaxPointerSize, "): not read"));
  }
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
  return Pointer{*version, info.etag};
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
    absl::StatusOr<std::optional<Pointer>> now = ReadPointer(table);
    if (absl::IsDataLoss(now.status())) {
      // A damaged pointer is replaced (a rollback is how it is repaired),
      // still by compare-and-swap on the damaged object's ETag.
      ROOST_ASSIGN_OR_RETURN(ObjectInfo damaged,
                             store_->Head(StrCat(table, "/", kPointerName)));
      now = std::optional<Pointer>(Pointer{0, damaged.etag});
    }
    ROOST_RETURN_IF_ERROR(now.status());
    if (*now && (*now)->version == version) return absl::OkStatus();
    absl::Status s = WritePointer(table, version, *now);
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
  ROOST_RETURN_IF_ERROR(AdvancePointer(table, version).status());
  return version;
}

absl::StatusOr<bool> TableRepository::AdvancePointer(std::string_view table,
                                                     uint64_t version) {
  for (int race = 0; race < kMaxRaces; ++race) {
    ROOST_ASSIGN_OR_RETURN(std::optional<Pointer> now, ReadPointer(table));
    // Forward only: a newer version published meanwhile keeps the pointer.
    if (now && now->version >= version) return false;
    absl::Status s = WritePointer(table, version, now);
    if (s.ok()) return true;
    if (!absl::IsFailedPrecondition(s)) return s;
  }
  return absl::AbortedError(StrCat("the pointer of ", table,
                                   " kept moving while publishing ",
                                   VersionDirName(version)));
}

}  // namespace roost
