// DownloadFile: the staging file a download streams into, beside its
// destination, checked and renamed into place only when whole.
//
// Bytes are appended with Append (which also feeds the XXH3-64 the caller
// may expect, so that the bytes are checked as they arrive, never read
// back; and starts their disk writes every 8 MiB, so that the fsync of a
// large download waits for its last piece only, not the whole file, and
// the page cache never holds more of it unwritten than the disk lags
// behind); Restart empties the file again for a retried download;
// Commit checks size and checksum against DownloadOptions, fsyncs, and
// renames the staging file over the destination. Until Commit succeeds the
// destination is untouched, and the destructor removes the staging file:
// no path through a download leaves a partial file behind.
//
// Not thread-safe: one download, one thread.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto file, DownloadFile::Create(path));
//   ROOST_RETURN_IF_ERROR(file->Append(chunk));  // for every chunk
//   ROOST_RETURN_IF_ERROR(file->Commit(options, "s3://b/users/v7/x.sst"));
#ifndef ROOST_REPOSITORY_DOWNLOAD_FILE_H_
#define ROOST_REPOSITORY_DOWNLOAD_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "repository/object_store.h"
#include "storage/hash.h"

namespace roost {

class DownloadFile {
 public:
  // Creates the staging file "DIR/.NAME.roost-download-XXXXXX" for the
  // destination DIR/NAME. The directory must exist.
  // `observer`, when not null, sees every byte Append takes and every
  // Restart (DownloadOptions::observer).
  static absl::StatusOr<std::unique_ptr<DownloadFile>> Create(
      const std::string& destination, DownloadObserver* observer = nullptr);
  ~DownloadFile();
  DownloadFile(const DownloadFile&) = delete;
  DownloadFile& operator=(const DownloadFile&) = delete;

  absl::Status Append(std::string_view data);
  // Forgets every byte appended so far.
  absl::Status Restart();
  uint64_t size() const { return size_; }

  // Checks, syncs and renames; `what` names the object in messages.
  absl::Status Commit(const DownloadOptions& options, std::string_view what);

 private:
  DownloadFile(std::string destination, std::string staging, int fd,
               DownloadObserver* observer);

  // Append starts the disk writes of every this many bytes as they arrive.
  static constexpr uint64_t kWritebackBytes = uint64_t{8} << 20;

  std::string destination_;
  std::string staging_;
  int fd_;
  uint64_t size_ = 0;
  uint64_t written_back_ = 0;  // bytes whose writeback Append started
  std::unique_ptr<StreamingChecksum> checksum_;
  DownloadObserver* const observer_;
  bool committed_ = false;
};

}  // namespace roost

#endif  // ROOST_REPOSITORY_DOWNLOAD_FILE_H_
