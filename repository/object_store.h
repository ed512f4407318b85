// ObjectStore: the few operations a table repository needs from object
// storage (S3 and S3-compatible stores, or a local directory), behind one
// interface so that the repository protocol, the loader and the server never
// know which they talk to.
//
// Objects are named by keys relative to the store's root (the PREFIX of
// s3://BUCKET/PREFIX, or the directory of a local path): '/'-separated
// segments, none empty, "." or "..", no control characters
// (ValidateObjectKey). Objects are immutable once written except by another
// Put of the same key, which replaces the object whole: a reader sees the
// old object or the new one, never a mix.
//
// Thread-safety: every implementation may be called from many threads at
// once.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(std::unique_ptr<ObjectStore> store,
//                          OpenObjectStore("s3://tables/prod"));
//   PutOptions if_absent;
//   if_absent.if_absent = true;
//   absl::Status s = store->Put("users/v7/MANIFEST", manifest, if_absent);
//   if (absl::IsAlreadyExists(s)) { /* another publisher took v7 */ }
//   DownloadOptions expect;
//   expect.expected_size = file.size;
//   expect.expected_xxh3 = file.xxh3;
//   ROOST_RETURN_IF_ERROR(store->GetToFile(
//       "users/v7/table.sst", "/data/users/.staging/table.sst", expect));
#ifndef ROOST_REPOSITORY_OBJECT_STORE_H_
#define ROOST_REPOSITORY_OBJECT_STORE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost {

// What Head and List say about an object.
struct ObjectInfo {
  std::string key;  // relative to the store's root
  uint64_t size = 0;
  // Changes whenever the object is replaced. For S3 the ETag without its
  // quotes; for a local store derived from the file's inode, size and
  // modification time.
  std::string etag;
  // When the object was last written, in seconds since the Unix epoch, by
  // the store's clock (S3: LastModified of a listing; local: the file's
  // modification time). 0 when the store did not say (S3's Head).
  int64_t modified_unix = 0;
};

struct PutOptions {
  // Write only if no object has the key: exactly one of several racing
  // Puts with if_absent succeeds, the others get AlreadyExists (S3:
  // If-None-Match: *, answered 412 Precondition Failed; local: link(2)).
  // The default value is false (replace whatever is there).
  bool if_absent = false;
  // When not empty, write only if the object exists and its ETag (as Head
  // gives it) is this one: a compare-and-swap, failing with
  // FailedPrecondition when another writer changed or removed the object
  // meanwhile (S3: If-Match, answered 412; local: under a lock that other
  // conditional writers of the key take too). The default value is "".
  std::string if_match;
};

// A part of an object: `length` bytes from `offset`.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Sees a download's bytes as they arrive (DownloadOptions::observer).
class DownloadObserver {
 public:
  virtual ~DownloadObserver() = default;
  // The next bytes of the object, in order.
  virtual void Data(std::string_view bytes) = 0;
  // A retried download starts again from the object's first byte.
  virtual void Restart() = 0;
};

struct DownloadOptions {
  // When set, the download fails with DataLoss unless the object has
  // exactly this many bytes. The default value is unset (not checked).
  std::optional<uint64_t> expected_size;
  // When set, the download fails with DataLoss unless the XXH3-64 of the
  // object's bytes (as a MANIFEST records them) is this. The default value
  // is unset (not checked).
  std::optional<uint64_t> expected_xxh3;
  // When set, GetToFile shows it every byte as it arrives, beside the
  // checksum (for checks of the file's own that would otherwise read it
  // again). Not owned. The default value is nullptr.
  DownloadObserver* observer = nullptr;
};

struct ListOptions {
  // Only keys that start with this. The default value is "" (all keys).
  std::string prefix;
  // When true, keys with a '/' after `prefix` are rolled up into
  // ListPage::common_prefixes (up to and including that '/'), as S3's
  // delimiter does: listing "users/" then gives "users/v1/", "users/v2/".
  // The default value is false.
  bool group_by_slash = false;
  // ListPage::next_page_token of the previous page; "" for the first page.
  std::string page_token;
  // At most this many keys and common prefixes per page (1 to 1000). The
  // default value is 1000.
  int max_keys = 1000;
};

struct ListPage {
  std::vector<ObjectInfo> objects;           // in key order
  std::vector<std::string> common_prefixes;  // in order; group_by_slash only
  std::string next_page_token;               // "" on the last page
};

