// TableIndex: table names to entries, for request handlers that take no lock
// and one writer (the registry's thread) that adds and removes tables.
//
// Copy on write: every change publishes a new generation, a fresh
// absl::flat_hash_map of the names to their entries, through VersionSlots;
// a reader pins the current generation and finds the name in its map, which
// no one writes once it is published. A change copies the map (at most
// max_tables pointers; tables come and go seldom), never the entries. A
// removed entry is freed only once no reader can hold it: it is retired into
// the generation current when it was removed (the last whose map holds it),
// and a generation is freed once its last reader and every older generation
// are gone (an older one keeps it alive, since a reader of an older
// generation may have found the entry too).
//
// Thread-safety: Read() and Reader::Find() from any thread, without a lock
// or an allocation; everything else on the writer's thread only.
//
// Example:
//   TableIndex<TableEntry> index(/*max_tables=*/1024);
//   index.Add(std::make_unique<TableEntry>("users"));   // writer
//   TableIndex<TableEntry>::Reader reader = index.Read();   // any thread
//   if (TableEntry* t = reader.Find("users")) Use(*t);  // while reader lives
//   index.Remove("users");                               // writer
//   index.Reclaim();                        // writer: frees it when unread
#ifndef ROOST_SERVER_TABLE_INDEX_H_
#define ROOST_SERVER_TABLE_INDEX_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "server/version_slots.h"

namespace roost {

// REQUIRES: Entry has a member `const std::string name`.
template <typename Entry>
class TableIndex {
  // One published state of the index. Destroyed from the bottom up: the
  // newer generations (and the entries retired into them) before the map.
  struct Generation {
    // Keys view the entries' own names, which outlive the map: an entry
    // removed is retired into this generation or a newer one.
    absl::flat_hash_map<std::string_view, Entry*> tables;
    // Entries removed while this generation was current.
    std::vector<std::unique_ptr<Entry>> retired;
    std::shared_ptr<const Generation> next;  // kept alive by this one
  };
  using Slots = VersionSlots<Generation>;

 public:
  // A reader's hold on the index: what Find() returns stays valid while it
  // lives.
  class Reader {
   public:
    Entry* Find(std::string_view name) const {
      auto it = pin_->tables.find(name);
      return it == pin_->tables.end() ? nullptr : it->second;
    }

   private:
    friend class TableIndex;
    explicit Reader(typename Slots::Pin pin) : pin_(std::move(pin)) {}
    typename Slots::Pin pin_;
  };

  explicit TableIndex(size_t max_tables) : max_tables_(max_tables) {
    Publish();
  }
  TableIndex(const TableIndex&) = delete;
  TableIndex& operator=(const TableIndex&) = delete;

  // Any thread.
  Reader Read() const { return Reader(slots_.Acquire()); }

  // Writer only: the entry named `name`, or null.
  Entry* Find(std::string_view name) const {
    auto it = owned_.find(std::string(name));
    return it == owned_.end() ? nullptr : it->second.get();
  }
  size_t size() const { return owned_.size(); }
  size_t max_tables() const { return max_tables_; }

  // Writer only. Adds `entry`, whose name must not be in the index; false
  // (dropping nothing: the entry is handed back) when max_tables are in it.
  // Readers find it from when Add returns.
  bool Add(std::unique_ptr<Entry>& entry) {
    if (owned_.size() >= max_tables_) return false;
    Entry* e = entry.get();
    owned_.emplace(e->name, std::move(entry));
    Publish();
    return true;
  }

  // Writer only. Removes the entry named `name`, if any: readers from now
  // on do not find it. It stays alive at least until the writer's next
  // Reclaim(), which frees it once no reader can hold it, so that the writer
  // may still wind it down after it is out of reach.
  void Remove(std::string_view name) {
    auto it = owned_.find(std::string(name));
    if (it == owned_.end()) return;
    current_->retired.push_back(std::move(it->second));
    owned_.erase(it);
    // Until Reclaim(): the next Publish() may reuse this generation's slot.
    held_.push_back(current_);
    Publish();
  }

  // Writer only. Frees the old generations no reader holds (and the entries
  // retired into them). Returns how many still have readers (call again
  // later).
  int Reclaim() {
    held_.clear();
    return slots_.Reclaim();
  }

 private:
  // Makes a generation of the entries owned now current. A slot is free as
  // soon as the readers of an older generation are done with one request,
  // so the writer waits for one rather than leave readers a stale map.
  void Publish() {
    auto next = std::make_shared<Generation>();
    next->tables.reserve(owned_.size());
    for (const auto& owned : owned_) {
      Entry* e = owned.second.get();
      next->tables.emplace(e->name, e);
    }
    while (!slots_.Publish(next)) std::this_thread::yield();
    if (current_) current_->next = next;
    current_ = std::move(next);
  }

  const size_t max_tables_;
  Slots slots_;
  // Writer's state.
  std::shared_ptr<Generation> current_;
  std::vector<std::shared_ptr<Generation>> held_;  // until Reclaim()
  std::unordered_map<std::string, std::unique_ptr<Entry>> owned_;
};

}  // namespace roost

#endif  // ROOST_SERVER_TABLE_INDEX_H_
