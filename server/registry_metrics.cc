// TableRegistry's Prometheus collector: the registry's state, gauges and
// counters per table, the shard served, the data directory's free space
// and the block cache the tables share, made when Prometheus scrapes (not
// kept up to date on the lookup path), and the resident bytes it reports,
// counted on the registry thread every --resident-refresh-seconds. The
// registry loop is table_registry.cc.
#include <sys/statvfs.h>

#include <algorithm>

#include "server/table_registry.h"
#include "util/str_cat.h"

namespace roost {

namespace {

// Every value of the `reason` label of roost_table_load_failures_total
// (LoadFailureReason's, and "modified": a writer changed a served file).
constexpr const char* kFailureReasons[] = {
    "manifest", "open", "corrupt", "unsupported", "incomplete", "modified"};

}  // namespace

void TableRegistry::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  using prometheus::MetricType;
  auto lookups =
      MakeFamily("roost_lookups_total", "Keys looked up, by table and result.",
                 MetricType::Counter);
  auto probes =
      MakeFamily("roost_lookup_probes",
                 "Cuckoo blocks (cache lines) touched per lookup, by table.",
                 MetricType::Histogram);
  auto info = MakeFamily("roost_table_info",
                         "The version and format each table serves (1).",
                         MetricType::Gauge);
  auto serving = MakeFamily(
      "roost_table_serving",
      "1 while the table serves a version, 0 while it has none to serve.",
      MetricType::Gauge);
  auto keys = MakeFamily("roost_table_keys", "Keys in the served version.",
                         MetricType::Gauge);
  auto built = MakeFamily(
      "roost_table_build_timestamp_seconds",
      "When roost-load built the served version (its MANIFEST's build_time), "
      "in seconds since the Unix epoch; absent for MANIFESTs without one.",
      MetricType::Gauge);
  auto data_time = MakeFamily(
      "roost_table_data_timestamp_seconds",
      "The time the served version's input data is of (roost-load build "
      "--data-timestamp, its MANIFEST's data_time), in seconds since the "
      "Unix epoch; absent when not given.",
      MetricType::Gauge);
  auto mapped = MakeFamily(
      "roost_table_mapped_bytes",
      "Bytes of the served version mapped in memory, and of the version it "
      "replaced while that is held for --version-grace.",
      MetricType::Gauge);
  auto resident =
      MakeFamily("roost_table_resident_bytes",
                 "Bytes of the served version (and of the one held for "
                 "--version-grace) resident in RAM (mincore, refreshed every "
                 "--resident-refresh).",
                 MetricType::Gauge);
  auto swaps = MakeFamily("roost_table_swaps_total",
                          "Versions swapped in (success) or refused (failure).",
                          MetricType::Counter);
  auto failures = MakeFamily(
      "roost_table_load_failures_total",
      "Versions that failed to load or were dropped, by reason (manifest, "
      "open, corrupt, unsupported, incomplete, modified).",
      MetricType::Counter);
  auto rechecks = MakeFamily(
      "roost_table_rechecks_total",
      "Versions checked against their MANIFEST (every byte) after a writer "
      "opened their served file, by result: intact (served again) or "
      "changed (refused).",
      MetricType::Counter);
  auto pinned = MakeFamily("roost_table_pinned",
                           "1 while a rollback pins the table's version.",
                           MetricType::Gauge);
  auto page_requests = MakeFamily(
      "roost_table_page_requests",
      "1 while the served version's batches ask the kernel for their keys' "
      "pages before looking them up (less of it resident than "
      "--page-requests-below), else 0.",
      MetricType::Gauge);
  auto leased = MakeFamily(
      "roost_table_leased",
      "1 while the served version's file is protected by a read lease "
      "(writers are held off until it is unmapped).",
      MetricType::Gauge);
  auto tables = MakeFamily("roost_tables",
                           "Table directories served (at most --max-tables).",
                           MetricType::Gauge);
  auto ignored = MakeFamily(
      "roost_tables_ignored",
      "Table directories not served because --max-tables are served.",
      MetricType::Gauge);
  auto stalled = MakeFamily(
      "roost_registry_stalled",
      "1 while the registry's thread has not come round its loop for "
      "--stall-timeout (new versions are not picked up).",
      MetricType::Gauge);
  auto load_age = MakeFamily(
      "roost_registry_oldest_load_seconds",
      "How long the longest-running version load has been running (0: none).",
      MetricType::Gauge);
  auto shard_info = MakeFamily(
      "roost_shard_info",
      "This server's shard (--shard; \"all\" without it: every table whole) "
      "(1).",
      MetricType::Gauge);
  AddMetric(&shard_info, {{"shard", options_.shard ? StrCat(*options_.shard)
                                                   : std::string("all")}})
      .gauge.value = 1;
  auto shards = MakeFamily(
      "roost_shards",
      "Shards of the sharded versions served (their MANIFESTs' shard count, "
      "the largest if they differ); 1 without --shard.",
      MetricType::Gauge);
  AddScalar(out, "roost_block_cache_capacity_bytes",
            "Bytes of decompressed blocks the block cache, which every "
            "compressed block table shares, may keep (--block-cache).",
            MetricType::Gauge,
            static_cast<double>(block_cache_->capacity_bytes()));
  AddScalar(out, "roost_block_cache_usage_bytes",
            "Bytes of decompressed blocks the block cache keeps.",
            MetricType::Gauge,
            static_cast<double>(block_cache_->usage_bytes()));
  AddScalar(out, "roost_block_cache_hits_total",
            "Reads of a compressed data block found in the block cache.",
            MetricType::Counter, static_cast<double>(block_cache_->hits()));
  AddScalar(out, "roost_block_cache_misses_total",
            "Reads of a compressed data block not in the block cache "
            "(decompressed, then cached).",
            MetricType::Counter, static_cast<double>(block_cache_->misses()));
  // Read at each scrape: a pull or roost-load may have filled the disk
  // since the last. On a file system that hangs, so does the scrape (as
  // every read of the data directory would).
  if (struct statvfs st; ::statvfs(options_.data_dir.c_str(), &st) == 0) {
    AddScalar(out, "roost_data_dir_available_bytes",
              "Bytes free for roost on the data directory's file system "
              "(statvfs f_bavail).",
              MetricType::Gauge,
              static_cast<double>(uint64_t{st.f_bavail} * st.f_frsize));
    AddScalar(out, "roost_data_dir_size_bytes",
              "Size of the data directory's file system in bytes (statvfs "
              "f_blocks).",
              MetricType::Gauge,
              static_cast<double>(uint64_t{st.f_blocks} * st.f_frsize));
  }
  std::lock_guard lock(mu_);
  uint32_t shard_count = options_.shard ? 0 : 1;
  for (const auto& [name, state] : states_) {
    if (state.serving && state.serving->opened.shard) {
      shard_count =
          std::max(shard_count, state.serving->opened.manifest.shards);
    }
  }
  if (shard_count > 0) {
    AddMetric(&shards, {}).gauge.value = static_cast<double>(shard_count);
  }
  AddMetric(&tables, {}).gauge.value = static_cast<double>(states_.size());
  AddMetric(&ignored, {}).gauge.value =
      static_cast<double>(refused_tables_.size());
  AddMetric(&stalled, {}).gauge.value = Stalled() ? 1 : 0;
  AddMetric(&load_age, {}).gauge.value =
      std::chrono::duration<double>(workers_.OldestRunning()).count();
  for (const auto& [name, state] : states_) {
    const TableLookupMetrics& m = state.entry->lookups;
    AddMetric(&lookups, {{"result", "hit"}, {"table", name}}).counter.value =
        static_cast<double>(m.hits());
    AddMetric(&lookups, {{"result", "miss"}, {"table", name}}).counter.value =
        static_cast<double>(m.misses());
    const auto& v = state.serving;
    AddMetric(&serving, {{"table", name}}).gauge.value = v ? 1 : 0;
    if (v && v->table().counts_blocks_touched()) {
      auto& h = AddMetric(&probes, {{"table", name}}).histogram;
      uint64_t cumulative = 0;
      double sum = 0;
      for (int n = 0; n <= kMaxProbes + 1; ++n) {
        const uint64_t count = m.probes(n);
        cumulative += count;
        sum += static_cast<double>(count) * n;
        if (n <= kMaxProbes) {
          h.bucket.push_back({cumulative, static_cast<double>(n)});
        }
      }
      h.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
      h.sample_count = cumulative;
      h.sample_sum = sum;
    }
    if (v) {
      AddMetric(&info,
                {{"format", std::string(TableFormatName(v->table().format()))},
                 {"table", name},
                 {"version", v->version_name}})
          .gauge.value = 1;
      AddMetric(&keys, {{"table", name}}).gauge.value =
          static_cast<double>(v->table().num_keys());
      const Manifest& manifest = v->opened.manifest;
      if (manifest.build_time) {
        AddMetric(&built, {{"table", name}}).gauge.value =
            static_cast<double>(*manifest.build_time);
      }
      if (manifest.data_time) {
        AddMetric(&data_time, {{"table", name}}).gauge.value =
            static_cast<double>(*manifest.data_time);
      }
      AddMetric(&mapped, {{"table", name}}).gauge.value = static_cast<double>(
          v->file_size + (state.previous ? state.previous->file_size : 0));
      AddMetric(&resident, {{"table", name}}).gauge.value =
          static_cast<double>(state.resident_bytes);
      AddMetric(&leased, {{"table", name}}).gauge.value = v->lease ? 1 : 0;
      AddMetric(&page_requests, {{"table", name}}).gauge.value =
          v->request_pages.load(std::memory_order_relaxed) ? 1 : 0;
    }
    AddMetric(&swaps, {{"result", "success"}, {"table", name}}).counter.value =
        static_cast<double>(state.swaps_ok);
    AddMetric(&swaps, {{"result", "failure"}, {"table", name}}).counter.value =
        static_cast<double>(state.swaps_failed);
    // Every reason has a series from the start, so that increase() sees
    // the first failure.
    for (const char* reason : kFailureReasons) {
      auto it = state.failures.find(reason);
      AddMetric(&failures, {{"reason", reason}, {"table", name}})
          .counter.value =
          static_cast<double>(it == state.failures.end() ? 0 : it->second);
    }
    for (const char* result : {"intact", "changed"}) {
      auto it = state.rechecks.find(result);
      AddMetric(&rechecks, {{"result", result}, {"table", name}})
          .counter.value =
          static_cast<double>(it == state.rechecks.end() ? 0 : it->second);
    }
    AddMetric(&pinned, {{"table", name}}).gauge.value =
        state.versions.pinned() ? 1 : 0;
  }
  for (auto* f :
       {&lookups,    &probes, &info,         &serving, &keys,     &built,
        &data_time,  &mapped, &resident,     &swaps,   &failures, &rechecks,
        &pinned,     &leased, &tables,       &ignored, &stalled,  &load_age,
        &shard_info, &shards, &page_requests}) {
    out->push_back(std::move(*f));
  }
}

void TableRegistry::RefreshResidentBytes() {
  for (auto& [name, state] : states_) {
    uint64_t resident = 0;
    if (state.serving) {
      const std::string_view data = state.serving->table().file_data();
      resident = ResidentBytes(data);
      const double below = options_.page_requests_below;
      state.serving->request_pages.store(
          below >= 100 || static_cast<double>(resident) <
                              static_cast<double>(data.size()) * below / 100,
          std::memory_order_relaxed);
    }
    if (state.previous) {
      resident += ResidentBytes(state.previous->table().file_data());
    }
    std::lock_guard lock(mu_);
    state.resident_bytes = resident;
  }
}

}  // namespace roost