// The interface. Errors: InvalidArgument for a bad key or range, NotFound
// for a missing object (and a missing bucket), PermissionDenied for refused
// credentials (naming S3's error code), DataLoss for a download that does
// not match what the caller expected, Unavailable when the store could not
// be reached after retries; messages name the operation and the object.
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // The URI of the root, for messages: "s3://bucket/prefix" or
  // "file:///path".
  virtual std::string uri() const = 0;

  // Writes `contents` as `key`.
  virtual absl::Status Put(std::string_view key, std::string_view contents,
                           const PutOptions& options = {}) = 0;
  // Writes the file at `path` as `key` (streamed; S3: in parts when large).
  virtual absl::Status PutFile(std::string_view key, const std::string& path,
                               const PutOptions& options = {}) = 0;

  // The object's bytes, or those of `range` (clipped to the object's end;
  // OutOfRange if it starts at or past the end, InvalidArgument if empty).
  virtual absl::StatusOr<std::string> Get(
      std::string_view key, std::optional<ByteRange> range = {}) = 0;
  // Streams the object into the file `path`, replacing it atomically once
  // every byte is there, checked against `options` and fsynced (the file,
  // then its directory, as DownloadFile::Commit does). On any failure no
  // file is left at `path` by this call (an existing one is untouched), and
  // no partial file beside it.
  virtual absl::Status GetToFile(std::string_view key, const std::string& path,
                                 const DownloadOptions& options = {}) = 0;

  virtual absl::StatusOr<ObjectInfo> Head(std::string_view key) = 0;

  // One page of the keys under options.prefix, in key order.
  virtual absl::StatusOr<ListPage> List(const ListOptions& options) = 0;

  // Removes the object. Removing a missing object is not an error.
  virtual absl::Status Delete(std::string_view key) = 0;

  // Every page of List: all objects under `prefix`.
  absl::StatusOr<std::vector<ObjectInfo>> ListAll(std::string_view prefix);
};

// OK if `key` can name an object: not empty, at most 1024 bytes, no empty,
// "." or ".." segment, no leading or trailing '/', no control character.
// InvalidArgument saying what is wrong otherwise.
absl::Status ValidateObjectKey(std::string_view key);

// InvalidArgument when `options` asks for both if_absent and if_match.
absl::Status ValidatePutOptions(const PutOptions& options);

// How an S3 store retries and splits its uploads, and when a store's
// requests stop (a local store heeds only `stop`).
struct ObjectStoreOptions {
  // Uploads larger than this go in parts (S3 multipart upload). The default
  // value is 64 MiB.
  uint64_t multipart_threshold = uint64_t{64} << 20;
  // The size of each part but the last (S3 refuses parts under 5 MiB). The
  // default value is 16 MiB.
  uint64_t part_size = uint64_t{16} << 20;
  // Attempts per request before giving up on a connection error, a 5xx or a
  // throttling answer (4xx answers are not retried). The default value is 5.
  int max_attempts = 5;
  // The wait before the first retry, doubled for each next one up to
  // max_backoff, each with random jitter of up to half of it. The default
  // values are 200 ms and 10 s.
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{10000};
  // Connecting may take this long per attempt. The default value is 10 s.
  std::chrono::milliseconds connect_timeout{10000};
  // A transfer slower than 1 KiB/s for this long is abandoned (and
  // retried). The default value is 60 s.
  std::chrono::milliseconds stall_timeout{60000};
  // When set, read while requests run: once it is true every request
  // under way ends within about a second with Cancelled (S3: checked as
  // the transfer goes, while connecting, and between retries; a local
  // store: between the 1 MiB pieces of a GetToFile), and new ones end at
  // once; a GetToFile so stopped leaves no file. For a server's shutdown,
  // which must not wait for a large download or for a store that stopped
  // answering. Must outlive the store. The default value is nullptr
  // (requests run to their end).
  const std::atomic<bool>* stop = nullptr;
};

// Opens the store a URI names:
//   s3://BUCKET[/PREFIX]   S3 or an S3-compatible store; credentials
//                          from the AWS default chain (aws_credentials.h),
//                          region and endpoint from the environment
//                          (AWS_REGION, AWS_ENDPOINT_URL_S3 or
//                          AWS_ENDPOINT_URL; S3Config::FromEnvironment)
//   file:///PATH, or a path   a local directory (created on first Put)
// InvalidArgument naming what is wrong with a bad URI or environment.
absl::StatusOr<std::unique_ptr<ObjectStore>> OpenObjectStore(
    std::string_view uri, const ObjectStoreOptions& options = {});

}  // namespace roost

#endif  // ROOST_REPOSITORY_OBJECT_STORE_H_
