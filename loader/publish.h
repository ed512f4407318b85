// Publishing table versions into a data directory:
//
//   DATA_DIR/<table>/v000001/{table.sst, MANIFEST}
//   DATA_DIR/<table>/v000002/...
//   DATA_DIR/<table>/.staging-<pid>-XXXXXX/   (a build in progress)
//
// A build fills a staging directory beside the versions, fsyncs every file
// and the directory, writes the MANIFEST last, and renames the directory to
// the next version number, never replacing an existing one. Readers see a
// version whole or not at all; a build that dies leaves only its staging
// directory, which the next Start() removes once its process is gone.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto publisher, Publisher::Start(dir, "users"));
//   ... write publisher->staging_dir() + "/table.sst" ...
//   ROOST_ASSIGN_OR_RETURN(PublishedVersion v, publisher->Publish(
//       [&](uint64_t version) { return WriteManifest(..., version); }));
#ifndef ROOST_LOADER_PUBLISH_H_
#define ROOST_LOADER_PUBLISH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/version/data_dir.h"
#include "util/file.h"

namespace roost {

struct PublishedVersion {
  uint64_t version;
  std::string path;
};

class Publisher {
 public:
  // Creates DATA_DIR/<table> if needed, removes staging directories of dead
  // loaders, and makes a fresh staging directory. A table directory it
  // created goes again with the staging directory if nothing is published
  // (and it is still empty), so that a failed first build leaves nothing.
  static absl::StatusOr<std::unique_ptr<Publisher>> Start(
      const std::string& data_dir, const std::string& table);
  // Removes the staging directory unless it was published.
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  const std::string& staging_dir() const { return staging_; }
  const std::string& table_dir() const { return table_dir_; }

  // Fsyncs the files in the staging directory, calls `write_manifest` with
  // the version number to publish as (it writes the MANIFEST into the
  // staging directory), fsyncs again, and renames the staging directory to
  // that version. If another loader takes the number first, the MANIFEST is
  // written again with the next one.
  absl::StatusOr<PublishedVersion> Publish(
      const std::function<absl::Status(uint64_t version)>& write_manifest);

 private:
  Publisher(std::string table_dir, std::string staging, bool created)
      : table_dir_(std::move(table_dir)),
        staging_(std::move(staging)),
        created_table_dir_(created) {}

  std::string table_dir_;
  std::string staging_;
  bool created_table_dir_;
  bool published_ = false;
};

}  // namespace roost

#endif  // ROOST_LOADER_PUBLISH_H_
