// TableIndex: table names to entries, for request handlers that take no lock
// and one writer (the registry's thread) that adds and removes tables.
//
// An open-addressing hash table of fixed capacity (a power of two, at least
// twice max_tables), probed linearly. The writer adds a table by storing a
// pointer to its entry into a free slot, so nothing is copied on add, and
// removes one by leaving a tombstone; when tables and tombstones fill three
// quarters of the slots it builds a fresh array without the tombstones.
// Removed entries and replaced arrays are freed only once no reader can hold
// them: a reader counts itself into the current generation (VersionSlots)
// for as long as it uses what it found, and the writer starts a new
// generation after each change, so that whatever was retired during a
// generation is freed with it, once its last reader and every older
// generation are gone (a reader of an older generation may hold an old
// array, which holds entries removed since).
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

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/version_slots.h"

namespace roost {

// REQUIRES: Entry has a member `const std::string name`.
template <typename Entry>
class TableIndex {
  struct Array {
    explicit Array(size_t n)
        : mask(n - 1), slots(new std::atomic<Entry*>[n]()) {}
    size_t mask;
    std::unique_ptr<std::atomic<Entry*>[]> slots;
  };
  // What is freed when a generation's last reader is gone, and every older
  // generation is gone too: a reader of an older one may still hold an
  // array retired since, and that array the entries removed since.
  struct Generation {
    std::vector<std::unique_ptr<Entry>> entries;
    std::vector<std::unique_ptr<Array>> arrays;
    std::shared_ptr<Generation> next;  // kept alive by this one
  };
  using Slots = VersionSlots<Generation>;

 public:
  // A reader's hold on the index: what Find() returns stays valid while it
  // lives.
  class Reader {
   public:
    Entry* Find(std::string_view name) const {
      return index_->FindIn(*index_->array_.load(), name);
    }

   private:
    friend class TableIndex;
    Reader(const TableIndex* index, typename Slots::Pin pin)
        : index_(index), pin_(std::move(pin)) {}
    const TableIndex* index_;
    typename Slots::Pin pin_;
  };

  explicit TableIndex(size_t max_tables)
      : max_tables_(max_tables),
        capacity_(std::bit_ceil(std::max<size_t>(16, 2 * max_tables))) {
    array_.store(new Array(capacity_));
    StartGeneration();
  }
  ~TableIndex() {
    delete array_.load();
    // Generations (and their retired objects) go with slots_.
  }
  TableIndex(const TableIndex&) = delete;
  TableIndex& operator=(const TableIndex&) = delete;

  // Any thread.
  Reader Read() const {
    for (;;) {
      if (auto pin = slots_.Acquire()) return Reader(this, std::move(pin));
    }
  }

  // Writer only: the entry named `name`, or null.
  Entry* Find(std::string_view name) const {
    auto it = owned_.find(std::string(name));
    return it == owned_.end() ? nullptr : it->second.get();
  }
  size_t size() const { return owned_.size(); }
  size_t max_tables() const { return max_tables_; }

  // Writer only. Adds `entry`, whose name must not be in the index; false
  // (dropping nothing: the entry is handed back) when max_tables are in it.
  bool Add(std::unique_ptr<Entry>& entry) {
    if (owned_.size() >= max_tables_) return false;
    Entry* e = entry.get();
    owned_.emplace(e->name, std::move(entry));
    Array* array = array_.load();
    for (size_t i = Hash(e->name) & array->mask;; i = (i + 1) & array->mask) {
      Entry* current = array->slots[i].load();
      if (current == nullptr || current == Tombstone()) {
        if (current == nullptr) ++used_;
        array->slots[i].store(e);
        break;
      }
    }
    MaybeRebuild();
    return true;
  }

  // Writer only. Removes the entry named `name`, if any: readers from now
  // on do not find it. It stays alive at least until the writer's next
  // Reclaim(), which frees it once no reader can hold it, so that the writer
  // may still wind it down after it is out of reach.
  void Remove(std::string_view name) {
    auto it = owned_.find(std::string(name));
    if (it == owned_.end()) return;
    Array* array = array_.load();
    for (size_t i = Hash(name) & array->mask;; i = (i + 1) & array->mask) {
      if (array->slots[i].load() == it->second.get()) {
        array->slots[i].store(Tombstone());
        break;
      }
    }
    current_->entries.push_back(std::move(it->second));
    owned_.erase(it);
    MaybeRebuild();
    dirty_ = true;
  }

  // Writer only. Starts a new generation if anything was retired in this
  // one, and frees the old generations no reader holds. Returns how many
  // still have readers (call again later).
  int Reclaim() {
    if (dirty_) StartGeneration();
    return slots_.Reclaim();
  }

 private:
  static Entry* Tombstone() {
    static char marker;
    return reinterpret_cast<Entry*>(&marker);
  }
  static size_t Hash(std::string_view name) {
    return std::hash<std::string_view>()(name);
  }

  Entry* FindIn(const Array& array, std::string_view name) const {
    for (size_t i = Hash(name) & array.mask, n = 0; n <= array.mask;
         i = (i + 1) & array.mask, ++n) {
      Entry* e = array.slots[i].load();
      if (e == nullptr) return nullptr;
      if (e != Tombstone() && e->name == name) return e;
    }
    return nullptr;
  }

  // A fresh array without tombstones once they and the tables fill three
  // quarters of the slots.
  void MaybeRebuild() {
    if (used_ * 4 <= capacity_ * 3) return;
    auto fresh = std::make_unique<Array>(capacity_);
    for (const auto& [name, entry] : owned_) {
      for (size_t i = Hash(name) & fresh->mask;; i = (i + 1) & fresh->mask) {
        if (fresh->slots[i].load() == nullptr) {
          fresh->slots[i].store(entry.get());
          break;
        }
      }
    }
    used_ = owned_.size();
    current_->arrays.emplace_back(array_.exchange(fresh.release()));
    dirty_ = true;
  }

  // Makes a new generation current, unless every other slot still has
  // readers (then the retired objects wait in this one; see Reclaim()).
  void StartGeneration() {
    auto next = std::make_shared<Generation>();
    if (!slots_.Publish(next)) return;
    if (current_) current_->next = next;
    current_ = std::move(next);
    dirty_ = false;
  }

  const size_t max_tables_;
  const size_t capacity_;
  std::atomic<Array*> array_{nullptr};
  Slots slots_;
  // Writer's state.
  std::shared_ptr<Generation> current_;
  bool dirty_ = false;
  size_t used_ = 0;  // slots holding an entry or a tombstone
  std::unordered_map<std::string, std::unique_ptr<Entry>> owned_;
};

}  // namespace roost

#endif  // ROOST_SERVER_TABLE_INDEX_H_
