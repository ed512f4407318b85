// ClientLimits: each client's share of the response memory and of the call
// slots, so that no one client can hold them all.
//
// --max-response-memory and --max-in-flight bound what all calls hold
// together. A client that takes no response (it never opens its HTTP/2
// flow-control window, and answers keepalive pings) keeps its responses and
// their calls in flight; without shares it could hold the whole of both, and
// every other client would be refused for as long as it liked. So each
// client may hold at most `memory` bytes of responses and `calls` calls in
// flight; past that its own responses and calls are refused
// (RESOURCE_EXHAUSTED), and the others' are not.
//
// A client is a connection; with a TLS client certificate, also its
// identity (the names the certificate gives), whose connections together
// hold one share: opening more connections gets a client no more. A share
// is found per call (Of) by the connection's gRPC auth context, which gRPC
// makes once per connection (for plaintext ones too) and which the share
// holds a reference to while it is known, so that no other connection can
// be taken for it. A share that nothing holds is forgotten at the next
// Sweep().
//
// Thread-safe. Of() takes one of 16 locks, chosen by connection;
// Reserve/Release and Enter/Leave are a few atomic operations.
//
// Example:
//   ClientLimits clients({.memory = 256 << 20, .calls = 5000});
//   ClientLimits::Share* client = clients.Of(context);   // referenced
//   if (client != nullptr && !client->Reserve(n)) refuse;
//   ... client->Release(n);
//   client->Unref();
//   clients.Sweep();                                     // once a second
#ifndef ROOST_SERVER_CLIENT_LIMITS_H_
#define ROOST_SERVER_CLIENT_LIMITS_H_

#include <grpcpp/support/server_callback.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "prometheus/metric_family.h"

namespace roost {

class ClientLimits {
 public:
  struct Options {
    // Bytes of responses in flight one client may hold.
    uint64_t memory = 0;
    // Get, MultiGet and Scan calls one client may have in flight.
    uint64_t calls = 0;
  };

  // One connection's share (with its identity's, when it has one).
  class Share {
   public:
    Share(const Share&) = delete;
    Share& operator=(const Share&) = delete;
    ~Share();  // by ClientLimits only, when nothing references it

    // Takes `n` bytes of the connection's and the identity's share; false
    // (taking nothing, counting the refusal) when either would pass
    // `memory`.
    bool Reserve(uint64_t n);
    void Release(uint64_t n);
    // Takes a call slot of both; false (taking nothing, counting the
    // refusal) when either holds `calls` already.
    bool Enter();
    void Leave();

    // References: a share is forgotten only when it has none. A new
    // reference is taken only from one already held (or by Of()).
    void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
    void Unref() { refs_.fetch_sub(1, std::memory_order_release); }

    uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
    uint64_t calls() const { return calls_.load(std::memory_order_relaxed); }
    // The limits it is held to.
    const Options& options() const { return limits_->options_; }

   private:
    friend class ClientLimits;
    using Forget = void (*)(const void* key);
    Share(ClientLimits* limits, const void* key, Forget forget, Share* identity)
        : limits_(limits), key_(key), forget_(forget), identity_(identity) {}

    ClientLimits* const limits_;
    const void* const key_;
    const Forget forget_;    // called with key_ when forgotten; may be null
    Share* const identity_;  // referenced; null without a certificate
    std::atomic<uint64_t> bytes_{0};
    std::atomic<uint64_t> calls_{0};
    std::atomic<uint64_t> refs_{0};
  };

  explicit ClientLimits(Options options) : options_(options) {}
  ~ClientLimits();
  ClientLimits(const ClientLimits&) = delete;
  ClientLimits& operator=(const ClientLimits&) = delete;

  // The share of the client of `context`, referenced; null when gRPC names
  // no connection for it.
  Share* Of(grpc::CallbackServerContext* context);
  // The share of the connection known by `key` (unique while the
  // connection lives), whose certificate names `identity` ("" without
  // one), referenced. What Of() does, for a caller with keys of its own.
  Share* Of(const void* key, std::string_view identity);

  // Forgets the shares nothing references.
  void Sweep();

  const Options& options() const { return options_; }
  // Refusals so far, because a client held its share of memory, of calls.
  uint64_t memory_refused() const { return memory_refused_.load(); }
  uint64_t calls_refused() const { return calls_refused_.load(); }
  // Shares known now: connections, identities.
  size_t connections() const;
  size_t identities() const;

  // roost_client_refused_total{limit}.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<const void*, std::unique_ptr<Share>> shares;
  };
  Shard& ShardOf(const void* key) {
    return shards_[(reinterpret_cast<uintptr_t>(key) >> 6) % kShards];
  }
  // The connection share of `key`, referenced, or null when unknown.
  Share* Find(const void* key);
  // Adds the share of `key` unless another thread did first (then calls
  // `forget` with `key`), and returns it referenced.
  Share* Add(const void* key, Share::Forget forget, std::string_view identity);

  const Options options_;
  std::array<Shard, kShards> shards_;
  mutable std::mutex identities_mu_;
  std::map<std::string, std::unique_ptr<Share>, std::less<>> identities_;
  std::atomic<uint64_t> memory_refused_{0};
  std::atomic<uint64_t> calls_refused_{0};
};

}  // namespace roost

#endif  // ROOST_SERVER_CLIENT_LIMITS_H_
