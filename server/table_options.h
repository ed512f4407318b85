// roost-server's "Tables" flags: where the tables are published, which
// shard of them this server serves, how a version comes into memory and is
// checked, how the data directory is watched and what is kept of it. The
// registry reads them (table_registry.h); flags for the tables' memory
// belong here too.
//
// Example config file:
//   data-dir = "/var/lib/roost"
//   keep-versions = 3
#ifndef ROOST_SERVER_TABLE_OPTIONS_H_
#define ROOST_SERVER_TABLE_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "storage/file.h"

namespace CLI {
class App;
}

namespace roost {

struct TableOptions {
  // Where tables are published: DATA_DIR/<table>/v<N>/. Required.
  std::string data_dir;
  // Serve this shard of every sharded table version (roost-load build
  // --shards N): its file, shard-000I-of-000N.sst. Unsharded versions are
  // served as always. Without it, a sharded version is refused (a load
  // failure, reason "unsupported"), never served in part. The default value
  // is std::nullopt.
  std::optional<uint32_t> shard;
  // How tables are brought into memory. The default value is kMmap.
  LoadMode load_mode = LoadMode::kMmap;
  // Verify every checksum of a version before serving it (the header is
  // always checked). The default value is true.
  bool verify_checksums = true;
  // Load mode mmap: advise the kernel that tables are read at random
  // (MADV_RANDOM, storage/read_options.h advise_random), so that a page
  // fault of a table larger than memory reads one page, not the ~128 KiB
  // around it. The default value is true.
  bool mmap_random = true;
  // Load mode mmap: while less than this percentage of a table's file is
  // resident in memory (counted each --resident-refresh), each batch asks
  // the kernel for the pages its keys will read before looking them up
  // (Table::RequestPages), so that its page faults overlap; above it, the
  // system call a page would cost more than the faults it saves. 0 never
  // asks, 100 always does. The default value is 90.
  double page_requests_below = 90;
  // Bytes of decompressed data blocks kept for the compressed block tables,
  // in one cache every table shares (storage/block/block_cache.h); 0 keeps
  // none, and each lookup of a compressed block decompresses it again.
  // Uncompressed tables are read in place and use none. The default value
  // is 256 MiB.
  uint64_t block_cache_bytes = uint64_t{256} << 20;
  // Rescan the data directory this often, whether or not inotify reported
  // anything. The default value is 5 seconds.
  double poll_interval_seconds = 5;
  // Watch the data directory with inotify. The default value is true.
  bool inotify = true;
  // Versions kept on disk per table, newest first (the serving and pinned
  // ones are always kept); older ones are deleted. 0 keeps all. The default
  // value is 0.
  uint32_t keep_versions = 0;
  // After a swap, keep answering requests that name the version replaced
  // (lookup.proto, "Versions") for this long; it stays mapped meanwhile. 0
  // answers only the serving version. The default value is 30 seconds.
  double version_grace_seconds = 30;
  // Most table directories served; more are ignored (and logged). The
  // default value is 1024.
  uint32_t max_tables = 1024;
  // Threads that load (open and verify) versions. The default value is 2.
  uint32_t load_threads = 2;
  // Report the registry stalled (metric roost_registry_stalled, health of
  // roost.v1.Registry) when its thread has not come round its loop for
  // this long. The default value is 120 seconds.
  double stall_timeout_seconds = 120;
};

// Adds the "Tables" group (--data-dir, --shard, --load-mode, --mmap-random,
// --page-requests-below,
// --verify-checksums, --poll-interval, --inotify, --keep-versions,
// --version-grace, --max-tables, --load-threads, --stall-timeout) to `app`,
// bound to `*options`. --load-mode is bound to `*load_mode`, a name that
// the caller turns into `options->load_mode` (ParseLoadMode) once the
// command line is parsed, so that its error names the flag.
void AddTableFlags(CLI::App& app, TableOptions* options,
                   std::string* load_mode);

}  // namespace roost

#endif  // ROOST_SERVER_TABLE_OPTIONS_H_
