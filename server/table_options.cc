#include "server/table_options.h"

#include <CLI/CLI.hpp>

#include "storage/partition.h"
#include "util/cli.h"

namespace roost {

void AddTableFlags(CLI::App& app, TableOptions* o, std::string* load_mode) {
  // --help lists each group's flags in the order they are added here.
  app.option_defaults()->group("Tables");
  app.add_option("--data-dir", o->data_dir,
                 "Serve every table under DIR (DIR/<table>/v<N>/, as "
                 "roost-load publishes)")
      ->type_name("DIR")
      ->required();
  app.add_option("--shard", o->shard,
                 "Serve shard I (0 to 1023) of every sharded table version "
                 "(roost-load build --shards N); unsharded tables are served "
                 "as always. Without it, sharded versions are refused")
      ->type_name("I")
      ->check(CLI::Range(0u, kMaxShards - 1));
  app.add_option("--load-mode", *load_mode,
                 "How tables come into memory: mmap, mmap-locked (fault in "
                 "and mlock) or huge-pages (copy into transparent huge "
                 "pages)")
      ->type_name("MODE");
  app.add_option("--mmap-random", o->mmap_random,
                 "With --load-mode mmap: advise the kernel that tables are "
                 "read at random (MADV_RANDOM), so that a page fault reads "
                 "one page, not the ~128 KiB around it (on tables larger "
                 "than memory, read-around costs 100-200x in lookups/s)");
  app.add_option("--page-requests-below", o->page_requests_below,
                 "With --load-mode mmap: while less than PERCENT of a table "
                 "is resident in memory (counted every --resident-refresh), "
                 "a batch asks the kernel for its keys' pages before looking "
                 "them up (MADV_WILLNEED), so that their reads overlap (0: "
                 "never; 100: always)")
      ->type_name("PERCENT")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--verify-checksums", o->verify_checksums,
                 "Verify every checksum of a version before serving it (the "
                 "header is always checked)");
  app.add_option("--block-cache", o->block_cache_bytes,
                 "Bytes of decompressed blocks of compressed block tables "
                 "kept in memory, in one cache all tables share (0: none)")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 50));
  app.add_option("--poll-interval", o->poll_interval_seconds,
                 "Rescan the data directory every SECONDS, even without "
                 "inotify events (0.05 to 86400)")
      ->check(CLI::Range(0.05, 86400.0));
  app.add_option("--inotify", o->inotify,
                 "Watch the data directory with inotify (else poll only)");
  app.add_option("--keep-versions", o->keep_versions,
                 "Keep the newest K complete versions of each table on disk "
                 "(and the serving and pinned ones); delete older ones. 0 "
                 "keeps all")
      ->type_name("K");
  app.add_option("--version-grace", o->version_grace_seconds,
                 "After a swap, keep the version replaced mapped and answer "
                 "requests that name it for SECONDS (0: only the serving "
                 "version is answered)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--max-tables", o->max_tables,
                 "Most table directories served; more are ignored")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--load-threads", o->load_threads,
                 "Threads that load (open and verify) versions")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--stall-timeout", o->stall_timeout_seconds,
                 "Report the registry stalled when its thread has not come "
                 "round for SECONDS")
      ->check(CLI::Range(1.0, 86400.0));
}

}  // namespace roost
