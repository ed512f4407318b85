#include "repository/s3_object_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <utility>
#include <vector>

#include "repository/download_file.h"
#include "repository/s3_xml.h"
#include "util/file.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr const char* kOctetStream = "Content-Type: application/octet-stream";

// The headers of PutOptions' conditions.
void AddConditions(const PutOptions& options,
                   std::vector<std::string>* headers) {
  if (options.if_absent) headers->push_back("If-None-Match: *");
  if (!options.if_match.empty()) {
    headers->push_back(StrCat("If-Match: \"", options.if_match, "\""));
  }
}

// The answer to a conditional write that lost: AlreadyExists for if_absent,
// FailedPrecondition for if_match (also when the object is gone), keeping
// S3's words.
absl::Status LostRace(const PutOptions& options, const absl::Status& s) {
  if (options.if_absent && s.code() == absl::StatusCode::kFailedPrecondition) {
    return absl::AlreadyExistsError(StrCat(
        s.message(), " (the object exists: another writer put it first)"));
  }
  if (!options.if_match.empty() &&
      (s.code() == absl::StatusCode::kFailedPrecondition ||
       s.code() == absl::StatusCode::kNotFound)) {
    return absl::FailedPreconditionError(
        StrCat(s.message(),
               " (the object is not the one expected: another "
               "writer changed or removed it)"));
  }
  return s;
}

}  // namespace

S3ObjectStore::S3ObjectStore(S3Config config, const ObjectStoreOptions& options)
    : client_(std::move(config), options) {}

std::string S3ObjectStore::uri() const {
  const S3Config& c = client_.config();
  return c.prefix.empty() ? StrCat("s3://", c.bucket)
                          : StrCat("s3://", c.bucket, "/", c.prefix);
}

std::string S3ObjectStore::FullKey(std::string_view key) const {
  const std::string& prefix = client_.config().prefix;
  return prefix.empty() ? std::string(key) : StrCat(prefix, "/", key);
}

std::string S3ObjectStore::What(std::string_view verb,
                                std::string_view key) const {
  return StrCat(verb, " ", uri(), "/", key);
}

absl::Status S3ObjectStore::Put(std::string_view key, std::string_view contents,
                                const PutOptions& options) {
  ROOST_RETURN_IF_ERROR(ValidateObjectKey(key));
  return Upload(key, contents, -1, contents.size(), options);
}

absl::Status S3ObjectStore::PutFile(std::string_view key,
                                    const std::string& path,
                                    const PutOptions& options) {
  ROOST_RETURN_IF_ERROR(ValidateObjectKey(key));
  uint64_t size = 0;
  ROOST_ASSIGN_OR_RETURN(const int raw_fd, OpenRegularFile(path, &size));
  ScopedFd fd(raw_fd);
  return Upload(key, {}, fd.get(), size, options);
}

absl::Status S3ObjectStore::Upload(std::string_view key, std::string_view body,
                                   int fd, uint64_t size,
                                   const PutOptions& options) {
  ROOST_RETURN_IF_ERROR(ValidatePutOptions(options));
  if (size > client_.options().multipart_threshold) {
    return UploadInParts(key, body, fd, size, options);
  }
  S3Request request;
  request.method = "PUT";
  request.key = FullKey(key);
  request.headers = {kOctetStream};
  AddConditions(options, &request.headers);
  request.body = body;
  request.body_fd = fd;
  request.body_length = size;
  absl::StatusOr<S3Response> response = client_.Send(request, What("PUT", key));
  if (!response.ok()) return LostRace(options, response.status());
  return absl::OkStatus();
}

absl::Status S3ObjectStore::UploadInParts(std::string_view key,
                                          std::string_view body, int fd,
                                          uint64_t size,
                                          const PutOptions& options) {
  const std::string what = What("multipart PUT", key);
  const uint64_t part_size = std::max<uint64_t>(client_.options().part_size, 1);
  S3Request start;
  start.method = "POST";
  start.key = FullKey(key);
  start.query = {{"uploads", ""}};
  start.headers = {kOctetStream};
  ROOST_ASSIGN_OR_RETURN(S3Response started, client_.Send(start, what));
  ROOST_ASSIGN_OR_RETURN(const std::string upload_id,
                         ParseUploadId(started.body));

  auto finish = [&]() -> absl::Status {
    std::vector<std::string> etags;
    for (uint64_t offset = 0; offset < size; offset += part_size) {
      const uint64_t length = std::min(part_size, size - offset);
      S3Request part;
      part.method = "PUT";
      part.key = FullKey(key);
      part.query = {{"partNumber", std::to_string(etags.size() + 1)},
                    {"uploadId", upload_id}};
      if (fd >= 0) {
        part.body_fd = fd;
        part.body_offset = offset;
        part.body_length = length;
      } else {
        part.body = body.substr(offset, length);
      }
      ROOST_ASSIGN_OR_RETURN(
          S3Response uploaded,
          client_.Send(part, StrCat(what, " part ", etags.size() + 1)));
      if (uploaded.etag.empty()) {
        return absl::InternalError(StrCat(what, ": part ", etags.size() + 1,
                                          " came back without ETag"));
      }
      etags.push_back(std::move(uploaded.etag));
    }
    const std::string document = CompleteMultipartUploadXml(etags);
    S3Request complete;
    complete.method = "POST";
    complete.key = FullKey(key);
    complete.query = {{"uploadId", upload_id}};
    complete.headers = {"Content-Type: application/xml"};
    AddConditions(options, &complete.headers);
    complete.body = document;
    absl::StatusOr<S3Response> done = client_.Send(complete, what);
    if (!done.ok()) return LostRace(options, done.status());
    // S3 may answer 200 and still have failed: the error is in the body.
    if (auto error = ParseS3Error(done->body)) {
      absl::Status failed = absl::UnavailableError(
          StrCat(what, ": ", error->code, ": ", error->message));
      if (error->code == "PreconditionFailed") {
        return LostRace(options,
                        absl::FailedPreconditionError(failed.message()));
      }
      return failed;
    }
    return absl::OkStatus();
  };
  absl::Status status = finish();
  if (!status.ok()) {
    // Abort, so that the parts are not kept (and billed); the first error
    // is the one to report.
    S3Request abort;
    abort.method = "DELETE";
    abort.key = FullKey(key);
    abort.query = {{"uploadId", upload_id}};
    client_.Send(abort, StrCat(what, " abort")).IgnoreError();
  }
  return status;
}

