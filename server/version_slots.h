// VersionSlots: hands a table's serving version to request handlers without
// a lock, and tells the one writer when an old version has no readers left.
//
// Readers Acquire() a Pin, use the version, and drop the Pin. The writer
// (the registry's thread, the only one) Publish()es a new version and later
// Reclaim()s the old ones whose last Pin is gone, which frees them (for a
// table: unmaps it). std::atomic<std::shared_ptr> would do the hand-over too,
// but libstdc++ implements it with a spin lock, and every reader would bump
// the one shared reference count.
//
// How: a few slots, each with its own reference count, and the index of the
// current one. A reader counts itself into the current slot, then checks the
// slot is still current; if it is not, it counts itself out and tries again,
// never having touched the version. The writer fills a slot only when it is
// not current and no reader is counted in it, then makes it current. With
// sequentially consistent operations on both sides, a writer that reads a
// count of zero after switching the index knows any later reader of that
// slot will see the new index and back off.
//
// Example:
//   VersionSlots<Table> slots;
//   slots.Publish(std::make_shared<const Table>(...));   // writer
//   if (auto pin = slots.Acquire()) Use(*pin);            // any thread
//   slots.Reclaim();                                      // writer, later
#ifndef ROOST_SERVER_VERSION_SLOTS_H_
#define ROOST_SERVER_VERSION_SLOTS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

namespace roost {

template <typename T>
class VersionSlots {
  struct alignas(64) Slot {
    std::atomic<int64_t> readers{0};
    std::shared_ptr<const T> version;  // written by the writer only
  };

 public:
  // A reader's hold on one version; it stays mapped while the Pin lives.
  class Pin {
   public:
    Pin() = default;
    Pin(Pin&& other) noexcept : slot_(other.slot_) { other.slot_ = nullptr; }
    Pin& operator=(Pin&& other) noexcept {
      Release();
      slot_ = other.slot_;
      other.slot_ = nullptr;
      return *this;
    }
    ~Pin() { Release(); }

    explicit operator bool() const { return slot_ != nullptr; }
    const T& operator*() const { return *slot_->version; }
    const T* operator->() const { return slot_->version.get(); }
    // A reference of its own to the version, for a reader that holds it
    // long (a stream): it outlives the Pin, the slot and the VersionSlots.
    std::shared_ptr<const T> Share() const { return slot_->version; }

   private:
    friend class VersionSlots;
    explicit Pin(Slot* slot) : slot_(slot) {}
    void Release() {
      if (slot_ != nullptr) slot_->readers.fetch_sub(1);
      slot_ = nullptr;
    }
    Slot* slot_ = nullptr;
  };

  // Any thread. An empty Pin when nothing is published.
  Pin Acquire() const {
    for (;;) {
      const int index = current_.load();
      if (index < 0) return Pin();
      Slot& slot = slots_[index];
      slot.readers.fetch_add(1);
      if (current_.load() == index) return Pin(&slot);
      slot.readers.fetch_sub(1);
    }
  }

  // Writer only. Makes `version` current; the previous one stays alive
  // until Reclaim() finds it unread. False when every other slot still has
  // readers (try again after a Reclaim()).
  bool Publish(std::shared_ptr<const T> version) {
    const int current = current_.load();
    for (int i = 0; i < kSlots; ++i) {
      if (i == current || slots_[i].readers.load() != 0) continue;
      slots_[i].version = std::move(version);
      current_.store(i);
      return true;
    }
    return false;
  }

  // Writer only. Stops serving: Acquire() returns empty Pins from now on.
  void Clear() { current_.store(-1); }

  // Writer only. The current version, or null.
  const std::shared_ptr<const T>& current() const {
    static const std::shared_ptr<const T> kNone;
    const int index = current_.load();
    return index < 0 ? kNone : slots_[index].version;
  }

  // Writer only. Frees every version that is not current and has no
  // readers; returns how many remain waiting for readers.
  int Reclaim() {
    const int current = current_.load();
    int waiting = 0;
    for (int i = 0; i < kSlots; ++i) {
      Slot& slot = slots_[i];
      if (i == current || slot.version == nullptr) continue;
      if (slot.readers.load() == 0) {
        slot.version.reset();
      } else {
        ++waiting;
      }
    }
    return waiting;
  }

 private:
  static constexpr int kSlots = 4;
  mutable std::array<Slot, kSlots> slots_;
  std::atomic<int> current_{-1};
};

}  // namespace roost

#endif  // ROOST_SERVER_VERSION_SLOTS_H_
