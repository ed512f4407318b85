#include "loader/file_destination.h"

#include <stdio.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "storage/version/data_dir.h"
#include "util/file.h"
#include "util/owned_dir.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {

absl::StatusOr<std::unique_ptr<FileDestination>> FileDestination::Stage(
    std::string output_file) {
  const std::filesystem::path out(output_file);
  const std::string parent =
      out.has_parent_path() ? out.parent_path().string() : ".";
  ROOST_ASSIGN_OR_RETURN(
      std::string staging,
      MakeOwnedDir(parent, StrCat(out.filename().string(), ".tmp-")));
  return std::unique_ptr<FileDestination>(
      new FileDestination(std::move(output_file), std::move(staging)));
}

FileDestination::~FileDestination() { RemoveTree(staging_); }

absl::StatusOr<Publication> FileDestination::Publish(Manifest /*manifest*/) {
  const std::string table_path = StrCat(staging_, "/", kTableFileName);
  ROOST_RETURN_IF_ERROR(FsyncPath(table_path));
  if (::rename(table_path.c_str(), output_file_.c_str()) != 0) {
    return absl::InternalError(StrCat("cannot rename ", table_path, " to ",
                                      output_file_, ": ",
                                      std::strerror(errno)));
  }
  const std::filesystem::path parent =
      std::filesystem::absolute(output_file_).parent_path();
  ROOST_RETURN_IF_ERROR(FsyncPath(parent.string()));
  Publication published;
  published.path = output_file_;
  return published;
}

}  // namespace roost
