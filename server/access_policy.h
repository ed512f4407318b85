// Per-table access control: which clients may read which tables, and which
// may use the admin service, from a small JSON policy file
// (--access-policy FILE; the format is in docs/operations/security.md,
// "Security").
//
// A client is known by its certificate (under mutual TLS: any of its subject
// alternative names, or its common name) or by a bearer token (the call's
// "authorization: Bearer TOKEN" metadata). The file holds only the SHA-256
// of each token; a presented token is hashed and compared with every one in
// constant time. Every client may read the policy's "anonymous_tables"; a
// client that matches entries may also read the tables they list.
//
// The policy is re-read when the file changes (AccessControl::Reload, from
// the server's main loop); a file that no longer parses leaves the last good
// policy in force, and says so in the log and in
// roost_access_policy_reloads_total{result="error"}.
//
// Example:
//   auto policy = AccessPolicy::Parse(R"({"clients": [
//       {"name": "recs", "certificate_names": ["recs.prod"],
//        "tables": ["recs", "features_*"]}]})");
//   Caller caller = ...;  // from the call's TLS peer and metadata
//   if (!(*policy)->AllowsTable(caller, "recs")) ... PERMISSION_DENIED
#ifndef ROOST_SERVER_ACCESS_POLICY_H_
#define ROOST_SERVER_ACCESS_POLICY_H_

#include <sys/stat.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "prometheus/metric_family.h"

namespace roost {

using TokenHash = std::array<unsigned char, 32>;  // SHA-256

// SHA-256 of `token`.
TokenHash HashToken(std::string_view token);

// Who made a call, as the policy sees it.
struct Caller {
  // The certificate's subject alternative names and common name (empty
  // without a verified client certificate).
  std::vector<std::string> certificate_names;
  // The bearer token's hash, when the call carried one.
  bool has_token = false;
  TokenHash token_hash{};
};

// The caller of the call that `context` belongs to. A malformed
// "authorization" value (not "Bearer TOKEN") is InvalidArgument.
absl::StatusOr<Caller> CallerOf(const grpc::ServerContextBase& context);

class AccessPolicy {
 public:
  // Parses a policy file's text. Errors name the field that is wrong:
  // `clients[2].tables[0]: not a string`.
  static absl::StatusOr<std::unique_ptr<const AccessPolicy>> Parse(
      std::string_view json);

  // What `caller` is, in the policy.
  enum class Verdict {
    kAllowed,
    kUnknownToken,  // a token no entry holds
    kDenied,        // known (or anonymous), and not allowed this
  };
  Verdict ForTable(const Caller& caller, std::string_view table) const;
  Verdict ForAdmin(const Caller& caller) const;

  size_t num_clients() const { return clients_.size(); }

 private:
  struct Client {
    std::string name;
    std::vector<std::string> certificate_names;
    bool has_token = false;
    TokenHash token_hash{};
    std::vector<std::string> tables;  // exact names, or a prefix and "*"
    bool admin = false;
  };
  // The entries `caller` matches; false when its token matches none.
  bool Match(const Caller& caller, std::vector<const Client*>* out) const;
  static bool TableMatches(const std::vector<std::string>& patterns,
                           std::string_view table);

  std::vector<Client> clients_;
  std::vector<std::string> anonymous_tables_;
};

// The policy in force, re-read when its file changes, and the counters of
// what it refused. Thread-safe: lookups read the policy without a lock.
class AccessControl {
 public:
  // Reads `path`; an error when it cannot be read or parsed.
  static absl::StatusOr<std::unique_ptr<AccessControl>> Load(std::string path);

  // The policy in force.
  std::shared_ptr<const AccessPolicy> policy() const {
    return std::atomic_load(&policy_);
  }

  // Re-reads the file if it changed since the last read (its inode, size or
  // modification time). Returns true when a new policy took force.
  bool Reload();

  // Records a refusal (for metrics): `reason` as below.
  enum class Refusal { kUnknownToken, kDenied, kNotAdmin, kBadCredentials };
  void Refused(Refusal reason) {
    refused_[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
  }

  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  explicit AccessControl(std::string path) : path_(std::move(path)) {}
  // Reads and parses the file; *changed false when it is as last read.
  absl::Status Read(bool* changed);

  const std::string path_;
  std::shared_ptr<const AccessPolicy> policy_;
  std::mutex reload_mu_;
  struct stat last_ {};
  std::atomic<uint64_t> reloads_ok_{0};
  std::atomic<uint64_t> reloads_failed_{0};
  std::array<std::atomic<uint64_t>, 4> refused_{};
};

}  // namespace roost

#endif  // ROOST_SERVER_ACCESS_POLICY_H_
