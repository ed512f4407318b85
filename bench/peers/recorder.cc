#include "bench/peers/recorder.h"

#include <random>

namespace roost::bench {

Probes MakeProbes(const SuiteData& data, size_t count, bool hits,
                  uint64_t seed) {
  Probes p;
  std::mt19937_64 rng(seed ^ (hits ? 0x68697473 : 0x6d6973736573));
  const uint64_t n = data.num_keys();
  p.words.resize(count);
  for (auto& w : p.words) w = data.Word(hits ? rng() % n : n + rng() % n);
  p.bytes.resize(count * SuiteData::kMaxKey);
  std::vector<size_t> lengths(count);
  size_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    lengths[i] = data.Key(p.words[i], p.bytes.data() + offset);
    offset += lengths[i];
  }
  p.keys.reserve(count);
  offset = 0;
  for (size_t i = 0; i < count; ++i) {
    p.keys.emplace_back(p.bytes.data() + offset, lengths[i]);
    offset += lengths[i];
  }
  return p;
}

void Recorder::Print(const std::string& system, const std::string& config,
                     const char* op, const char* probe, size_t lookups,
                     double seconds, uint64_t table_bytes) {
  PrintRow(system, config, op, 1, probe, lookups, seconds, table_bytes, 0,
           lookups, 0);
}

void Recorder::Skip(const std::string& system, const std::string& config,
                    const std::string& why) {
  fmt::print(s_.out,
             "{{\"dataset\":\"{}\",\"keys\":{},\"system\":\"{}\","
             "\"config\":\"{}\",{}\"skipped\":\"{}\"}}\n",
             DataSetName(s_.set), s_.keys, system, config, RoundField(), why);
  std::fflush(s_.out);
}

std::string Recorder::RoundField() const {
  return s_.round > 0 ? fmt::format("\"round\":{},", s_.round) : "";
}

void Recorder::PrintRow(const std::string& system, const std::string& config,
                        const char* op, size_t batch, const char* probe,
                        size_t lookups, double seconds, uint64_t table_bytes,
                        double build_s, size_t checked, uint64_t errors) {
  fmt::print(s_.out,
             "{{\"dataset\":\"{}\",\"keys\":{},\"system\":\"{}\","
             "\"config\":\"{}\",\"op\":\"{}\",\"batch\":{},\"probe\":\"{}\","
             "\"lookups\":{},\"ops_per_s\":{:.1f},\"ns_per_lookup\":{:.2f},"
             "\"table_bytes\":{},\"bytes_per_key\":{:.2f},\"build_s\":{:.3f},"
             "{}\"checked\":{},\"errors\":{}}}\n",
             DataSetName(s_.set), s_.keys, system, config, op, batch, probe,
             lookups, lookups / seconds, seconds * 1e9 / lookups, table_bytes,
             static_cast<double>(table_bytes) / s_.keys, build_s, RoundField(),
             checked, errors);
  std::fflush(s_.out);
  std::fprintf(stderr, "  %-20s %-28s %-8s %-4s %8.2f M/s\n", system.c_str(),
               config.c_str(), op, probe, lookups / seconds / 1e6);
}

}  // namespace roost::bench
