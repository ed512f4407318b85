// TableRegistry with --repository: the POINTERs the RepositoryPuller reads
// decide which version each table serves (TableVersions::Next), which it
// keeps on disk (PruneVersions) and when the server is ready (CheckReady);
// a copy on disk the puller found not to be the repository's stops serving
// (DropStaleCopies). The registry loop is table_registry.cc.
#include "server/log.h"
#include "server/table_registry.h"
#include "storage/version/data_dir.h"
#include "util/str_cat.h"

namespace roost {

void TableRegistry::SetPointers(
    std::map<std::string, RepositoryPointer> pointers) {
  {
    std::lock_guard lock(mu_);
    incoming_pointers_ = std::move(pointers);
  }
  // Wakes the registry's thread into a Scan(), which takes them.
  if (watcher_) watcher_->Wake();
}

std::optional<RepositoryPointer> TableRegistry::PointerFor(
    const std::string& table) const {
  if (!pointers_) return std::nullopt;
  auto it = pointers_->find(table);
  if (it == pointers_->end()) return std::nullopt;
  return it->second;
}

void TableRegistry::DropStaleCopies() {
  for (auto& [name, state] : states_) {
    if (state.versions.pointer() == nullptr) continue;
    state.versions.NoteFromRepository();
    const uint64_t stale = state.versions.StaleCopy();
    if (stale == 0) continue;
    const std::string name_version = StrCat(name, " ", VersionDirName(stale));
    if (state.previous && state.previous->version == stale) {
      Log("no longer answering ", name_version,
          ": its copy on disk is not the repository's");
      ReleasePrevious(&state);
    }
    if (state.waiting && state.waiting->version == stale) {
      state.waiting.reset();
    }
    if (state.serving && state.serving->version == stale) {
      // Serving it on would answer old data under the name of the
      // repository's version (beside other shards that serve the new one).
      StopServing(&state, StrCat("its copy on disk is not the repository's ",
                                 VersionDirName(stale),
                                 "; it serves again once that is pulled"));
    }
  }
}

bool TableRegistry::PointersServed() {
  std::string waiting;
  if (!pointers_) {
    waiting = "the first reading of the repository's POINTERs";
  } else {
    for (const auto& [table, p] : *pointers_) {
      auto it = states_.find(table);
      if (it != states_.end() && it->second.versions.ServesPointer()) {
        continue;
      }
      waiting += StrCat(waiting.empty() ? "" : ", ", table, " ",
                        VersionDirName(p.version));
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
