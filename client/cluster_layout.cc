#include "client/cluster_layout.h"

#include <tuple>

#include "util/file.h"
#include "util/json.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// A layout file is a few lines; a larger one is not a layout.
constexpr uint64_t kMaxLayoutFileSize = 16 << 20;

absl::Status Bad(std::string_view what) {
  return absl::InvalidArgumentError(StrCat("bad cluster layout: ", what));
}

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir.back() == '/' ? StrCat(base_dir, path)
                                : StrCat(base_dir, "/", path);
}

absl::Status ParseTls(const Json& tls, const std::string& base_dir,
                      ChannelSecurity* security) {
  if (!tls.is_object()) return Bad("\"tls\" is not an object");
  for (const auto& [name, value] : tls.items()) {
    if (name != "ca" && name != "cert" && name != "key" &&
        name != "server_name") {
      return Bad(StrCat("unknown member \"tls.", name,
                        "\" (known: ca, cert, key, server_name)"));
    }
  }
  security->tls = true;
  for (auto [name, out, is_file] :
       {std::tuple{"ca", &security->ca, true},
        std::tuple{"cert", &security->cert, true},
        std::tuple{"key", &security->key, true},
        std::tuple{"server_name", &security->server_name, false}}) {
    auto it = tls.find(name);
    if (it == tls.end()) continue;
    if (!it->is_string()) {
      return Bad(StrCat("tls.", name, " is not a string"));
    }
    const std::string value = it->get<std::string>();
    if (value.empty()) return Bad(StrCat("tls.", name, " is empty"));
    *out = is_file ? Resolve(base_dir, value) : value;
  }
  if (security->cert.empty() != security->key.empty()) {
    return Bad("tls.cert and tls.key go together");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckClusterLayout(const ClusterLayout& layout) {
  if (layout.shards.empty()) return Bad("no shards");
  if (layout.shards.size() > kMaxLayoutShards) {
    return Bad(StrCat(layout.shards.size(), " shards, more than the ",
                      kMaxLayoutShards, " a table may have"));
  }
  for (size_t s = 0; s < layout.shards.size(); ++s) {
    const auto& replicas = layout.shards[s];
    if (replicas.empty()) return Bad(StrCat("shard ", s, " has no replica"));
    if (replicas.size() > kMaxLayoutReplicas) {
      return Bad(StrCat("shard ", s, " has ", replicas.size(),
                        " replicas, more than ", kMaxLayoutReplicas));
    }
    for (size_t r = 0; r < replicas.size(); ++r) {
      if (replicas[r].empty()) {
        return Bad(StrCat("shards[", s, "][", r, "] is empty"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ClusterLayout> ParseClusterLayout(std::string_view text,
                                                 const std::string& base_dir) {
  absl::StatusOr<Json> parsed = ParseJson(text);
  if (!parsed.ok()) return Bad(std::string(parsed.status().message()));
  const Json& json = *parsed;
  if (!json.is_object()) return Bad("not a JSON object");
  // A member ignored would be a mistake unseen: a misspelt "tls" would
  // quietly mean plaintext.
  for (const auto& [name, value] : json.items()) {
    if (name != "shards" && name != "tls") {
      return Bad(
          StrCat("unknown member \"", name, "\" (known: \"shards\", \"tls\")"));
    }
  }
  auto shards = json.find("shards");
  if (shards == json.end()) return Bad("no \"shards\"");
  if (!shards->is_array()) return Bad("\"shards\" is not an array");
  ClusterLayout layout;
  layout.shards.reserve(shards->size());
  for (size_t s = 0; s < shards->size(); ++s) {
    const Json& replicas = (*shards)[s];
    if (!replicas.is_array()) {
      return Bad(StrCat("shards[", s, "] is not an array of targets"));
    }
    auto& out = layout.shards.emplace_back();
    for (size_t r = 0; r < replicas.size(); ++r) {
      if (!replicas[r].is_string()) {
        return Bad(StrCat("shards[", s, "][", r, "] is not a string"));
      }
      out.push_back(replicas[r].get<std::string>());
    }
  }
  if (auto tls = json.find("tls"); tls != json.end()) {
    ROOST_RETURN_IF_ERROR(ParseTls(*tls, base_dir, &layout.security));
  }
  ROOST_RETURN_IF_ERROR(CheckClusterLayout(layout));
  return layout;
}

absl::StatusOr<ClusterLayout> ReadClusterLayout(const std::string& path) {
  absl::StatusOr<std::string> text = ReadRegularFile(path, kMaxLayoutFileSize);
  // Relative TLS file names are the layout file's neighbours.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string()
                          : slash == 0               ? std::string("/")
                                                     : path.substr(0, slash);
  absl::StatusOr<ClusterLayout> layout =
      text.ok() ? ParseClusterLayout(*text, dir)
                : absl::StatusOr<ClusterLayout>(text.status());
  if (!layout.ok()) {
    return absl::Status(layout.status().code(),
                        StrCat(path, ": ", layout.status().message()));
  }
  return layout;
}

}  // namespace roost
