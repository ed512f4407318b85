// TableRegistry with --repository: the POINTERs the RepositoryPuller reads
// decide which version each table serves (Target), which it keeps on disk
// (PruneVersions) and when the server is ready (CheckReady). The registry
// loop is table_registry.cc.
#include "server/log.h"
#include "server/table_registry.h"
#include "storage/data_dir.h"
#include "util/str_cat.h"

namespace roost {

void TableRegistry::SetPointers(std::map<std::string, uint64_t> pointers) {
  {
    std::lock_guard lock(mu_);
    incoming_pointers_ = std::move(pointers);
  }
  // Wakes the registry's thread into a Scan(), which takes them.
  if (watcher_) watcher_->Wake();
}

uint64_t TableRegistry::PointerOf(const TableState& state) const {
  if (!pointers_) return 0;
  auto it = pointers_->find(state.entry->name);
  return it == pointers_->end() ? 0 : it->second;
}

bool TableRegistry::PointersServed() {
  std::string waiting;
  if (!pointers_) {
    waiting = "the first reading of the repository's POINTERs";
  } else {
    for (const auto& [table, version] : *pointers_) {
      auto it = states_.find(table);
      if (it != states_.end() && it->second.serving &&
          it->second.serving->version == version) {
        continue;
      }
      waiting += StrCat(waiting.empty() ? "" : ", ", table, " ",
                        VersionDirName(version));
    }
  }
  if (waiting.empty()) return true;
  if (waiting != pointers_waiting_logged_) {
    Log("not ready: waiting for ", waiting,
        " (--repository; health stays NOT_SERVING)");
    pointers_waiting_logged_ = waiting;
  }
  return false;
}

}  // namespace roost