absl::StatusOr<std::string> S3ObjectStore::Get(std::string_view key,
                                               std::optional<ByteRange> range) {
  ROOST_RETURN_IF_ERROR(ValidateObjectKey(key));
  S3Request request;
  request.key = FullKey(key);
  if (range) {
    if (range->length == 0) {
      return absl::InvalidArgumentError(
          StrCat(What("GET", key), ": empty byte range"));
    }
    request.headers.push_back(StrCat("Range: bytes=", range->offset, "-",
                                     range->offset + range->length - 1));
  }
  ROOST_ASSIGN_OR_RETURN(S3Response response,
                         client_.Send(request, What("GET", key)));
  // A store that ignores Range answers 200 with the whole object.
  if (range && response.http_status == 200) {
    if (range->offset >= response.body.size()) {
      return absl::OutOfRangeError(
          StrCat(What("GET", key), ": range starts past the end"));
    }
    return response.body.substr(range->offset, range->length);
  }
  return std::move(response.body);
}

absl::Status S3ObjectStore::GetToFile(std::string_view key,
                                      const std::string& path,
                                      const DownloadOptions& options) {
  ROOST_RETURN_IF_ERROR(ValidateObjectKey(key));
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<DownloadFile> file,
                         DownloadFile::Create(path, options.observer));
  S3Request request;
  request.key = FullKey(key);
  // A retry starts the file again: each attempt downloads the whole object.
  request.before_attempt = [&] { return file->Restart(); };
  request.sink = [&](std::string_view data) -> absl::Status {
    if (options.expected_size &&
        file->size() + data.size() > *options.expected_size) {
      return absl::DataLossError(
          StrCat(What("GET", key), ": size mismatch: more than the expected ",
                 *options.expected_size, " bytes"));
    }
    return file->Append(data);
  };
  ROOST_ASSIGN_OR_RETURN(S3Response response,
                         client_.Send(request, What("GET", key)));
  (void)response;
  return file->Commit(options, What("GET", key));
}

absl::StatusOr<ObjectInfo> S3ObjectStore::Head(std::string_view key) {
  ROOST_RETURN_IF_ERROR(ValidateObjectKey(key));
  S3Request request;
  request.method = "HEAD";
  request.key = FullKey(key);
  ROOST_ASSIGN_OR_RETURN(S3Response response,
                         client_.Send(request, What("HEAD", key)));
  return ObjectInfo{std::string(key), response.content_length,
                    std::move(response.etag)};
}

absl::StatusOr<ListPage> S3ObjectStore::List(const ListOptions& options) {
  if (options.max_keys < 1 || options.max_keys > 1000) {
    return absl::InvalidArgumentError(
        StrCat("list ", uri(), ": max_keys must be 1 to 1000, not ",
               options.max_keys));
  }
  const std::string& root = client_.config().prefix;
  const std::string strip = root.empty() ? "" : root + "/";
  S3Request request;
  request.query = {{"list-type", "2"},
                   {"max-keys", std::to_string(options.max_keys)},
                   {"prefix", strip + options.prefix}};
  if (options.group_by_slash) request.query.push_back({"delimiter", "/"});
  if (!options.page_token.empty()) {
    request.query.push_back({"continuation-token", options.page_token});
  }
  const std::string what = StrCat("LIST ", uri(), "/", options.prefix);
  ROOST_ASSIGN_OR_RETURN(S3Response response, client_.Send(request, what));
  ROOST_ASSIGN_OR_RETURN(S3ListPage s3_page, ParseListObjectsV2(response.body));
  ListPage page;
  for (ObjectInfo& info : s3_page.objects) {
    if (info.key.compare(0, strip.size(), strip) != 0) {
      return absl::InternalError(
          StrCat(what, ": listed \"", info.key, "\", outside the prefix"));
    }
    info.key.erase(0, strip.size());
    page.objects.push_back(std::move(info));
  }
  for (std::string& p : s3_page.common_prefixes) {
    if (p.compare(0, strip.size(), strip) != 0) continue;
    page.common_prefixes.push_back(p.substr(strip.size()));
  }
  page.next_page_token = std::move(s3_page.next_continuation_token);
  return page;
}

absl::Status S3ObjectStore::Delete(std::string_view key) {
  ROOST_RETURN_IF_ERROR(ValidateObjectKey(key));
  S3Request request;
  request.method = "DELETE";
  request.key = FullKey(key);
  // S3 answers a missing key 204 like any other.
  return client_.Send(request, What("DELETE", key)).status();
}

}  // namespace roost
