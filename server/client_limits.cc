#include "server/client_limits.h"

#include <grpc/grpc_security.h>
#include <grpcpp/server_context.h>

#include "server/metrics.h"

namespace roost {
namespace {

// Adds `n` to `used` unless that would pass `limit`.
bool Take(std::atomic<uint64_t>& used, uint64_t n, uint64_t limit) {
  if (used.fetch_add(n, std::memory_order_relaxed) + n <= limit) return true;
  used.fetch_sub(n, std::memory_order_relaxed);
  return false;
}

// What a connection's auth context says of its client's certificate: the
// names of its identity (subject alternative names, else the common name),
// comma-separated; "" without a verified certificate.
std::string IdentityOf(const grpc_auth_context* auth) {
  std::string identity;
  if (!grpc_auth_context_peer_is_authenticated(auth)) return identity;
  grpc_auth_property_iterator it = grpc_auth_context_peer_identity(auth);
  while (const grpc_auth_property* p = grpc_auth_property_iterator_next(&it)) {
    if (!identity.empty()) identity += ',';
    identity.append(p->value, p->value_length);
  }
  return identity;
}

void ReleaseAuthContext(const void* key) {
  grpc_auth_context_release(
      static_cast<grpc_auth_context*>(const_cast<void*>(key)));
}

}  // namespace

ClientLimits::Share::~Share() {
  if (identity_ != nullptr) identity_->Unref();
  if (forget_ != nullptr) forget_(key_);
}

bool ClientLimits::Share::Reserve(uint64_t n) {
  const uint64_t limit = limits_->options_.memory;
  if (Take(bytes_, n, limit)) {
    if (identity_ == nullptr || Take(identity_->bytes_, n, limit)) return true;
    bytes_.fetch_sub(n, std::memory_order_relaxed);
  }
  limits_->memory_refused_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void ClientLimits::Share::Release(uint64_t n) {
  if (identity_ != nullptr) {
    identity_->bytes_.fetch_sub(n, std::memory_order_relaxed);
  }
  bytes_.fetch_sub(n, std::memory_order_relaxed);
}

bool ClientLimits::Share::Enter() {
  const uint64_t limit = limits_->options_.calls;
  if (Take(calls_, 1, limit)) {
    if (identity_ == nullptr || Take(identity_->calls_, 1, limit)) return true;
    calls_.fetch_sub(1, std::memory_order_relaxed);
  }
  limits_->calls_refused_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void ClientLimits::Share::Leave() {
  if (identity_ != nullptr) {
    identity_->calls_.fetch_sub(1, std::memory_order_relaxed);
  }
  calls_.fetch_sub(1, std::memory_order_relaxed);
}

ClientLimits::~ClientLimits() {
  // Connections first: they reference identities.
  for (Shard& shard : shards_) shard.shares.clear();
  identities_.clear();
}

ClientLimits::Share* ClientLimits::Of(grpc::CallbackServerContext* context) {
  grpc_auth_context* auth = grpc_call_auth_context(context->c_call());
  if (auth == nullptr) return nullptr;
  if (Share* share = Find(auth)) {
    grpc_auth_context_release(auth);  // the share holds one already
    return share;
  }
  return Add(auth, ReleaseAuthContext, IdentityOf(auth));
}

ClientLimits::Share* ClientLimits::Of(const void* key,
                                      std::string_view identity) {
  if (Share* share = Find(key)) return share;
  return Add(key, nullptr, identity);
}

ClientLimits::Share* ClientLimits::Find(const void* key) {
  Shard& shard = ShardOf(key);
  std::lock_guard lock(shard.mu);
  const auto it = shard.shares.find(key);
  if (it == shard.shares.end()) return nullptr;
  it->second->Ref();
  return it->second.get();
}

ClientLimits::Share* ClientLimits::Add(const void* key, Share::Forget forget,
                                       std::string_view identity) {
  Share* of_identity = nullptr;
  if (!identity.empty()) {
    std::lock_guard lock(identities_mu_);
    auto it = identities_.find(identity);
    if (it == identities_.end()) {
      it = identities_
               .emplace(std::string(identity),
                        std::unique_ptr<Share>(
                            new Share(this, nullptr, nullptr, nullptr)))
               .first;
    }
    of_identity = it->second.get();
    of_identity->Ref();  // the connection's share holds it
  }
  auto share =
      std::unique_ptr<Share>(new Share(this, key, forget, of_identity));
  share->Ref();
  Shard& shard = ShardOf(key);
  std::lock_guard lock(shard.mu);
  // Another call of the same connection may have come first: then `share`
  // is not added, and lets go of its identity and of `key` as it goes.
  auto [it, added] = shard.shares.try_emplace(key, std::move(share));
  if (!added) it->second->Ref();
  return it->second.get();
}

void ClientLimits::Sweep() {
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    std::erase_if(shard.shares, [](const auto& entry) {
      return entry.second->refs_.load(std::memory_order_acquire) == 0;
    });
  }
  std::lock_guard lock(identities_mu_);
  std::erase_if(identities_, [](const auto& entry) {
    return entry.second->refs_.load(std::memory_order_acquire) == 0;
  });
}

size_t ClientLimits::connections() const {
  size_t n = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    n += shard.shares.size();
  }
  return n;
}

size_t ClientLimits::identities() const {
  std::lock_guard lock(identities_mu_);
  return identities_.size();
}

void ClientLimits::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  auto refused = MakeFamily(
      "roost_client_refused_total",
      "Responses and calls refused because their client (a connection, or "
      "one TLS client certificate) held its share: limit response_memory "
      "(--max-client-response-memory), in_flight (--max-client-in-flight).",
      prometheus::MetricType::Counter);
  AddMetric(&refused, {{"limit", "in_flight"}}).counter.value =
      static_cast<double>(calls_refused());
  AddMetric(&refused, {{"limit", "response_memory"}}).counter.value =
      static_cast<double>(memory_refused());
  out->push_back(std::move(refused));
}

}  // namespace roost
