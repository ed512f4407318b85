#include "client/cluster_client.h"

#include <algorithm>

#include "client/multiget_answer.h"
#include "client/read_one_version.h"
#include "client/version_consensus.h"
#include "storage/partition.h"
#include "storage/row/row_codec.h"
#include "util/json.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

Clock::duration Seconds(double seconds) {
  // A year is as good as forever, and does not overflow a time point.
  seconds = std::clamp(seconds, 0.0, 365.0 * 24 * 3600);
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(seconds));
}

// Key `i` of a MultiGet's answer as a Get's answer: the key's error (a
// partial answer's), or its value and the version of the batch.
absl::StatusOr<GetResult> GetResultOf(MultiGetResult& r, size_t i) {
  LookupResult& key = r.results[i];
  if (!key.error.ok()) return key.error;
  GetResult out;
  out.found = key.found;
  out.value = std::move(key.value);
  out.version = r.version;
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterClient>> ClusterClient::Create(
    ClusterLayout layout, ClusterClientOptions options) {
  ROOST_RETURN_IF_ERROR(CheckClusterLayout(layout));
  if (!(options.timeout_seconds > 0)) {
    return absl::InvalidArgumentError("the timeout must be more than 0 s");
  }
  if (!(options.hedge_delay_seconds >= 0)) {
    return absl::InvalidArgumentError("the hedge delay must not be negative");
  }
  if (options.max_batch == 0) {
    return absl::InvalidArgumentError("max_batch must be at least 1 key");
  }
  if (options.coalesce_max_in_flight == 0 || options.coalesce_max_batch == 0) {
    return absl::InvalidArgumentError(
        "coalescing needs at least 1 batch in flight of at least 1 key");
  }
  ROOST_ASSIGN_OR_RETURN(Shards shards, Shards::Connect(layout));
  return std::unique_ptr<ClusterClient>(
      new ClusterClient(std::move(layout), options, std::move(shards)));
}

ClusterClient::ClusterClient(ClusterLayout layout, ClusterClientOptions options,
                             Shards shards)
    : layout_(std::move(layout)),
      options_(options),
      shards_(std::move(shards)) {
  CoalescerOptions coalescing;
  coalescing.max_in_flight = options_.coalesce_max_in_flight;
  coalescing.max_batch = options_.coalesce_max_batch;
  coalescing.timeout_seconds = options_.timeout_seconds;
  coalescing.token = layout_.security.token;
  if (options_.monotonic) {
    coalescing.monotonic = &monotonic_;
    coalescing.reread = [this](const std::string& table,
                               std::span<const std::string> keys) {
      std::vector<absl::StatusOr<GetResult>> out;
      out.reserve(keys.size());
      absl::StatusOr<MultiGetResult> r =
          ReadBatch(table, keys, CallOptions(), nullptr);
      for (size_t i = 0; i < keys.size(); ++i) {
        out.push_back(r.ok() ? GetResultOf(*r, i) : r.status());
      }
      return out;
    };
  }
  for (uint32_t s = 0; s < shards_.size(); ++s) {
    coalescers_.push_back(
        std::make_unique<GetCoalescer>(shards_.replicas(s), s, coalescing));
  }
}

CallPolicy ClusterClient::Policy(const CallOptions& call) const {
  CallPolicy policy;
  policy.deadline = Clock::now() + Seconds(call.timeout_seconds > 0
                                               ? call.timeout_seconds
                                               : options_.timeout_seconds);
  policy.hedge_delay = Seconds(options_.hedge_delay_seconds);
  policy.backoff = Seconds(options_.backoff_seconds);
  policy.max_backoff = Seconds(options_.max_backoff_seconds);
  policy.token = layout_.security.token;
  policy.partial = options_.partial_answers;
  return policy;
}

uint32_t ClusterClient::ShardOf(std::string_view key) const {
  return PartitionOf(key, static_cast<uint32_t>(shards_.size()));
}

void ClusterClient::Record(std::string_view method, std::string_view table,
                           size_t keys, const AttemptCounts& counts,
                           size_t partial_keys, Clock::time_point start,
                           const absl::Status& status,
                           std::string_view version) const {
  CallRecord record;
  record.method = method;
  record.table = table;
  record.keys = keys;
  record.hedges = counts.hedges;
  record.retries = counts.retries;
  record.partial_keys = partial_keys;
  record.code = status.code();
  record.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  record.version = version;
  if (!version.empty()) {
    std::lock_guard lock(versions_mu_);
    auto it = last_versions_.find(record.table);
    if (it == last_versions_.end()) {
      last_versions_.emplace(std::string(record.table), std::string(version));
    } else if (!SameVersion(it->second, version)) {
      record.version_switched = true;
      it->second.assign(version);
    }
  }
  options_.on_call(record);
}

absl::StatusOr<GetResult> ClusterClient::Get(std::string_view table,
                                             std::string_view key,
                                             const CallOptions& call) const {
  // Read only for the CallRecord: no clock on the hot path without one.
  const Clock::time_point start =
      options_.on_call ? Clock::now() : Clock::time_point();
  AttemptCounts counts;
  absl::StatusOr<GetResult> out;
  if (options_.coalesce_gets && call.version.empty() &&
      call.timeout_seconds == 0 && call.fields.empty()) {
    out = coalescers_[ShardOf(key)]->Get(table, key);
  } else {
    // One key is a batch of one: the same path, retries and all.
    const std::string keys[1] = {std::string(key)};
    absl::StatusOr<MultiGetResult> r =
        ReadBatch(table, keys, call, options_.on_call ? &counts : nullptr);
    out = r.ok() ? GetResultOf(*r, 0) : r.status();
  }
  if (options_.on_call) {
    Record("get", table, 1, counts, 0, start, out.status(),
           out.ok() ? out->version : "");
  }
  return out;
}

void ClusterClient::GetAsync(std::string_view table, std::string_view key,
                             GetCoalescer::Done done) const {
  if (!options_.on_call) {
    coalescers_[ShardOf(key)]->Get(table, key, std::move(done));
    return;
  }
  const Clock::time_point start = Clock::now();
  coalescers_[ShardOf(key)]->Get(
      table, key,
      [this, start, table = std::string(table),
       done = std::move(done)](absl::StatusOr<GetResult> r) mutable {
        Record("get", table, 1, AttemptCounts(), 0, start, r.status(),
               r.ok() ? r->version : "");
        done(std::move(r));
      });
}

absl::StatusOr<MultiGetResult> ClusterClient::MultiGet(
    std::string_view table, std::span<const std::string> keys,
    const CallOptions& call) const {
  if (!options_.on_call) return ReadBatch(table, keys, call, nullptr);
  const Clock::time_point start = Clock::now();
  AttemptCounts counts;
  absl::StatusOr<MultiGetResult> r = ReadBatch(table, keys, call, &counts);
  Record("multi_get", table, keys.size(), counts, r.ok() ? r->failed_keys : 0,
         start, r.status(), r.ok() ? r->version : "");
  return r;
}

absl::StatusOr<MultiGetResult> ClusterClient::ReadBatch(
    std::string_view table, std::span<const std::string> keys,
    const CallOptions& call, AttemptCounts* counts) const {
  MultiGetResult out;
  out.results.resize(keys.size());
  if (keys.empty()) return out;
  CallPolicy policy = Policy(call);
  policy.counts = counts;

  // One part per shard that has keys, or several of at most max_batch keys
  // (the servers refuse a larger MultiGet), built from index lists: the
  // shard of each key is computed once, and no key is copied but into its
  // request. A shard's keys fill its parts in request order.
  const uint32_t n = static_cast<uint32_t>(shards_.size());
  const uint32_t max_batch = options_.max_batch;
  std::vector<uint32_t> shard_of(keys.size());
  std::vector<uint32_t> count(n, 0);
  if (n == 1) {
    count[0] = static_cast<uint32_t>(keys.size());  // no hash to compute
  } else {
    for (size_t i = 0; i < keys.size(); ++i) {
      shard_of[i] = PartitionOf(keys[i], n);
      ++count[shard_of[i]];
    }
  }
  size_t part_count = 0;
  for (uint32_t c : count)
    part_count += (size_t{c} + max_batch - 1) / max_batch;
  std::vector<uint32_t> next_part(n, 0);  // where a shard's next key goes
  std::vector<Part> parts;
  parts.reserve(part_count);
  for (uint32_t s = 0; s < n; ++s) {
    next_part[s] = static_cast<uint32_t>(parts.size());
    for (uint32_t left = count[s]; left > 0;) {
      const uint32_t size = std::min(left, max_batch);
      left -= size;
      Part& part = parts.emplace_back();
      part.shard = s;
      part.indices.reserve(size);
      part.request.set_table(std::string(table));
      part.request.set_packed(true);
      for (const std::string& f : call.fields) part.request.add_fields(f);
      part.request.mutable_keys()->Reserve(static_cast<int>(size));
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    Part* part = &parts[next_part[shard_of[i]]];
    if (part->indices.size() == max_batch) {
      part = &parts[++next_part[shard_of[i]]];
    }
    part->indices.push_back(static_cast<uint32_t>(i));
    part->request.add_keys(keys[i]);
  }

  VersionConsensus consensus(parts.size(), MonotonicFor(call), table);
  ROOST_RETURN_IF_ERROR(ReadOneVersion(
      table, parts.size(), call.version, policy,
      [&](std::span<const size_t> which, const std::string& pin) {
        for (size_t i : which) parts[i].request.set_version(pin);
        const absl::Status status = shards_.Run(parts, which, policy);
        // Parts that answered before another failed hold their new answer:
        // the consensus must know, or it could keep them at another
        // version than the batch settles on.
        for (size_t i : which) {
          if (parts[i].answered) {
            consensus.Answered(i, parts[i].response.version(), parts[i].shard,
                               parts[i].response.withdrawn_through());
          } else if (!parts[i].failure.ok()) {
            consensus.Dropped(i);
          }
        }
        return status;
      },
      &consensus));

  if (policy.partial &&
      std::all_of(parts.begin(), parts.end(),
                  [](const Part& p) { return !p.failure.ok(); })) {
    return parts[0].failure;  // no shard answered: nothing partial about it
  }
  for (Part& part : parts) {
    if (!part.failure.ok()) {
      for (uint32_t i : part.indices) out.results[i].error = part.failure;
      out.failed_keys += part.indices.size();
      continue;
    }
    const absl::Status read =
        ReadMultiGetAnswer(part.response, part.indices.size(),
                           [&](size_t j, bool found, std::string_view value) {
                             LookupResult& slot = out.results[part.indices[j]];
                             slot.found = found;
                             slot.value.assign(value);
                           });
    if (!read.ok()) {
      return absl::Status(read.code(),
                          StrCat("shard ", part.shard, ": ", read.message()));
    }
  }
  out.version = consensus.version();
  consensus.Settle();
  return out;
}

absl::StatusOr<std::pair<RowSchema, std::string>> ClusterClient::ServedSchema(
    std::string_view table, const CallPolicy& policy) const {
  absl::Status last;
  const std::vector<Replica>& replicas = shards_.replicas(0);
  const size_t first = shards_.PickReplica(0);
  for (size_t k = 0; k < replicas.size(); ++k) {
    const Replica& replica = replicas[(first + k) % replicas.size()];
    grpc::ClientContext context;
    context.set_deadline(SystemDeadline(policy.deadline));
    if (!policy.token.empty()) {
      context.AddMetadata("authorization", "Bearer " + policy.token);
    }
    v1::ListTablesResponse list;
    const grpc::Status s =
        replica.stub->ListTables(&context, v1::ListTablesRequest(), &list);
    if (!s.ok()) {
      last = ShardError(0, replica.target, s);
      continue;
    }
    for (const v1::TableInfo& t : list.tables()) {
      if (t.name() != table) continue;
      if (t.schema_json().empty()) {
        return absl::FailedPreconditionError(
            StrCat("table ", table, " holds opaque values, not rows"));
      }
      absl::StatusOr<Json> json = ParseJson(t.schema_json());
      absl::StatusOr<RowSchema> schema =
          json.ok() ? RowSchema::FromJson(*json) : json.status();
      if (!schema.ok()) {
        return absl::DataLossError(
            StrCat(replica.target, ": table ", table,
                   "'s schema: ", schema.status().message()));
      }
      return std::make_pair(*std::move(schema), t.serving_version());
    }
    return absl::NotFoundError(
        StrCat(replica.target, ": no table ", table, " is served"));
  }
  return last;
}

absl::StatusOr<RowsResult> ClusterClient::MultiGetRows(
    std::string_view table, std::span<const std::string> keys,
    const CallOptions& call) const {
  const CallPolicy policy = Policy(call);
  for (int attempt = 0;; ++attempt) {
    ROOST_ASSIGN_OR_RETURN(auto served, ServedSchema(table, policy));
    auto& [schema, version] = served;
    if (!call.version.empty() && call.version != version) {
      return absl::FailedPreconditionError(
          StrCat("table ", table, ": the schema of version ", call.version,
                 " is not known (shard 0 serves ", version, ")"));
    }
    CallOptions pinned = call;
    pinned.version = version;
    absl::StatusOr<MultiGetResult> r = MultiGet(table, keys, pinned);
    if (!r.ok() && attempt == 0 && call.version.empty() &&
        r.status().code() == absl::StatusCode::kFailedPrecondition &&
        r.status().message().find("stale cluster layout") ==
            std::string_view::npos) {
      continue;  // the version went away between the two calls
    }
    if (!r.ok()) return r.status();
    for (const LookupResult& result : r->results) {
      if (!result.error.ok()) return result.error;  // rows are not partial
    }
    RowsResult out;
    if (call.fields.empty()) {
      out.schema = std::move(schema);
    } else {
      std::vector<uint32_t> indexes;
      ROOST_ASSIGN_OR_RETURN(out.schema, schema.Project(call.fields, &indexes));
    }
    out.rows.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!r->results[i].found) continue;
      if (absl::Status s = CheckRow(out.schema, r->results[i].value); !s.ok()) {
        return absl::DataLossError(StrCat("key ", i, ": ", s.message()));
      }
      out.rows[i] = std::move(r->results[i].value);
    }
    out.version = std::move(r->version);
    return out;
  }
}

}  // namespace roost
