#include "server/metrics.h"

#include <limits>
#include <string_view>

#include "util/str_cat.h"

namespace roost {
namespace {

struct MethodName {
  std::string_view service;
  std::string_view method;
  std::string_view type;
  // Whether its handler counts its messages (MessageReceived, MessageSent),
  // and so whether grpc_server_msg_*_total show it.
  bool counts_messages = false;
};
constexpr std::array<MethodName, kNumMethods> kMethodNames = {{
    {"roost.v1.Lookup", "Get", "unary"},
    {"roost.v1.Lookup", "MultiGet", "unary"},
    {"roost.v1.Lookup", "ListTables", "unary"},
    {"roost.v1.Lookup", "StreamMultiGet", "bidi_stream", true},
    {"roost.v1.Admin", "Rollback", "unary"},
    {"roost.v1.Admin", "Unpin", "unary"},
    {"grpc.health.v1.Health", "Check", "unary"},
    {"grpc.health.v1.Health", "Watch", "server_stream", true},
    {"roost.v1.Lookup", "Scan", "server_stream", true},
    {"redis", "GET", "unary"},
    {"redis", "MGET", "unary"},
    {"redis", "EXISTS", "unary"},
}};

constexpr std::array<std::string_view, 17> kCodeNames = {"OK",
                                                         "Canceled",
                                                         "Unknown",
                                                         "InvalidArgument",
                                                         "DeadlineExceeded",
                                                         "NotFound",
                                                         "AlreadyExists",
                                                         "PermissionDenied",
                                                         "ResourceExhausted",
                                                         "FailedPrecondition",
                                                         "Aborted",
                                                         "OutOfRange",
                                                         "Unimplemented",
                                                         "Internal",
                                                         "Unavailable",
                                                         "DataLoss",
                                                         "Unauthenticated"};

}  // namespace

ShardedCounters::ShardedCounters(size_t cells)
    : cells_(cells),
      lines_per_shard_((cells + kWordsPerLine - 1) / kWordsPerLine),
      lines_(new Line[kShards * lines_per_shard_]) {
  for (size_t i = 0; i < kShards * lines_per_shard_; ++i) {
    for (auto& w : lines_[i].words) w.store(0, std::memory_order_relaxed);
  }
}

size_t ShardedCounters::ShardIndex() {
  static std::atomic<size_t> next{0};
  thread_local const size_t index =
      next.fetch_add(1, std::memory_order_relaxed) % kShards;
  return index;
}

uint64_t ShardedCounters::Sum(size_t cell) const {
  uint64_t sum = 0;
  for (size_t s = 0; s < kShards; ++s) {
    sum += Word(s, cell).load(std::memory_order_relaxed);
  }
  return sum;
}

RpcMetrics::RpcMetrics() : counters_(kNumMethods * kPerMethod) {}

void RpcMetrics::Handled(Method m, grpc::StatusCode code,
                         std::chrono::nanoseconds elapsed) {
  const size_t c = static_cast<size_t>(code) < kCodeNames.size()
                       ? static_cast<size_t>(code)
                       : static_cast<size_t>(grpc::StatusCode::UNKNOWN);
  counters_.Add(Cell(m, kHandled + c), 1);
  const double seconds = std::chrono::duration<double>(elapsed).count();
  size_t bucket = 0;
  while (bucket < kLatencyBounds.size() && seconds > kLatencyBounds[bucket]) {
    ++bucket;
  }
  counters_.Add(Cell(m, kLatency + bucket), 1);
  counters_.Add(Cell(m, kLatencySum), static_cast<uint64_t>(elapsed.count()));
}

void RpcMetrics::RequestKeys(Method m, uint64_t keys) {
  size_t bucket = 0;
  while (bucket < kRequestKeyBounds.size() &&
         static_cast<double>(keys) > kRequestKeyBounds[bucket]) {
    ++bucket;
  }
  counters_.Add(Cell(m, kKeys + bucket), 1);
  counters_.Add(Cell(m, kKeysSum), keys);
}

void RpcMetrics::Collect(std::vector<prometheus::MetricFamily>* out) const {
  using prometheus::MetricType;
  auto started = MakeFamily("grpc_server_started_total",
                            "RPCs started on the server.", MetricType::Counter);
  auto handled = MakeFamily("grpc_server_handled_total",
                            "RPCs completed on the server, by status code.",
                            MetricType::Counter);
  auto latency = MakeFamily(
      "grpc_server_handling_seconds",
      "Time from receiving an RPC to finishing it, in seconds (server side).",
      MetricType::Histogram);
  auto keys =
      MakeFamily("roost_request_keys", "Keys per Get or MultiGet request.",
                 MetricType::Histogram);
  auto received = MakeFamily(
      "grpc_server_msg_received_total",
      "Messages received on streaming RPCs (a server stream's request too).",
      MetricType::Counter);
  auto sent =
      MakeFamily("grpc_server_msg_sent_total",
                 "Messages sent on streaming RPCs.", MetricType::Counter);
  for (int i = 0; i < kNumMethods; ++i) {
    const Method m = static_cast<Method>(i);
    const std::string service(kMethodNames[i].service);
    const std::string method(kMethodNames[i].method);
    const std::vector<prometheus::ClientMetric::Label> labels = {
        {"grpc_method", method},
        {"grpc_service", service},
        {"grpc_type", std::string(kMethodNames[i].type)}};
    AddMetric(&started, labels).counter.value =
        static_cast<double>(counters_.Sum(Cell(m, kStarted)));
    if (kMethodNames[i].counts_messages) {
      AddMetric(&received, labels).counter.value =
          static_cast<double>(counters_.Sum(Cell(m, kReceived)));
      AddMetric(&sent, labels).counter.value =
          static_cast<double>(counters_.Sum(Cell(m, kSent)));
    }
    for (size_t code = 0; code < kCodeNames.size(); ++code) {
      const uint64_t n = counters_.Sum(Cell(m, kHandled + code));
      // OK is always shown so that a rate() has a series to start from.
      if (n == 0 && code != 0) continue;
      auto code_labels = labels;
      code_labels.insert(code_labels.begin(),
                         {"grpc_code", std::string(kCodeNames[code])});
      AddMetric(&handled, code_labels).counter.value = static_cast<double>(n);
    }
    auto& h = AddMetric(&latency, labels).histogram;
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= kLatencyBounds.size(); ++b) {
      cumulative += counters_.Sum(Cell(m, kLatency + b));
      h.bucket.push_back(
          {cumulative, b < kLatencyBounds.size()
                           ? kLatencyBounds[b]
                           : std::numeric_limits<double>::infinity()});
    }
    h.sample_count = cumulative;
    h.sample_sum =
        static_cast<double>(counters_.Sum(Cell(m, kLatencySum))) * 1e-9;
    if (m == Method::kGet || m == Method::kMultiGet ||
        m == Method::kStreamMultiGet || m == Method::kRedisGet ||
        m == Method::kRedisMGet || m == Method::kRedisExists) {
      auto& k = AddMetric(&keys, {{"grpc_method", method}}).histogram;
      uint64_t total = 0;
      for (size_t b = 0; b <= kRequestKeyBounds.size(); ++b) {
        total += counters_.Sum(Cell(m, kKeys + b));
        k.bucket.push_back(
            {total, b < kRequestKeyBounds.size()
                        ? kRequestKeyBounds[b]
                        : std::numeric_limits<double>::infinity()});
      }
      k.sample_count = total;
      k.sample_sum = static_cast<double>(counters_.Sum(Cell(m, kKeysSum)));
    }
  }
  out->push_back(std::move(started));
  out->push_back(std::move(handled));
  out->push_back(std::move(latency));
  out->push_back(std::move(keys));
  out->push_back(std::move(received));
  out->push_back(std::move(sent));
}

