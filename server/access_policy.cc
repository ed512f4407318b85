#include "server/access_policy.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "server/log.h"
#include "server/metrics.h"
#include "util/encoding.h"
#include "util/file.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// A policy file is a few entries; anything larger is a mistake.
constexpr uint64_t kMaxPolicyBytes = 4 << 20;

using Json = nlohmann::json;

absl::Status FieldError(std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(field, ": ", what));
}

// The strings of `value` (an array of strings) into *out.
absl::Status StringList(const Json& value, const std::string& field,
                        std::vector<std::string>* out) {
  if (!value.is_array()) return FieldError(field, "not an array of strings");
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      return FieldError(StrCat(field, "[", i, "]"), "not a string");
    }
    std::string s = value[i].get<std::string>();
    if (s.empty()) return FieldError(StrCat(field, "[", i, "]"), "empty");
    out->push_back(std::move(s));
  }
  return absl::OkStatus();
}

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  for (const std::string& n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

TokenHash HashToken(std::string_view token) {
  TokenHash hash;
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(),
         hash.data());
  return hash;
}

absl::StatusOr<Caller> CallerOf(const grpc::ServerContextBase& context) {
  Caller caller;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    const std::string_view value(it->second.data(), it->second.size());
    constexpr std::string_view kBearer = "Bearer ";
    if (value.size() <= kBearer.size() ||
        value.substr(0, kBearer.size()) != kBearer) {
      return absl::InvalidArgumentError(
          "the authorization metadata is not \"Bearer TOKEN\"");
    }
    caller.has_token = true;
    caller.token_hash = HashToken(value.substr(kBearer.size()));
  }
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    for (const char* property :
         {GRPC_X509_SAN_PROPERTY_NAME, GRPC_X509_CN_PROPERTY_NAME}) {
      for (const grpc::string_ref& name : auth->FindPropertyValues(property)) {
        caller.certificate_names.emplace_back(name.data(), name.size());
      }
    }
  }
  return caller;
}

absl::StatusOr<std::unique_ptr<const AccessPolicy>> AccessPolicy::Parse(
    std::string_view text) {
  const Json json = Json::parse(text.begin(), text.end(), nullptr,
                                /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return absl::InvalidArgumentError("not valid JSON");
  }
  if (!json.is_object()) return absl::InvalidArgumentError("not an object");
  auto policy = std::unique_ptr<AccessPolicy>(new AccessPolicy());
  for (const auto& [key, value] : json.items()) {
    if (key == "anonymous_tables") {
      if (absl::Status s =
              StringList(value, "anonymous_tables", &policy->anonymous_tables_);
          !s.ok()) {
        return s;
      }
    } else if (key != "clients") {
      return FieldError(key,
                        "unknown field (expected clients, "
                        "anonymous_tables)");
    }
  }
  const auto clients = json.find("clients");
  if (clients == json.end() || !clients->is_array()) {
    return FieldError("clients", "missing, or not an array");
  }
  for (size_t i = 0; i < clients->size(); ++i) {
    const Json& entry = (*clients)[i];
    const std::string where = StrCat("clients[", i, "]");
    if (!entry.is_object()) return FieldError(where, "not an object");
    Client client;
    bool has_tables = false;
    for (const auto& [key, value] : entry.items()) {
      const std::string field = StrCat(where, ".", key);
      absl::Status s;
      if (key == "name") {
        if (!value.is_string()) return FieldError(field, "not a string");
        client.name = value.get<std::string>();
      } else if (key == "certificate_names") {
        s = StringList(value, field, &client.certificate_names);
      } else if (key == "token_sha256") {
        absl::StatusOr<std::string> hash =
            value.is_string() ? DecodeHex(value.get<std::string>())
                              : absl::InvalidArgumentError("not a string");
        if (!hash.ok() || hash->size() != client.token_hash.size()) {
          return FieldError(field,
                            "not the SHA-256 of a token (64 hex digits, as "
                            "`printf %s TOKEN | sha256sum` prints)");
        }
        client.has_token = true;
        std::copy(hash->begin(), hash->end(), client.token_hash.begin());
      } else if (key == "tables") {
        has_tables = true;
        s = StringList(value, field, &client.tables);
      } else if (key == "admin") {
        if (!value.is_boolean()) return FieldError(field, "not true or false");
        client.admin = value.get<bool>();
      } else {
        return FieldError(field,
                          "unknown field (expected name, certificate_names, "
                          "token_sha256, tables, admin)");
      }
      if (!s.ok()) return s;
    }
    if (client.certificate_names.empty() && !client.has_token) {
      return FieldError(where,
                        "names no client: give certificate_names or "
                        "token_sha256");
    }
    if (!has_tables && !client.admin) {
      return FieldError(where, "has no tables (and is not admin)");
    }
    policy->clients_.push_back(std::move(client));
  }
  return std::unique_ptr<const AccessPolicy>(std::move(policy));
}

