// LocalObjectStore: an ObjectStore in a local directory (a path or
// file:///PATH), for tests and for repositories on a shared filesystem.
// The key "users/v7/MANIFEST" is the file ROOT/users/v7/MANIFEST.
//
// Every write goes to a temporary file beside its object (named
// ".roost-put-*", which List never shows and no key may name), is fsynced,
// and then appears whole: by rename(2) over the old file, or, for
// PutOptions::if_absent, by link(2), which fails when the name is taken, so
// that of several racing writers (processes or machines on one filesystem)
// exactly one wins. PutOptions::if_match compares the ETag and renames
// while holding a lock file (".roost-lock-NAME") that every conditional
// writer of the key takes.
//
// A key cannot be both an object and the directory of others ("a" and
// "a/b"), which S3 allows: such a Put fails with FailedPrecondition.
//
// Thread-safety: safe to call from many threads and processes.
//
// Example:
//   LocalObjectStore store("/srv/roost-repository");
//   ROOST_RETURN_IF_ERROR(store.Put("users/POINTER", "v7\n"));
#ifndef ROOST_REPOSITORY_LOCAL_OBJECT_STORE_H_
#define ROOST_REPOSITORY_LOCAL_OBJECT_STORE_H_

#include <atomic>
#include <string>
#include <string_view>

#include "repository/object_store.h"

namespace roost {

class LocalObjectStore : public ObjectStore {
 public:
  // `root` need not exist yet: the first Put creates it. `stop` as
  // ObjectStoreOptions::stop (nullptr: never).
  explicit LocalObjectStore(std::string root,
                            const std::atomic<bool>* stop = nullptr);

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
  // The file of `key`, once the key is checked.
  absl::StatusOr<std::string> PathOf(std::string_view key) const;
  // Writes what `fill` writes into a temporary file, then makes it `key`.
  template <typename Fill>
  absl::Status Write(std::string_view key, const PutOptions& options,
                     Fill fill);

  std::string root_;
  const std::atomic<bool>* const stop_;
};

}  // namespace roost

#endif  // ROOST_REPOSITORY_LOCAL_OBJECT_STORE_H_
