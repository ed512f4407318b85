// Publishing a built version into a table repository (repository/
// repository.h) instead of a data directory: `roost-load build
// --repository URI --table T`.
//
// The version is built and verified in a local directory first (under
// --temp-dir), exactly as for a data directory. Then: a version number is
// claimed, every file is uploaded and read back against the XXH3-64 its
// MANIFEST records, the MANIFEST goes last, and the pointer moves to the
// new version by compare-and-swap (forward only). With keep_versions,
// retention (repository/retention.h) runs after a successful publish.
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
// Example:
//   ROOST_ASSIGN_OR_RETURN(RepositoryTarget target,
//                          OpenRepositoryTarget(job));  // before building
//   ... build into dir, fill `manifest` (all but its version) ...
//   ROOST_ASSIGN_OR_RETURN(RepositoryPublished p,
//       PublishToRepository(target, job, dir, std::move(manifest)));
#ifndef ROOST_LOADER_REPOSITORY_DESTINATION_H_
#define ROOST_LOADER_REPOSITORY_DESTINATION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "loader/build_job.h"
#include "repository/object_store.h"
#include "repository/repository.h"
#include "repository/retention.h"
#include "storage/manifest.h"

namespace roost {

// An opened repository, checked reachable before the build starts: an
// hour of building must not end in "no such bucket".
struct RepositoryTarget {
  std::unique_ptr<ObjectStore> store;
  std::unique_ptr<TableRepository> repository;
};

// Opens job.repository and lists job.table's versions once. Errors:
// InvalidArgument for a bad URI or environment; what the store says
// (Unavailable, PermissionDenied, NotFound for a missing bucket) otherwise,
// with a message naming the repository.
absl::StatusOr<RepositoryTarget> OpenRepositoryTarget(const BuildJob& job);

// With job.max_shrink: InvalidArgument when `keys` is fewer than the
// newest complete version's (its MANIFEST read from the repository) by
// more than that share.
absl::Status CheckRepositoryShrink(RepositoryTarget& target,
                                   const BuildJob& job, uint64_t keys);

struct RepositoryPublished {
  uint64_t version = 0;
  std::string uri;  // ".../T/v000007"
  // Retention, when job.keep_versions is set: what went, or why it failed
  // (the version is published all the same).
  PruneResult pruned;
  std::string retention_error;
};

// Publishes the files `manifest.files` names, from `dir`, as the next
// version of job.table. `manifest` is complete but for its version.
absl::StatusOr<RepositoryPublished> PublishToRepository(
    RepositoryTarget& target, const BuildJob& job, const std::string& dir,
    Manifest manifest);

}  // namespace roost

#endif  // ROOST_LOADER_REPOSITORY_DESTINATION_H_