bool AccessPolicy::TableMatches(const std::vector<std::string>& patterns,
                                std::string_view table) {
  for (const std::string& p : patterns) {
    if (!p.empty() && p.back() == '*') {
      const std::string_view prefix(p.data(), p.size() - 1);
      if (table.substr(0, prefix.size()) == prefix) return true;
    } else if (p == table) {
      return true;
    }
  }
  return false;
}

bool AccessPolicy::Match(const Caller& caller,
                         std::vector<const Client*>* out) const {
  bool token_known = false;
  for (const Client& c : clients_) {
    bool match = false;
    if (caller.has_token && c.has_token) {
      // Every entry is compared, whatever matched before: the time taken
      // says nothing about which token (or how much of one) was right.
      const bool same =
          CRYPTO_memcmp(caller.token_hash.data(), c.token_hash.data(),
                        c.token_hash.size()) == 0;
      token_known |= same;
      match |= same;
    }
    for (const std::string& name : caller.certificate_names) {
      if (Contains(c.certificate_names, name)) match = true;
    }
    if (match) out->push_back(&c);
  }
  return !caller.has_token || token_known;
}

AccessPolicy::Verdict AccessPolicy::ForTable(const Caller& caller,
                                             std::string_view table) const {
  std::vector<const Client*> matched;
  if (!Match(caller, &matched)) return Verdict::kUnknownToken;
  // What anyone may read, known clients may read too.
  if (TableMatches(anonymous_tables_, table)) return Verdict::kAllowed;
  for (const Client* c : matched) {
    if (TableMatches(c->tables, table)) return Verdict::kAllowed;
  }
  return Verdict::kDenied;
}

AccessPolicy::Verdict AccessPolicy::ForAdmin(const Caller& caller) const {
  std::vector<const Client*> matched;
  if (!Match(caller, &matched)) return Verdict::kUnknownToken;
  for (const Client* c : matched) {
    if (c->admin) return Verdict::kAllowed;
  }
  return Verdict::kDenied;
}

absl::StatusOr<std::unique_ptr<AccessControl>> AccessControl::Load(
    std::string path) {
  auto control = std::unique_ptr<AccessControl>(new AccessControl(path));
  bool changed = false;
  if (absl::Status s = control->Read(&changed); !s.ok()) return s;
  return control;
}

absl::Status AccessControl::Read(bool* changed) {
  *changed = false;
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    return absl::NotFoundError(
        StrCat("access policy ", path_, ": ", std::strerror(errno)));
  }
  if (policy_ != nullptr && st.st_ino == last_.st_ino &&
      st.st_dev == last_.st_dev && st.st_size == last_.st_size &&
      st.st_mtim.tv_sec == last_.st_mtim.tv_sec &&
      st.st_mtim.tv_nsec == last_.st_mtim.tv_nsec) {
    return absl::OkStatus();
  }
  last_ = st;
  absl::StatusOr<std::string> text = ReadRegularFile(path_, kMaxPolicyBytes);
  if (!text.ok()) {
    return absl::Status(
        text.status().code(),
        StrCat("access policy ", path_, ": ", text.status().message()));
  }
  auto parsed = AccessPolicy::Parse(*text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        StrCat("access policy ", path_, ": ", parsed.status().message()));
  }
  std::atomic_store(&policy_,
                    std::shared_ptr<const AccessPolicy>(std::move(*parsed)));
  *changed = true;
  return absl::OkStatus();
}

bool AccessControl::Reload() {
  std::lock_guard<std::mutex> lock(reload_mu_);
  bool changed = false;
  if (absl::Status s = Read(&changed); !s.ok()) {
    reloads_failed_.fetch_add(1, std::memory_order_relaxed);
    Log(s.message(), "; the last good policy stays in force");
    return false;
  }
  if (changed) {
    reloads_ok_.fetch_add(1, std::memory_order_relaxed);
    Log("access policy ", path_,
        " reloaded: ", Count(policy()->num_clients(), "client"));
  }
  return changed;
}

void AccessControl::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  auto refused = MakeFamily(
      "roost_access_refused_total",
      "Calls refused by the access policy, by reason (unknown_token: a "
      "bearer token no entry holds; denied: a table the caller may not "
      "read; not_admin: an admin call by a caller without admin; "
      "bad_credentials: a malformed authorization header).",
      prometheus::MetricType::Counter);
  constexpr std::array<const char*, 4> kReasons = {
      "unknown_token", "denied", "not_admin", "bad_credentials"};
  for (size_t i = 0; i < kReasons.size(); ++i) {
    AddMetric(&refused, {{"reason", kReasons[i]}}).counter.value =
        static_cast<double>(refused_[i].load(std::memory_order_relaxed));
  }
  out->push_back(std::move(refused));
  AddReloads(out, "roost_access_policy_reloads_total",
             "Re-reads of a changed --access-policy file, by result (an error "
             "leaves the last good policy in force).",
             reloads_ok_.load(std::memory_order_relaxed),
             reloads_failed_.load(std::memory_order_relaxed));
}

}  // namespace roost
