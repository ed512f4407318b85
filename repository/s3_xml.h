// The XML documents of the S3 API that S3ObjectStore reads and writes, read
// and written with pugixml: error bodies, ListObjectsV2 pages, and the
// documents of a multipart upload.
#ifndef ROOST_REPOSITORY_S3_XML_H_
#define ROOST_REPOSITORY_S3_XML_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "repository/object_store.h"

namespace roost {

// <Error><Code>NoSuchKey</Code><Message>...</Message></Error>
struct S3Error {
  std::string code;
  std::string message;
};
// The error a body holds; nullopt when it is not an S3 error document.
std::optional<S3Error> ParseS3Error(std::string_view xml);

// One page of <ListBucketResult>, keys as S3 has them (prefix included).
struct S3ListPage {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> common_prefixes;
  std::string next_continuation_token;  // "" unless IsTruncated
};
// InvalidArgument when `xml` is not a ListBucketResult.
absl::StatusOr<S3ListPage> ParseListObjectsV2(std::string_view xml);

// The UploadId of an <InitiateMultipartUploadResult>.
absl::StatusOr<std::string> ParseUploadId(std::string_view xml);

// <CompleteMultipartUpload> naming parts 1..N by their ETags.
std::string CompleteMultipartUploadXml(const std::vector<std::string>& etags);

// "2026-11-26T06:10:00.000Z" (S3's LastModified, UTC) as seconds since the
// Unix epoch; 0 for anything else.
int64_t ParseIso8601(std::string_view text);

// An ETag without its surrounding quotes.
std::string UnquoteEtag(std::string_view etag);

}  // namespace roost

#endif  // ROOST_REPOSITORY_S3_XML_H_
