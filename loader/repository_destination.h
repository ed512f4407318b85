// RepositoryDestination: `roost-load build --repository URI --table T`, a
// Destination (destination.h) that is the next version of T in a table
// repository (repository/repository.h) instead of a data directory.
//
// Stage opens the repository and lists T's versions once, so that an hour
// of building never ends in "no such bucket", and makes the staging
// directory under --temp-dir (roost-publish-<pid>-XXXXXX), where the
// version is built and verified exactly as for a data directory. Publish
// then checks max_shrink against the newest complete version's MANIFEST,
// claims a version number, uploads every file and reads it back against
// the XXH3-64 its MANIFEST records, writes the MANIFEST last, and moves the
// pointer to the new version by compare-and-swap (forward only). With
// `retention` (--keep-versions), retention (repository/retention.h) runs
// after a successful publish; its failure is reported, not an error. The
// staging directory goes when the RepositoryDestination does, published or
// not.
//
// Why read back rather than Content-MD5 or x-amz-checksum-* on PUT: the
// read-back checks what the store holds now against the very checksum the
// servers check on download, whatever the store (a local or shared
// filesystem has no such headers), and on S3 it covers a multipart upload
// whole, where a per-part header checks each part alone and the object's
// ETag is no checksum of its bytes. It costs one more read of each file;
// reading is cheaper than uploading, and a version is built once and
// pulled many times.
//
// The store's errors are prefixed with what roost-load was doing. By then
// the input and the build were good: whatever the store answers is a
// failure to store the version (roost-load's I/O exit code), so the codes
// that mean bad input elsewhere (a local store's FailedPrecondition for a
// path under a file, an upload read back wrong) become Aborted; the others
// (Unavailable, PermissionDenied, NotFound for a missing bucket) keep
// theirs.
//
// Thread-safety: none (destination.h). Other publishers may publish into
// the same table at once: the repository's claims keep their numbers
// apart.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto destination, RepositoryDestination::Stage(
//       {.uri = "s3://tables/prod", .table = "users"}));  // before building
//   ... write destination->staging_dir() + "/table.sst", verify it ...
//   ROOST_ASSIGN_OR_RETURN(Publication p, destination->Publish(manifest));
//   // p.path == "s3://tables/prod/users/v000007"
#ifndef ROOST_LOADER_REPOSITORY_DESTINATION_H_
#define ROOST_LOADER_REPOSITORY_DESTINATION_H_

#include <memory>
#include <optional>
#include <string>

#include "loader/destination.h"
#include "repository/object_store.h"
#include "repository/repository.h"
#include "repository/retention.h"

namespace roost {

struct RepositoryDestinationOptions {
  // The repository: repository/object_store.h's URIs (s3://BUCKET[/PREFIX],
  // a local path, file:///PATH).
  std::string uri;
  std::string table;
  // Where the staging directory is made. The default value is "": the
  // system's temporary directory.
  std::string temp_dir;
  // A share in [0, 1]: refuse a version with fewer keys than the newest
  // complete one's by more than it. The default value is std::nullopt (no
  // check).
  std::optional<double> max_shrink;
  // Retention after publishing. The default value is std::nullopt (delete
  // nothing).
  std::optional<RetentionOptions> retention;
  // Publish a version whose schema of rows may not follow the newest
  // complete one's (schema_change.h), recording the change. The default
  // value is false: refused.
  bool allow_schema_change = false;
};

// The MANIFEST of the newest complete version of `table` in `repository`
// (at `uri`, for messages) older than `before` (when given), and its number
// in *version; std::nullopt when there is none. A MANIFEST that does not
// parse is DataLoss naming it.
absl::StatusOr<std::optional<Manifest>> NewestCompleteManifest(
    TableRepository* repository, const std::string& uri,
    const std::string& table, std::optional<uint64_t> before,
    uint64_t* version);

class RepositoryDestination final : public Destination {
 public:
  // Errors: InvalidArgument for a bad URI or environment; what the store
  // says (Unavailable, PermissionDenied, NotFound for a missing bucket)
  // otherwise, with a message naming the repository; the staging
  // directory's.
  static absl::StatusOr<std::unique_ptr<RepositoryDestination>> Stage(
      RepositoryDestinationOptions options);
  ~RepositoryDestination() override;

  const std::string& staging_dir() const override { return staging_; }
  absl::StatusOr<Publication> Publish(Manifest manifest) override;

 private:
  RepositoryDestination(RepositoryDestinationOptions options,
                        std::unique_ptr<ObjectStore> store)
      : options_(std::move(options)),
        store_(std::move(store)),
        repository_(store_.get()) {}

  // With options_.max_shrink: InvalidArgument when `keys` is fewer than
  // the newest complete version's (`previous`, number `version`) by more
  // than that share.
  absl::Status CheckShrink(const Manifest& previous, uint64_t version,
                           uint64_t keys);

  RepositoryDestinationOptions options_;
  std::unique_ptr<ObjectStore> store_;
  TableRepository repository_;  // over store_
  std::string staging_;
};

}  // namespace roost

#endif  // ROOST_LOADER_REPOSITORY_DESTINATION_H_
