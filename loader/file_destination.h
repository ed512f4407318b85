// FileDestination: `roost-load build --output FILE`, a Destination
// (destination.h) that is one table file and nothing else: no version, no
// MANIFEST (Publish reads nothing of it but that there is one file).
//
// The file is written in a private directory beside FILE
// (FILE.tmp-<pid>-XXXXXX: mode 0700, a fresh name, where no one can have
// planted a link or a file), fsynced, and renamed over FILE, whose
// directory is fsynced then: a reader of FILE sees the old table or the
// new one, whole. The private directory goes when the FileDestination
// does, and, if the process is killed, with the next build's Stage.
//
// Thread-safety: none (destination.h).
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto destination,
//                          FileDestination::Stage("users.sst"));
//   ... write destination->staging_dir() + "/table.sst", verify it ...
//   ROOST_ASSIGN_OR_RETURN(Publication p, destination->Publish(manifest));
#ifndef ROOST_LOADER_FILE_DESTINATION_H_
#define ROOST_LOADER_FILE_DESTINATION_H_

#include <memory>
#include <string>

#include "loader/destination.h"

namespace roost {

class FileDestination final : public Destination {
 public:
  // Makes the private directory beside `output_file`.
  static absl::StatusOr<std::unique_ptr<FileDestination>> Stage(
      std::string output_file);
  ~FileDestination() override;

  const std::string& staging_dir() const override { return staging_; }
  // Renames staging_dir()/table.sst over the output file. REQUIRES:
  // `manifest` names that one file (an unsharded build).
  absl::StatusOr<Publication> Publish(Manifest manifest) override;

 private:
  FileDestination(std::string output_file, std::string staging)
      : output_file_(std::move(output_file)), staging_(std::move(staging)) {}

  std::string output_file_;
  std::string staging_;
};

}  // namespace roost

#endif  // ROOST_LOADER_FILE_DESTINATION_H_
