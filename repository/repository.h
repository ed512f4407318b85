// TableRepository: table versions in an object store, the way a batch job
// publishes them and servers find them (issue 14). Layout under the store's
// root, for table T:
//
//   T/v000007/CLAIM       written first, if absent: version 7 is taken
//   T/v000007/<file>...   the version's files (shard files), uploaded next
//   T/v000007/MANIFEST    written last: the version is complete once it is
//   T/POINTER             "v000007\n": the version servers are to serve
//
// A version number is claimed with a conditional write (PutOptions::
// if_absent), so that two publishers racing on one table never get the same
// number: the loser takes the next. A version without its MANIFEST (being
// uploaded, or abandoned by a killed publisher) is never complete and never
// pointed to, but holds its number. The pointer only moves by
// compare-and-swap (PutOptions::if_match): a publisher moves it forward only,
// never over a newer version another publisher pointed to meanwhile;
// MovePointer (a rollback) moves it anywhere complete.
//
// Thread-safety: as safe as the ObjectStore: many threads and processes may
// publish to one repository at once.
//
// Example:
//   TableRepository repository(store.get());
//   ROOST_ASSIGN_OR_RETURN(
//       uint64_t version,
//       repository.Publish("users", {{"table.sst", "/tmp/build/table.sst"}},
//                          [&](uint64_t v) { return ManifestFor(v); }));
//   ROOST_ASSIGN_OR_RETURN(std::optional<Pointer> p,
//                          repository.ReadPointer("users"));
#ifndef ROOST_REPOSITORY_REPOSITORY_H_
#define ROOST_REPOSITORY_REPOSITORY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "repository/object_store.h"

namespace roost {

inline constexpr std::string_view kClaimName = "CLAIM";
inline constexpr std::string_view kPointerName = "POINTER";

// The largest POINTER read: one holds a version name ("v000007\n"). A
// larger object (the wrong file uploaded) is refused from its size, never
// downloaded. A MANIFEST is read up to kMaxManifestSize (storage/
// manifest.h), the largest any reader of one takes.
inline constexpr uint64_t kMaxPointerSize = 256;

struct RepositoryVersion {
  uint64_t version = 0;
  // Has its MANIFEST; a version without one is being uploaded or was
  // abandoned, and holds its number all the same.
  bool complete = false;

  bool operator==(const RepositoryVersion&) const = default;
};

// What a table's POINTER says, and its ETag for a compare-and-swap.
struct Pointer {
  uint64_t version = 0;
  std::string etag;
};

// A version and every object it holds, as a listing shows them: what
// `roost-load versions` prints and retention judges by.
struct VersionObjects {
  uint64_t version = 0;
  bool complete = false;  // has its MANIFEST
  // Every object of the version (CLAIM and MANIFEST included), in key
  // order, with their sizes and times.
  std::vector<ObjectInfo> objects;

  // The time of the CLAIM (0 when it has none, or the store did not say)
  // and of the MANIFEST (0 when incomplete), Unix seconds.
  int64_t ClaimedAt() const;
  int64_t CompletedAt() const;
  // The newest time of any of its objects: a publisher still uploading
  // keeps this recent (0 when the store did not say).
  int64_t LastWrittenAt() const;
  // The version's files (neither CLAIM nor MANIFEST): how many, how large.
  uint64_t FileCount() const;
  uint64_t FileBytes() const;
};

// A file of a version: its name in the version (e.g. "table.sst") and the
// local file to upload.
struct VersionFile {
  std::string name;
  std::string path;
  // When set, the upload is read back whole and its XXH3-64 (the checksum a
  // MANIFEST records and servers check on download) compared with this:
  // DataLoss on a mismatch, and the version is never completed. The
  // default value is unset (only the stored size is checked).
  std::optional<uint64_t> xxh3 = std::nullopt;
};

class TableRepository {
 public:
  // `store` is not owned and must outlive the repository.
  explicit TableRepository(ObjectStore* store) : store_(store) {}

  // The versions of `table`, oldest first (empty for an unknown table).
  absl::StatusOr<std::vector<RepositoryVersion>> ListVersions(
      std::string_view table);

