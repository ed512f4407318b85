#include "server/rollback_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
  const std::string text = DumpJson(json) + "\n";
  // mkostemp creates the file with O_CREAT | O_EXCL: it never opens what
  // someone planted under the name, link or not.
  std::string tmp = StrCat(table_dir, "/.", kRollbackFileName, ".tmp-XXXXXX");
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        StrCat("cannot create ", tmp, ": ", std::strerror(errno)));
  }
  const bool written = ::fchmod(fd, 0644) == 0 &&
                       ::write(fd, text.data(), text.size()) ==
                           static_cast<ssize_t>(text.size()) &&
                       ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  const std::string path = StrCat(table_dir, "/", kRollbackFileName);
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = written ? errno : err;
    ::unlink(tmp.c_str());
    return absl::InternalError(
        StrCat("cannot write ", path, ": ", std::strerror(e)));
  }
  return absl::OkStatus();
}

}  // namespace roost
