// DataDirDestination: `roost-load build --data-dir DIR --table T`, a
// Destination (destination.h) that is the next version of T in a data
// directory, DIR/T/v<N>/, through the staging directory and rename of
// Publisher (publish.h): the files fsynced, the MANIFEST written last, the
// directory made read-only and renamed to the next free version number.
//
// With max_shrink (--max-shrink), Publish first refuses a version with
// fewer keys than the newest complete one's by more than that share. A
// version whose schema of rows may not follow the newest complete one's is
// refused (schema_change.h) unless allow_schema_change
// (--allow-schema-change).
//
// Thread-safety: none (destination.h). Other loaders may publish into the
// same table at once: each takes the next free number.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto destination,
//                          DataDirDestination::Stage("/srv/roost", "users"));
//   ... write destination->staging_dir() + "/table.sst", verify it ...
//   ROOST_ASSIGN_OR_RETURN(Publication p, destination->Publish(manifest));
//   // p.path == "/srv/roost/users/v000004", p.version == 4
#ifndef ROOST_LOADER_DATA_DIR_DESTINATION_H_
#define ROOST_LOADER_DATA_DIR_DESTINATION_H_

#include <memory>
#include <optional>
#include <string>

#include "loader/destination.h"
#include "loader/publish.h"

namespace roost {

class DataDirDestination final : public Destination {
 public:
  // Publisher::Start: DIR/T made if needed (and removed again if nothing
  // is published into it), the staging directory made inside it.
  // `max_shrink` is a share in [0, 1]; the default value is std::nullopt
  // (no check). `allow_schema_change`: the default value is false.
  static absl::StatusOr<std::unique_ptr<DataDirDestination>> Stage(
      const std::string& data_dir, const std::string& table,
      std::optional<double> max_shrink = std::nullopt,
      bool allow_schema_change = false);

  const std::string& staging_dir() const override {
    return publisher_->staging_dir();
  }
  // Checks max_shrink and the schema against the newest complete
  // version, then writes
  // `manifest` with the version number taken and renames the staging
  // directory to it.
  absl::StatusOr<Publication> Publish(Manifest manifest) override;

 private:
  DataDirDestination(std::unique_ptr<Publisher> publisher, std::string table,
                     std::optional<double> max_shrink, bool allow_schema_change)
      : publisher_(std::move(publisher)),
        table_(std::move(table)),
        max_shrink_(max_shrink),
        allow_schema_change_(allow_schema_change) {}

  // Its destructor cleans up what was not published.
  std::unique_ptr<Publisher> publisher_;
  std::string table_;
  std::optional<double> max_shrink_;
  bool allow_schema_change_;
};

}  // namespace roost

#endif  // ROOST_LOADER_DATA_DIR_DESTINATION_H_
