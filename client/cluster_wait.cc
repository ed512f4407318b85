#include "client/cluster_wait.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <set>

#include "client/version_consensus.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "util/str_cat.h"

namespace roost {

absl::StatusOr<std::pair<std::string, std::string>> SplitDnsTarget(
    const std::string& target) {
  std::string rest = target.substr(target.find(':') + 1);  // after "dns:"
  if (rest.starts_with("//")) {
    const size_t slash = rest.find('/', 2);
    rest = slash == std::string::npos ? std::string() : rest.substr(slash + 1);
  }
  std::string host = rest;
  std::string port = "443";
  if (rest.starts_with("[")) {
    const size_t close = rest.find(']');
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(
          StrCat("bad target ", target, ": no ] after ["));
    }
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') {
      port = rest.substr(close + 2);
    }
  } else if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty() || port.empty()) {
    return absl::InvalidArgumentError(
        StrCat("bad target ", target, ": no host or port"));
  }
  return std::pair{host, port};
}

namespace {

// Every address `host` resolves to, as "A.B.C.D:PORT" or "[V6]:PORT".
absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host,
                                                 const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int error = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (error != 0) {
    return absl::UnavailableError(
        StrCat("cannot resolve ", host, ": ", gai_strerror(error)));
  }
  std::set<std::string> out;  // one per address, sorted
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
      out.insert(StrCat(text, ":", ntohs(in->sin_port)));
    } else if (a->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
      out.insert(StrCat("[", text, "]:", ntohs(in6->sin6_port)));
    }
  }
  freeaddrinfo(found);
  return std::vector<std::string>(out.begin(), out.end());
}

}  // namespace

absl::StatusOr<std::vector<ReplicaAddress>> ExpandReplicas(
    const ClusterLayout& layout) {
  std::vector<ReplicaAddress> out;
  for (uint32_t s = 0; s < layout.shards.size(); ++s) {
    for (const std::string& target : layout.shards[s]) {
      if (!target.starts_with("dns:")) {
        out.push_back({s, target, target, ""});
        continue;
      }
      absl::StatusOr<std::pair<std::string, std::string>> split =
          SplitDnsTarget(target);
      if (!split.ok()) return split.status();
      absl::StatusOr<std::vector<std::string>> addresses =
          Resolve(split->first, split->second);
      if (!addresses.ok()) return addresses.status();
      for (std::string& address : *addresses) {
        out.push_back({s, target, std::move(address), split->first});
      }
    }
  }
  return out;
}

std::vector<ReplicaState> ClusterWaiter::Poll(const std::string& table,
                                              const std::string& version,
                                              double call_timeout_seconds) {
  absl::StatusOr<std::vector<ReplicaAddress>> replicas =
      ExpandReplicas(layout_);
  if (!replicas.ok()) {
    return {{{}, false, std::string(replicas.status().message())}};
  }
  std::vector<ReplicaState> out;
  out.reserve(replicas->size());
  for (const ReplicaAddress& replica : *replicas) {
    out.push_back(Ask(replica, table, version, call_timeout_seconds));
  }
  return out;
}

ReplicaState ClusterWaiter::Ask(const ReplicaAddress& replica,
                                const std::string& table,
                                const std::string& version,
                                double call_timeout_seconds) {
  ReplicaState state{replica, false, ""};
  std::shared_ptr<grpc::Channel>& channel = channels_[replica.address];
  if (channel == nullptr) {
    ChannelSecurity security = layout_.security;
    if (security.server_name.empty()) {
      security.server_name = replica.server_name;
    }
    if (!security.tls) security.server_name.clear();
    absl::StatusOr<std::shared_ptr<grpc::Channel>> made =
        MakeChannel(replica.address, security);
    if (!made.ok()) {
      channels_.erase(replica.address);
      state.what = std::string(made.status().message());
      return state;
    }
    channel = *made;
  }
  auto stub = v1::Lookup::NewStub(channel);
  grpc::ClientContext context;
  PrepareCall(&context, call_timeout_seconds, layout_.security);
  v1::ListTablesResponse response;
  const grpc::Status status =
      stub->ListTables(&context, v1::ListTablesRequest(), &response);
  if (!status.ok()) {
    state.what = StrCat(StatusCodeName(status.error_code()), ": ",
                        status.error_message(),
                        TlsHint(status, layout_.security.tls,
                                /*layout=*/true));
    return state;
  }
  const uint32_t shards = static_cast<uint32_t>(layout_.shards.size());
  for (const v1::TableInfo& info : response.tables()) {
    if (info.name() != table) continue;
    if (info.serving_version().empty()) {
      state.what = "serves no version";
    } else if (!SameVersion(info.serving_version(), version)) {
      state.what = StrCat("serves ", info.serving_version());
    } else if (info.shard_count() > 0 && (info.shard_count() != shards ||
                                          info.shard() != replica.shard)) {
      state.what =
          StrCat("serves shard ", info.shard(), " of ", info.shard_count(),
                 ", listed as shard ", replica.shard, " of ", shards);
    } else {
      state.ready = true;
    }
    return state;
  }
  state.what = StrCat("has no table ", table);
  return state;
}

}  // namespace roost