void TableLookupMetrics::Add(const LookupTally& tally) {
  if (tally.hits) counters_.Add(kHits, tally.hits);
  if (tally.misses) counters_.Add(kMisses, tally.misses);
  if (!tally.has_probes) return;
  for (size_t i = 0; i < tally.probes.size(); ++i) {
    if (tally.probes[i]) counters_.Add(kProbes + i, tally.probes[i]);
  }
}

std::vector<prometheus::MetricFamily> MetricsCollector::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  rpc_->Collect(&out);
  for (const Source& source : sources_) source(&out);
  return out;
}

prometheus::MetricFamily MakeFamily(std::string name, std::string help,
                                    prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

prometheus::ClientMetric& AddMetric(
    prometheus::MetricFamily* family,
    std::vector<prometheus::ClientMetric::Label> labels) {
  family->metric.emplace_back();
  family->metric.back().label = std::move(labels);
  return family->metric.back();
}

void AddScalar(std::vector<prometheus::MetricFamily>* out, std::string name,
               std::string help, prometheus::MetricType type, double value) {
  auto family = MakeFamily(std::move(name), std::move(help), type);
  prometheus::ClientMetric& metric = AddMetric(&family, {});
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  out->push_back(std::move(family));
}

void AddReloads(std::vector<prometheus::MetricFamily>* out, std::string name,
                std::string help, uint64_t ok, uint64_t failed) {
  auto family = MakeFamily(std::move(name), std::move(help),
                           prometheus::MetricType::Counter);
  AddMetric(&family, {{"result", "ok"}}).counter.value =
      static_cast<double>(ok);
  AddMetric(&family, {{"result", "error"}}).counter.value =
      static_cast<double>(failed);
  out->push_back(std::move(family));
}

}  // namespace roost
