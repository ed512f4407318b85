// The ROLLBACK file of a table directory: which version a rollback pinned,
// and which versions were rolled back from, so that both survive a restart.
//
//   DATA_DIR/<table>/ROLLBACK   {"pinned": 3, "rolled_back": [4]}
//
// Read without following a symbolic link, and only as a regular file of at
// most kMaxRollbackFileSize bytes; written by WriteFileAtomically
// (util/file.h: a fresh temporary file, so a planted link is never
// followed, fsynced and renamed over ROLLBACK, then the directory fsynced),
// so a reader sees the old state or the new one, and a crash loses neither.
//
// Example:
//   RollbackState state = ReadRollbackFile(dir, &problem);
//   state.pinned = 3;
//   ROOST_RETURN_IF_ERROR(WriteRollbackFile(dir, state));
#ifndef ROOST_SERVER_ROLLBACK_FILE_H_
#define ROOST_SERVER_ROLLBACK_FILE_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"

namespace roost {

inline constexpr char kRollbackFileName[] = "ROLLBACK";
inline constexpr uint64_t kMaxRollbackFileSize = 1 << 20;

struct RollbackState {
  std::optional<uint64_t> pinned;
  std::set<uint64_t> rolled_back;
};

// The state in `table_dir`/ROLLBACK; the empty state when there is none.
// When the file is there but unusable (not a regular file, too large, not
// the JSON above), returns the empty state and sets *problem to why.
RollbackState ReadRollbackFile(const std::string& table_dir,
                               std::string* problem);

absl::Status WriteRollbackFile(const std::string& table_dir,
                               const RollbackState& state);

}  // namespace roost

#endif  // ROOST_SERVER_ROLLBACK_FILE_H_
