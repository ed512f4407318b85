// Table: what a reader of either format offers, so that the server, the
// loader's inspect, verify and get, and the tests look keys up without
// asking which format a file holds. CuckooTable and BlockTable implement
// it; Table::Open picks one by the file's magic number.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(std::unique_ptr<Table> table, Table::Open(path));
//   std::vector<LookupResult> results(keys.size());
//   ValuePins pins;  // reused across batches
//   ROOST_RETURN_IF_ERROR(table->MultiGet(keys, results, &pins));
//   // results[i].value stays valid while `table` and `pins` do.
//
// A batch fills results rather than calling back with each value (as
// LevelDB's InternalGet does) because the server sizes the whole response,
// and refuses one over its limits, before it copies a byte of any value:
// it needs every value at once, and the pins keep those that sit in
// decompressed blocks alive until it is done.
//
// Thread-safety: a Table never changes after Open(); every method may be
// called from any number of threads at once.
#ifndef ROOST_STORAGE_TABLE_H_
#define ROOST_STORAGE_TABLE_H_

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/file.h"
#include "storage/read_options.h"

namespace roost {

enum class TableFormat { kCuckoo, kBlock };

std::string_view TableFormatName(TableFormat format);
absl::StatusOr<TableFormat> ParseTableFormat(std::string_view name);

// Which format `path` holds, from its magic number. DataLoss when neither.
absl::StatusOr<TableFormat> DetectFormat(const std::string& path);

// The outcome of one lookup in a batch.
struct LookupResult {
  // The value: a view into the table, or into a decompressed block held by
  // the batch's ValuePins.
  std::string_view value;
  bool found = false;
  // Cuckoo blocks probed (0 when the key cannot be in the table at all, for
  // instance a key of the wrong width for a fixed-width table; always 0 for
  // formats that do not count them, see Table::counts_blocks_touched()).
  uint8_t blocks_touched = 0;
};

// Keeps the decompressed blocks that a batch's values point into alive.
// Clear() between batches keeps its capacity, so a reused one allocates
// nothing once it has grown.
class ValuePins {
 public:
  void Clear() { pins_.clear(); }
  // Holds `block` (once, when the last one held is the same block).
  void Hold(std::shared_ptr<const std::string> block) {
    if (block != nullptr && (pins_.empty() || pins_.back() != block)) {
      pins_.push_back(std::move(block));
    }
  }
  size_t size() const { return pins_.size(); }

 private:
  std::vector<std::shared_ptr<const std::string>> pins_;
};

// What a table's header or footer records of its contents: the fields a
// MANIFEST also gives, so that the two can be checked against each other.
// A field the format does not record is empty.
struct TableProperties {
  std::string format_version;  // "1.0"
  uint64_t num_keys = 0;
  std::optional<uint64_t> min_key_length;
  uint64_t max_key_length = 0;
  std::optional<uint32_t> key_width;  // when every key has this width
  std::optional<uint32_t> value_width;
  std::optional<uint64_t> max_value_length;
  std::optional<uint64_t> key_bytes, value_bytes;  // raw, summed
};

// A scan in key order, as LevelDB's iterators go. A table whose format keeps
// no order gives one that is never Valid() and whose status() says why.
//
// Example:
//   std::unique_ptr<TableIterator> it = table->NewIterator();
//   for (it->Seek("user:"); it->Valid(); it->Next()) Use(it->key(),
//   it->value()); ROOST_RETURN_IF_ERROR(it->status());
class TableIterator {
 public:
  virtual ~TableIterator() = default;
  virtual void SeekToFirst() = 0;
  // The first entry whose key is >= target.
  virtual void Seek(std::string_view target) = 0;
  // REQUIRES: Valid().
  virtual void Next() = 0;
  virtual bool Valid() const = 0;
  // OK, DataLoss if the scan stopped on a damaged block, Unimplemented for a
  // format that keeps no order.
  virtual absl::Status status() const = 0;
  // REQUIRES: Valid(). Valid until the iterator moves.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
};

// One "name  value" line of a Describe(): the name padded to 18 columns.
template <typename T>
void AppendDescribeLine(std::string* out, std::string_view name,
                        const T& value) {
  fmt::format_to(std::back_inserter(*out), "{:<18}{}\n", name, value);
}

class Table {
 public:
  // Opens `path` as the format its magic number names, read as `options`
  // say (read_options.h: each format takes the fields that apply to it).
  // Errors: NotFound / PermissionDenied for the file, DataLoss for a file
  // of neither format or a corrupt one, FailedPrecondition for an
  // unsupported format version.
  static absl::StatusOr<std::unique_ptr<Table>> Open(
      const std::string& path, const TableReadOptions& options = {});

