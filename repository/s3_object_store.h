// S3ObjectStore: an ObjectStore over S3 or an S3-compatible store (MinIO in
// the tests), for s3://BUCKET/PREFIX. Requests go through S3Client (libcurl,
// SigV4, retries); listings and error bodies are read with pugixml.
//
// Put with if_absent sends "If-None-Match: *" (on the single PUT, or on the
// CompleteMultipartUpload of a large one), so that of several racing writers
// exactly one succeeds and the others get AlreadyExists. Uploads above
// ObjectStoreOptions::multipart_threshold go in parts of part_size; a
// multipart upload that fails is aborted, so no parts are left to pay for.
// Downloads stream into a DownloadFile: a failed or mismatched one leaves
// nothing behind.
//
// Thread-safety: safe to call from many threads.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(S3Config config,
//                          S3Config::FromEnvironment("tables", "prod"));
//   S3ObjectStore store(config, {});
//   ROOST_ASSIGN_OR_RETURN(ObjectInfo info, store.Head("users/POINTER"));
#ifndef ROOST_REPOSITORY_S3_OBJECT_STORE_H_
#define ROOST_REPOSITORY_S3_OBJECT_STORE_H_

#include <string>
#include <string_view>

#include "repository/object_store.h"
#include "repository/s3_client.h"

namespace roost {

class S3ObjectStore : public ObjectStore {
 public:
  S3ObjectStore(S3Config config, const ObjectStoreOptions& options);

  std::string uri() const override;
  absl::Status Put(std::string_view key, std::string_view contents,
                   const PutOptions& options = {}) override;
  absl::Status PutFile(std::string_view key, const std::string& path,
                       const PutOptions& options = {}) override;
  absl::StatusOr<std::string> Get(std::string_view key,
                                  std::optional<ByteRange> range = {}) override;
  absl::Status GetToFile(std::string_view key, const std::string& path,
                         const DownloadOptions& options = {}) override;
  absl::StatusOr<ObjectInfo> Head(std::string_view key) override;
  absl::StatusOr<ListPage> List(const ListOptions& options) override;
  absl::Status Delete(std::string_view key) override;

 private:
  // The whole key in the bucket.
  std::string FullKey(std::string_view key) const;
  // "VERB s3://bucket/prefix/key", for messages.
  std::string What(std::string_view verb, std::string_view key) const;
  // Uploads `size` bytes of `body` (memory) or of `fd` (a file).
  absl::Status Upload(std::string_view key, std::string_view body, int fd,
                      uint64_t size, const PutOptions& options);
  absl::Status UploadInParts(std::string_view key, std::string_view body,
                             int fd, uint64_t size, const PutOptions& options);

  S3Client client_;
};

}  // namespace roost

#endif  // ROOST_REPOSITORY_S3_OBJECT_STORE_H_
