#include "repository/download_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <utility>

#include "util/file.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {

absl::StatusOr<std::unique_ptr<DownloadFile>> DownloadFile::Create(
    const std::string& destination, DownloadObserver* observer) {
  const std::filesystem::path target(destination);
  if (!target.has_filename()) {
    return absl::InvalidArgumentError(
        StrCat("download destination names no file: \"", destination, "\""));
  }
  const std::filesystem::path dir =
      target.has_parent_path() ? target.parent_path() : ".";
  std::string staging =
      (dir / StrCat(".", target.filename().string(), ".roost-download-XXXXXX"))
          .string();
  const int fd = ::mkostemp(staging.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot create", staging, errno);
  ::fchmod(fd, 0644);  // mkostemp's 0600 would hide a table from its server
  return std::unique_ptr<DownloadFile>(
      new DownloadFile(destination, std::move(staging), fd, observer));
}

DownloadFile::DownloadFile(std::string destination, std::string staging, int fd,
                           DownloadObserver* observer)
    : destination_(std::move(destination)),
      staging_(std::move(staging)),
      fd_(fd),
      checksum_(std::make_unique<StreamingChecksum>()),
      observer_(observer) {}

DownloadFile::~DownloadFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(staging_.c_str());
}

absl::Status DownloadFile::Append(std::string_view data) {
  ROOST_RETURN_IF_ERROR(WriteAll(fd_, data, staging_));
  checksum_->Update(data.data(), data.size());
  if (observer_ != nullptr) observer_->Data(data);
  size_ += data.size();
  if (size_ - written_back_ >= kWritebackBytes) {
    // Starts writing what arrived to disk now, while more arrives, so that
    // Commit's fsync waits only for the last piece (not all of a large
    // file). Only a hint: fsync in Commit is what makes the bytes durable
    // and reports any error, so a failure here is ignored.
    ::sync_file_range(fd_, static_cast<off_t>(written_back_),
                      static_cast<off_t>(size_ - written_back_),
                      SYNC_FILE_RANGE_WRITE);
    written_back_ = size_;
  }
  return absl::OkStatus();
}

absl::Status DownloadFile::Restart() {
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0) {
    return ErrnoError("cannot truncate", staging_, errno);
  }
  checksum_ = std::make_unique<StreamingChecksum>();
  if (observer_ != nullptr) observer_->Restart();
  size_ = 0;
  written_back_ = 0;
  return absl::OkStatus();
}

absl::Status DownloadFile::Commit(const DownloadOptions& options,
                                  std::string_view what) {
  if (options.expected_size && *options.expected_size != size_) {
    return absl::DataLossError(StrCat(what, ": size mismatch: expected ",
                                      *options.expected_size, " bytes, got ",
                                      size_));
  }
  if (options.expected_xxh3) {
    const uint64_t got = checksum_->Digest();
    if (got != *options.expected_xxh3) {
      return absl::DataLossError(
          StrCat(what, ": checksum mismatch: expected xxh3 ",
                 fmt::format("{:016x}", *options.expected_xxh3), ", got ",
                 fmt::format("{:016x}", got)));
    }
  }
  if (::fsync(fd_) != 0) return ErrnoError("cannot fsync", staging_, errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return ErrnoError("cannot close", staging_, errno);
  if (::rename(staging_.c_str(), destination_.c_str()) != 0) {
    return ErrnoError("cannot rename into place", destination_, errno);
  }
  committed_ = true;
  const std::filesystem::path target(destination_);
  return FsyncPath(target.has_parent_path() ? target.parent_path().string()
                                            : ".");
}

}  // namespace roost
