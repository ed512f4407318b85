// TableRegistry's admin side: rollback pins and their ROLLBACK file, the
// Rollback and Unpin commands (queued for the registry's thread), and the
// table listing. The registry loop is table_registry.cc.

#include "server/log.h"
#include "server/rollback_file.h"
#include "server/table_registry.h"
#include "storage/version/data_dir.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {
void TableRegistry::LoadRollbackState(TableState* state) {
  std::string problem;
  RollbackState rollback = ReadRollbackFile(state->dir, &problem);
  if (!problem.empty())
    Log("ignoring ROLLBACK of ", state->entry->name, ": ", problem);
  std::lock_guard lock(mu_);
  state->versions.SetRollbackState(std::move(rollback));
}

absl::Status TableRegistry::SaveRollbackState(const TableState& state) {
  return WriteRollbackFile(state.dir, state.versions.rollback_state());
}

void TableRegistry::Rollback(std::string table, std::string version,
                             RollbackDone done) {
  {
    std::lock_guard lock(commands_mu_);
    commands_.push_back([this, table = std::move(table),
                         version = std::move(version),
                         done = std::move(done)]() mutable {
      DoRollback(table, version, std::move(done));
    });
  }
  watcher_->Wake();
}

void TableRegistry::Unpin(std::string table, UnpinDone done) {
  {
    std::lock_guard lock(commands_mu_);
    commands_.push_back(
        [this, table = std::move(table), done = std::move(done)]() mutable {
          DoUnpin(table, std::move(done));
        });
  }
  watcher_->Wake();
}

void TableRegistry::RunCommands() {
  for (;;) {
    std::function<void()> command;
    {
      std::lock_guard lock(commands_mu_);
      if (commands_.empty()) return;
      command = std::move(commands_.front());
      commands_.pop_front();
    }
    command();
  }
}

void TableRegistry::DoRollback(const std::string& table,
                               const std::string& version_text,
                               RollbackDone done) {
  TableState* state = Present(table);
  if (state == nullptr) {
    return done(
        absl::NotFoundError(StrCat("no table ", PrintableKey(table, 128))));
  }
  ScanTable(state);  // the versions on disk now
  absl::StatusOr<uint64_t> rollback_to =
      state->versions.RollbackTarget(version_text);
  if (!rollback_to.ok()) return done(rollback_to.status());
  const uint64_t target = *rollback_to;
  const uint64_t current = state->versions.serving_version();
  // Pins `target`, now served, and marks what was served before it.
  auto pin = [this, table, target](TableState* s, uint64_t previous,
                                   RollbackDone& done) {
    {
      std::lock_guard lock(mu_);
      s->versions.Pin(target, previous);
    }
    Log("rolled ", table, " back to ", VersionDirName(target), " from ",
        VersionDirName(previous), "; pinned");
    if (absl::Status st = SaveRollbackState(*s); !st.ok()) {
      return done(absl::InternalError(
          StrCat("serving ", VersionDirName(target),
                 ", but the pin will not survive a restart: ", st.message())));
    }
    done(std::make_pair(VersionDirName(target), VersionDirName(previous)));
  };
  if (target == current) return pin(state, current, done);
  state->versions.Retry(target);  // asked for by name: try it again
  StartLoad(
      state, target,
      [this, table, id = state->id, target, pin,
       done = std::move(done)](Loaded& loaded) mutable {
        TableState* s = Present(table);
        if (s == nullptr || s->id != id) {
          return done(
              absl::NotFoundError(StrCat("table \"", table, "\" was removed")));
        }
        const auto& v = loaded.outcome.version;
        if (!v.ok()) {
          return done(absl::FailedPreconditionError(
              StrCat("cannot load ", table, " ", VersionDirName(target), ": ",
                     v.status().message())));
        }
        const uint64_t previous = s->serving ? s->serving->version : 0;
        // The version rolled back from is not answered again.
        switch (
            Serve(s, *v, /*hold_previous=*/false, /*withdrawing=*/previous)) {
          case ServeResult::kServed:
            return pin(s, previous, done);
          case ServeResult::kBusy:
            return done(absl::UnavailableError(
                "older versions are still in use by requests; try "
                "again"));
          case ServeResult::kStale:
            return done(absl::UnavailableError(StrCat(
                VersionDirName(target), " is being written to; try again")));
        }
      });
}

void TableRegistry::DoUnpin(const std::string& table, UnpinDone done) {
  TableState* state = Present(table);
  if (state == nullptr) {
    return done(
        absl::NotFoundError(StrCat("no table ", PrintableKey(table, 128))));
  }
  {
    std::lock_guard lock(mu_);
    state->versions.Unpin();
  }
  if (absl::Status s = SaveRollbackState(*state); !s.ok()) return done(s);
  Log("unpinned ", table);
  ScanTable(state);
  const uint64_t target = state->versions.Next();
  if (target == 0) {
    return done(state->serving ? state->serving->version_name : std::string());
  }
  // Answers once the version to serve now has loaded (or failed to).
  StartLoad(state, target,
            [this, table, id = state->id,
             done = std::move(done)](Loaded& loaded) mutable {
              TableState* s = Present(table);
              if (s == nullptr || s->id != id) {
                return done(absl::NotFoundError(
                    StrCat("table \"", table, "\" was removed")));
              }
              const auto& v = loaded.outcome.version;
              if (v.ok() && s->versions.Next() == loaded.version &&
                  Serve(s, *v) == ServeResult::kBusy) {
                s->waiting = *v;
              }
              done(s->serving ? s->serving->version_name : std::string());
            });
}

std::vector<TableStatus> TableRegistry::List() const {
  std::lock_guard lock(mu_);
  std::vector<TableStatus> out;
  for (const auto& [name, state] : states_) {
    TableStatus t;
    t.name = name;
    if (const auto& v = state.serving) {
      t.format = std::string(TableFormatName(v->table().format()));
      t.serving_version = v->version_name;
      if (const uint64_t w = v->withdrawn_through.load()) {
        t.withdrawn_through = VersionDirName(w);
      }
      t.keys = v->table().num_keys();
      t.file_size = v->file_size;
      t.max_key_length = v->max_key_length;
      t.key_width = v->key_width;
      if (const auto& schema = v->opened.manifest.schema) {
        t.schema_json = DumpJson(schema->ToJson(), false);
      }
      if (v->opened.shard) {
        t.shard = *v->opened.shard;
        t.shard_count = v->opened.manifest.shards;
      }
    }
    if (state.previous) t.previous_version = state.previous->version_name;
    for (uint64_t v : state.versions.on_disk()) {
      t.versions_on_disk.push_back(VersionDirName(v));
    }
    t.pinned = state.versions.pinned().has_value();
    for (uint64_t v : state.versions.rolled_back()) {
      t.rolled_back.push_back(VersionDirName(v));
    }
    if (const uint64_t pointer = state.versions.pointer_version()) {
      t.repository_version = VersionDirName(pointer);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace roost