  virtual ~Table() = default;

  virtual TableFormat format() const = 0;
  virtual uint64_t num_keys() const = 0;
  // The longest key the table holds.
  virtual uint32_t max_key_length() const = 0;
  // The width every key has, or 0 when keys differ in length (a key of
  // another width is a miss without a probe).
  virtual uint32_t key_width() const { return 0; }
  // Whether lookups count the blocks they probe (LookupResult).
  virtual bool counts_blocks_touched() const { return false; }
  // The bytes in memory (mapped or copied), for residency accounting.
  virtual std::string_view file_data() const = 0;
  virtual const std::string& path() const = 0;

  // Looks every key up: results[i] is keys[i]'s outcome. Values in
  // decompressed blocks are pinned in *pins, which is not cleared first.
  // DataLoss for a damaged block met on the way.
  // REQUIRES: results.size() == keys.size().
  virtual absl::Status MultiGet(std::span<const std::string_view> keys,
                                std::span<LookupResult> results,
                                ValuePins* pins) const = 0;

  // Asks the kernel to start reading the pages of a mapped table (load mode
  // kMmap) that a MultiGet of `keys` will read, before that MultiGet
  // (PageRequests, storage/file.h): on a table mostly not resident in
  // memory, its page faults then overlap instead of waiting one after
  // another. A cuckoo table asks in rounds: each key's first block, then
  // (as those arrive) the records and next blocks they point to; a block
  // table asks for each data block its filter and index name (both kept in
  // memory). Costs a system call a page even when the pages are
  // resident, so a caller asks only for tables that mostly are not
  // (roost-server: --page-requests-below). Returns the calls made; nothing
  // for a table not mapped, or a format that cannot tell.
  virtual size_t RequestPages(
      std::span<const std::string_view> /*keys*/) const {
    return 0;
  }

  // Copies the value of `key` into *value when found.
  absl::StatusOr<bool> Get(std::string_view key, std::string* value) const;

  // Recomputes every checksum. DataLoss on a mismatch.
  virtual absl::Status VerifyChecksums() const = 0;

  // A scan in key order. Unless the format keeps its keys sorted (the block
  // table does; a cuckoo table puts each key where its hash says), the
  // iterator is never Valid() and its status() is Unimplemented.
  virtual std::unique_ptr<TableIterator> NewIterator() const;

  // Calls `visit(key, value)` for every pair the table holds, in no
  // promised order, stopping at the first error `visit` returns (which it
  // returns). The views are valid during the call. A block table gives its
  // pairs in key order (its iterator; DataLoss for a damaged block); a
  // cuckoo table in file order: an inline one every bucket, so that a
  // filler copy gives a pair again, a heap one each heap record once. For
  // checks of every value (`roost-load verify` of rows).
  using PairVisitor =
      std::function<absl::Status(std::string_view key, std::string_view value)>;
  virtual absl::Status ForEachPair(const PairVisitor& visit) const;

  virtual TableProperties properties() const = 0;

  // The header or footer and statistics, one "name  value" line each.
  virtual std::string Describe() const = 0;
};

}  // namespace roost

#endif  // ROOST_STORAGE_TABLE_H_
