// The conformance runner of the C++ client (tests/conformance/README.md has
// the protocol): one JSON request per line on stdin, one answer per line on
// stdout, driving ClusterClient (and ClusterWaiter for `wait`, as
// roost-admin wait does).
//
// Example:
//   tests/conformance/run_conformance.py --runner cpp --
//       build/release/tests/conformance/cpp_conformance_runner
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "client/cluster_client.h"
#include "client/cluster_layout.h"
#include "client/cluster_wait.h"
#include "nlohmann/json.hpp"
#include "storage/partition.h"
#include "util/str_cat.h"

namespace roost {
namespace {

using Json = nlohmann::json;

// A request the runner cannot take: answered with code USAGE.
struct UsageError {
  std::string message;
};

Json Error(std::string_view code, std::string_view message) {
  return {{"error", {{"code", code}, {"message", message}}}};
}

Json Error(const absl::Status& status) {
  return Error(absl::StatusCodeToString(status.code()),
               std::string(status.message()));
}

std::string Bytes(const Json& text) {
  std::string out;
  if (!text.is_string() ||
      !absl::Base64Unescape(text.get<std::string>(), &out)) {
    throw UsageError{StrCat("not base64: ", text.dump())};
  }
  return out;
}

std::string Base64(std::string_view bytes) {
  return absl::Base64Escape(absl::string_view(bytes.data(), bytes.size()));
}

void Members(const Json& request, std::set<std::string> allowed) {
  allowed.insert("op");
  for (const auto& [name, value] : request.items()) {
    if (!allowed.contains(name)) {
      throw UsageError{
          StrCat("unknown member ", name, " of ", request["op"].dump())};
    }
  }
}

class Runner {
 public:
  Json Handle(const Json& request) {
    const std::string op = request.value("op", "");
    if (op == "partition") {
      Members(request, {"key", "shards"});
      return {{"shard", PartitionOf(Bytes(request.at("key")),
                                    request.at("shards").get<uint32_t>())}};
    }
    if (op == "open") return Open(request);
    if (client_ == nullptr) throw UsageError{StrCat(op, " before open")};
    if (op == "get") {
      Members(request, {"table", "key", "version"});
      CallOptions call;
      call.version = request.value("version", "");
      absl::StatusOr<GetResult> r =
          client_->Get(request.at("table").get<std::string>(),
                       Bytes(request.at("key")), call);
      if (!r.ok()) return Error(r.status());
      return {{"found", r->found},
              {"value", Base64(r->value)},
              {"version", r->version}};
    }
    if (op == "multi_get") {
      Members(request, {"table", "keys", "version"});
      std::vector<std::string> keys;
      for (const Json& key : request.at("keys")) keys.push_back(Bytes(key));
      CallOptions call;
      call.version = request.value("version", "");
      absl::StatusOr<MultiGetResult> r =
          client_->MultiGet(request.at("table").get<std::string>(), keys, call);
      if (!r.ok()) return Error(r.status());
      Json results = Json::array();
      for (size_t i = 0; i < keys.size(); ++i) {
        const LookupResult& result = r->results[i];
        if (!result.error.ok()) {
          results.push_back(
              {{"error",
                {{"code", absl::StatusCodeToString(result.error.code())},
                 {"message", std::string(result.error.message())},
                 {"shard", client_->ShardOf(keys[i])}}}});
          continue;
        }
        results.push_back(
            {{"found", result.found}, {"value", Base64(result.value)}});
      }
      return {{"results", results}, {"version", r->version}};
    }
    if (op == "scan") return Scan(request);
    if (op == "metrics") {
      Members(request, {});
      std::lock_guard lock(metrics_->mu);
      return {{"requests", metrics_->requests},
              {"keys", metrics_->keys},
              {"errors", metrics_->errors},
              {"partial_keys", metrics_->partial_keys},
              {"hedges", metrics_->hedges},
              {"retries", metrics_->retries},
              {"version_switches", metrics_->version_switches}};
    }
    if (op == "wait") return Wait(request);
    throw UsageError{StrCat("unknown op ", request.value("op", Json()).dump())};
  }

