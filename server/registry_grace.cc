// TableRegistry's grace period: after a swap the version replaced stays
// mapped and answers the requests that name it (lookup.proto, "Versions")
// for --version-grace, so that a client reading one batch from many shards
// during a rollout can ask each for the same version. It is held in the
// table entry's second VersionSlots (`previous`), which request handlers
// read without a lock as they read the serving one; the registry's thread
// is its only writer, as for `slots`. Only a step forward is held: a
// rollback (by admin, or a version older than the one replaced) lets go of
// the version rolled back from, and a held version whose file a writer
// opens is let go of at once (and rechecked before it is served again),
// as a served one is dropped. Every method runs on the registry thread.
#include "server/log.h"
#include "server/table_registry.h"
#include "storage/version/data_dir.h"

namespace roost {

TableRegistry::Held TableRegistry::HoldPrevious(TableState* state,
                                                const ServingVersion& replacing,
                                                bool hold) {
  Held before{state->previous, state->versions.held()};
  const auto& old = state->serving;
  const bool unmodified = old && (!old->lease || old->lease->Held());
  const bool keep =
      state->versions.HoldsOnSwap(replacing.version, hold, unmodified);
  // Published before the new version, so that a request naming the old
  // one finds it in one of the two slots at every instant.
  if (keep && state->entry->previous.Publish(old)) {
    std::lock_guard lock(mu_);
    state->previous = old;
    state->versions.Hold(std::chrono::steady_clock::now());
    return before;
  }
  ReleasePrevious(state);
  return before;
}

void TableRegistry::RestorePrevious(TableState* state, Held before) {
  if (before.version && state->entry->previous.Publish(before.version)) {
    std::lock_guard lock(mu_);
    state->previous = std::move(before.version);
    state->versions.Restore(before.held);
    return;
  }
  ReleasePrevious(state);
}

void TableRegistry::ReleasePrevious(TableState* state) {
  state->entry->previous.Clear();
  std::lock_guard lock(mu_);
  state->previous.reset();
  state->versions.Release();
}

void TableRegistry::ExpirePrevious() {
  const auto now = std::chrono::steady_clock::now();
  for (auto& [name, state] : states_) {
    if (state.previous && state.versions.Expired(now) != 0) {
      Log("no longer answering ", name, " ", state.previous->version_name,
          " (--version-grace ended)");
      ReleasePrevious(&state);
    }
  }
}

}  // namespace roost
