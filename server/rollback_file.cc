#include "server/rollback_file.h"

#include "util/file.h"
#include "util/json.h"
#include "util/str_cat.h"

namespace roost {

RollbackState ReadRollbackFile(const std::string& table_dir,
                               std::string* problem) {
  problem->clear();
  const std::string path = StrCat(table_dir, "/", kRollbackFileName);
  auto text = ReadRegularFile(path, kMaxRollbackFileSize,
                              /*follow_symlinks=*/false);
  if (!text.ok()) {
    if (text.status().code() != absl::StatusCode::kNotFound) {
      *problem = std::string(text.status().message());
    }
    return {};
  }
  auto json = ParseJson(*text);
  if (!json.ok() || !json->is_object()) {
    *problem = StrCat(
        path, ": ", json.ok() ? "not a JSON object" : json.status().message());
    return {};
  }
  RollbackState state;
  state.pinned = JsonUint64(*json, "pinned");
  if (auto it = json->find("rolled_back");
      it != json->end() && it->is_array()) {
    for (const Json& v : *it) {
      if (v.is_number_unsigned()) state.rolled_back.insert(v.get<uint64_t>());
    }
  }
  return state;
}

absl::Status WriteRollbackFile(const std::string& table_dir,
                               const RollbackState& state) {
  OrderedJson json;
  json["pinned"] = state.pinned ? OrderedJson(*state.pinned) : OrderedJson();
  json["rolled_back"] = state.rolled_back;
  return WriteFileAtomically(StrCat(table_dir, "/", kRollbackFileName),
                             DumpJson(json) + "\n");
}

}  // namespace roost