 private:
  Json Open(const Json& request) {
    Members(request, {"layout", "options"});
    client_.reset();
    absl::StatusOr<ClusterLayout> layout =
        ReadClusterLayout(request.at("layout").get<std::string>());
    if (!layout.ok())
      return Error("LAYOUT", std::string(layout.status().message()));
    ClusterClientOptions options;
    const Json given = request.value("options", Json::object());
    for (const auto& [name, value] : given.items()) {
      if (name == "timeout_s") {
        options.timeout_seconds = value.get<double>();
      } else if (name == "hedge_s") {
        options.hedge_delay_seconds = value.get<double>();
      } else if (name == "token") {
        layout->security.token = value.get<std::string>();
      } else if (name == "partial") {
        options.partial_answers = value.get<bool>();
      } else if (name == "coalesce") {
        options.coalesce_gets = value.get<bool>();
      } else if (name == "monotonic") {
        options.monotonic = value.get<bool>();
      } else {
        throw UsageError{StrCat("the C++ client has no option ", name)};
      }
    }
    layout_ = *layout;
    // The client metrics, summed as the protocol's `metrics` answer.
    metrics_ = std::make_shared<Metrics>();
    options.on_call = [metrics = metrics_](const CallRecord& r) {
      std::lock_guard lock(metrics->mu);
      ++metrics->requests;
      metrics->keys += r.keys;
      if (r.code != absl::StatusCode::kOk) {
        ++metrics->errors[absl::StatusCodeToString(r.code)];
      }
      metrics->partial_keys += r.partial_keys;
      metrics->hedges += r.hedges;
      metrics->retries += r.retries;
      metrics->version_switches += r.version_switched ? 1 : 0;
    };
    absl::StatusOr<std::unique_ptr<ClusterClient>> client =
        ClusterClient::Create(*std::move(layout), options);
    if (!client.ok())
      return Error("LAYOUT", std::string(client.status().message()));
    client_ = *std::move(client);
    timeout_seconds_ = options.timeout_seconds;
    return Json::object();
  }

  Json Scan(const Json& request) {
    Members(request, {"table", "start", "end", "prefix", "limit"});
    ScanOptions scan;
    if (request.contains("start")) scan.start = Bytes(request["start"]);
    if (request.contains("end")) scan.end = Bytes(request["end"]);
    if (request.contains("prefix")) scan.prefix = Bytes(request["prefix"]);
    scan.limit = request.value("limit", 0u);
    absl::StatusOr<ScanResult> r =
        client_->Scan(request.at("table").get<std::string>(), scan);
    if (!r.ok()) return Error(r.status());
    Json entries = Json::array();
    for (const ScanEntry& e : r->entries) {
      entries.push_back({Base64(e.key), Base64(e.value)});
    }
    return {{"entries", entries}, {"more", r->more}, {"version", r->version}};
  }

  // As roost-admin wait: ListTables of every replica until each serves it.
  Json Wait(const Json& request) {
    Members(request, {"table", "version", "timeout_s"});
    const std::string table = request.at("table").get<std::string>();
    const std::string version = request.at("version").get<std::string>();
    using Clock = std::chrono::steady_clock;
    const Clock::time_point deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(
                               request.at("timeout_s").get<double>()));
    ClusterWaiter waiter(layout_);
    while (true) {
      const double left =
          std::chrono::duration<double>(deadline - Clock::now()).count();
      std::string lagging;
      for (const ReplicaState& s : waiter.Poll(
               table, version, std::clamp(left, 0.05, timeout_seconds_))) {
        if (!s.ready) lagging += StrCat(" ", s.replica.address, ": ", s.what);
      }
      if (lagging.empty()) return Json::object();
      if (Clock::now() >= deadline) {
        return Error("DEADLINE_EXCEEDED",
                     StrCat("timed out waiting for ", table, " ", version, ":",
                            lagging));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  struct Metrics {
    std::mutex mu;
    uint64_t requests = 0, keys = 0, partial_keys = 0, hedges = 0, retries = 0,
             version_switches = 0;
    std::map<std::string, uint64_t> errors;
  };

  std::unique_ptr<ClusterClient> client_;
  std::shared_ptr<Metrics> metrics_ = std::make_shared<Metrics>();
  ClusterLayout layout_;
  double timeout_seconds_ = 10;
};

}  // namespace
}  // namespace roost

int main() {
  roost::Runner runner;
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json answer;
    try {
      answer = runner.Handle(nlohmann::json::parse(line));
    } catch (const roost::UsageError& e) {
      answer = roost::Error("USAGE", e.message);
    } catch (const nlohmann::json::exception& e) {
      answer = roost::Error("USAGE", e.what());
    }
    std::cout << answer.dump() << std::endl;
  }
  return 0;
}