  // Claims the lowest number above every version of `table` (complete or
  // not), retrying on the next one when another publisher took it first.
  // `publisher` is recorded in the CLAIM object, for people.
  absl::StatusOr<uint64_t> ClaimVersion(std::string_view table,
                                        std::string_view publisher);

  // Uploads `file` into claimed `version`, then checks the stored size and,
  // with file.xxh3, the stored bytes (VerifyObject).
  absl::Status UploadFile(std::string_view table, uint64_t version,
                          const VersionFile& file);

  // Reads `version`'s object `name` back and checks it has `size` bytes
  // whose XXH3-64 is `xxh3`; DataLoss naming the object and both values
  // otherwise. Reads in ranges of a few MiB: memory stays bounded.
  absl::Status VerifyObject(std::string_view table, uint64_t version,
                            std::string_view name, uint64_t size,
                            uint64_t xxh3);

  // Writes the MANIFEST of claimed `version`: the version is complete.
  absl::Status CompleteVersion(std::string_view table, uint64_t version,
                               std::string_view manifest);

  // The MANIFEST of a complete version; NotFound when it is not complete,
  // ResourceExhausted (and not read) when it is larger than
  // kMaxManifestSize bytes. Only that many bytes are ever asked of the
  // store, so that a huge object costs neither memory nor a download.
  absl::StatusOr<std::string> ReadManifest(std::string_view table,
                                           uint64_t version);

  // The pointer of `table`; nullopt when none was ever written.
  // DataLoss when it holds anything but a version name, or is larger than
  // kMaxPointerSize bytes (then not read).
  absl::StatusOr<std::optional<Pointer>> ReadPointer(std::string_view table);

  // Points `table` at complete `version` if the pointer is still `expected`
  // (nullopt: if there is no pointer yet). FailedPrecondition when `version`
  // is not complete or the pointer changed meanwhile.
  absl::Status SwapPointer(std::string_view table, uint64_t version,
                           const std::optional<Pointer>& expected);

  // Points `table` at complete `version` unless it names a newer version
  // already (another publisher's), by compare-and-swap, retried while the
  // pointer moves: Publish's last step. Returns whether it moved.
  absl::StatusOr<bool> AdvancePointer(std::string_view table, uint64_t version);

  // Points `table` at complete `version` whatever it points at now (a
  // rollback, or a roll forward again), a damaged pointer included.
  absl::Status MovePointer(std::string_view table, uint64_t version);

  // The whole protocol: claims a version, uploads `files` in order, writes
  // the MANIFEST `make_manifest` gives for the claimed number, and moves
  // the pointer to it unless a newer version is pointed to already.
  // Returns the version published.
  absl::StatusOr<uint64_t> Publish(
      std::string_view table, const std::vector<VersionFile>& files,
      const std::function<absl::StatusOr<std::string>(uint64_t)>& make_manifest,
      std::string_view publisher = "roost");

  // The versions of `table` with their objects, oldest first.
  absl::StatusOr<std::vector<VersionObjects>> ListVersionObjects(
      std::string_view table);

  // Deletes every object of `version`: the MANIFEST first (so that a
  // deletion cut short leaves an incomplete version, never a complete one
  // missing files), then its files, the CLAIM last. FailedPrecondition,
  // and nothing deleted, when the pointer names `version`.
  absl::Status DeleteVersion(std::string_view table, uint64_t version);

  // "T/v000007/NAME".
  static std::string VersionKey(std::string_view table, uint64_t version,
                                std::string_view name);

 private:
  // The object `key` if it has at most `max_size` bytes (asking the store
  // for no more than max_size + 1 of them); `info` gets what Head said of
  // it. FailedPrecondition naming both sizes when it is larger.
  absl::StatusOr<std::string> ReadBounded(const std::string& key,
                                          uint64_t max_size, ObjectInfo* info);
  // FailedPrecondition unless `version` has its MANIFEST.
  absl::Status CheckComplete(std::string_view table, uint64_t version);
  // The conditional write of the pointer; FailedPrecondition when it is
  // not `expected` any more.
  absl::Status WritePointer(std::string_view table, uint64_t version,
                            const std::optional<Pointer>& expected);

  ObjectStore* store_;
};

}  // namespace roost

#endif  // ROOST_REPOSITORY_REPOSITORY_H_
