#include "storage/version/manifest.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "storage/hash.h"
#include "storage/partition.h"
#include "util/file.h"
#include "util/str_cat.h"
#include "util/timestamp.h"

namespace roost {
namespace {

constexpr uint64_t kManifestVersion = 1;

std::string Hex64(uint64_t v) { return fmt::format("{:016x}", v); }

}  // namespace

std::string Manifest::ToJson() const {
  OrderedJson m;
  m["manifest_version"] = kManifestVersion;
  m["table"] = table;
  m["version"] = version;
  m["format"] = format;
  m["format_version"] = format_version;
  m["keys"] = keys;
  m["key_bytes"] = key_bytes;
  m["value_bytes"] = value_bytes;
  m["key_width"] = key_width ? OrderedJson(*key_width) : OrderedJson();
  m["value_width"] = value_width ? OrderedJson(*value_width) : OrderedJson();
  if (max_key_length) m["max_key_length"] = *max_key_length;
  if (max_value_length) m["max_value_length"] = *max_value_length;
  if (shards > 0) m["shards"] = shards;
  if (partition) {
    m["partition"] = {{"function", partition->function},
                      {"seed", partition->seed}};
  }
  OrderedJson& f = m["files"] = OrderedJson::array();
  for (const ManifestFile& file : files) {
    OrderedJson entry = {
        {"name", file.name}, {"size", file.size}, {"xxh3", Hex64(file.xxh3)}};
    if (file.shard) entry["shard"] = *file.shard;
    if (file.keys) entry["keys"] = *file.keys;
    if (file.key_bytes) entry["key_bytes"] = *file.key_bytes;
    if (file.value_bytes) entry["value_bytes"] = *file.value_bytes;
    f.push_back(std::move(entry));
  }
  m["build_options"] = build_options;
  OrderedJson& in = m["inputs"] = OrderedJson::array();
  for (const ManifestInput& input : inputs) {
    in.push_back({{"path", input.path}, {"size", input.size}});
  }
  m["loader"] = loader;
  if (build_time) m["build_time"] = FormatRfc3339(*build_time);
  if (data_time) m["data_time"] = FormatRfc3339(*data_time);
  if (schema) m["schema"] = schema->ToJson();
  if (!schema_change.empty()) m["schema_change"] = schema_change;
  return DumpJson(m) + "\n";
}

absl::StatusOr<Manifest> Manifest::Parse(std::string_view text) {
  auto json = ParseJson(text);
  if (!json.ok()) {
    return absl::InvalidArgumentError(std::string(json.status().message()));
  }
  auto bad = [](std::string_view field) {
    return absl::InvalidArgumentError(
        StrCat("missing or malformed \"", field, "\""));
  };
  Manifest m;
  if (JsonUint64(*json, "manifest_version") != kManifestVersion) {
    return bad("manifest_version");
  }
  auto str = [&](std::string_view field, std::string* out) {
    auto v = JsonString(*json, field);
    if (!v) return false;
    *out = std::move(*v);
    return true;
  };
  auto num = [&](std::string_view field, uint64_t* out) {
    auto v = JsonUint64(*json, field);
    if (!v) return false;
    *out = *v;
    return true;
  };
  if (!str("table", &m.table)) return bad("table");
  if (!num("version", &m.version)) return bad("version");
  if (!str("format", &m.format)) return bad("format");
  if (!str("format_version", &m.format_version)) return bad("format_version");
  if (!num("keys", &m.keys)) return bad("keys");
  if (!num("key_bytes", &m.key_bytes)) return bad("key_bytes");
  if (!num("value_bytes", &m.value_bytes)) return bad("value_bytes");
  // A width is a number or null (keys of several lengths).
  auto width = [&](std::string_view field, std::optional<uint32_t>* out) {
    if (!json->contains(field) || json->at(field).is_null()) return true;
    auto w = JsonUint64(*json, field);
    if (!w || *w > UINT32_MAX) return false;
    *out = static_cast<uint32_t>(*w);
    return true;
  };
  if (!width("key_width", &m.key_width)) return bad("key_width");
  if (!width("value_width", &m.value_width)) return bad("value_width");
  // Optional: older MANIFESTs do not have them.
  auto optional_num = [&](std::string_view field,
                          std::optional<uint64_t>* out) {
    if (!json->contains(field)) return true;
    *out = JsonUint64(*json, field);
    return out->has_value();
  };
  if (!optional_num("max_key_length", &m.max_key_length)) {
    return bad("max_key_length");
  }
  if (!optional_num("max_value_length", &m.max_value_length)) {
    return bad("max_value_length");
  }
  // A sharded version's: both or neither.
  if (json->contains("shards")) {
    auto n = JsonUint64(*json, "shards");
    if (!n || *n < 2 || *n > kMaxShards) return bad("shards");
    m.shards = static_cast<uint32_t>(*n);
    const auto p = json->find("partition");
    if (p == json->end() || !p->is_object()) return bad("partition");
    auto function = JsonString(*p, "function");
    auto seed = JsonUint64(*p, "seed");
    if (!function || !seed) return bad("partition");
    m.partition = ManifestPartition{*function, *seed};
  } else if (json->contains("partition")) {
    return bad("shards");
  }
  const auto files = json->find("files");
  if (files == json->end() || !files->is_array() || files->empty()) {
    return bad("files");
  }
  for (const Json& f : *files) {
    ManifestFile file;
    auto name = JsonString(f, "name");
    auto size = JsonUint64(f, "size");
    auto sum = JsonString(f, "xxh3");
    if (!name || !size || !sum || sum->size() != 16 ||
        name->find('/') != std::string::npos) {
      return bad("files");
    }
    file.name = *name;
    file.size = *size;
    if (m.shards > 0) {
      auto shard = JsonUint64(f, "shard");
      file.keys = JsonUint64(f, "keys");
      file.key_bytes = JsonUint64(f, "key_bytes");
      file.value_bytes = JsonUint64(f, "value_bytes");
      if (!shard || *shard > UINT32_MAX || !file.keys || !file.key_bytes ||
          !file.value_bytes) {
        return bad("files");
      }
      file.shard = static_cast<uint32_t>(*shard);
    }
    char* end = nullptr;
    file.xxh3 = std::strtoull(sum->c_str(), &end, 16);
    if (end != sum->c_str() + 16) return bad("files");
    m.files.push_back(std::move(file));
  }
  if (auto options = json->find("build_options"); options != json->end()) {
    m.build_options = *options;
  }
  if (auto inputs = json->find("inputs");
      inputs != json->end() && inputs->is_array()) {
    for (const Json& i : *inputs) {
      ManifestInput input;
      if (auto p = JsonString(i, "path")) input.path = *p;
      if (auto s = JsonUint64(i, "size")) input.size = *s;
      m.inputs.push_back(std::move(input));
    }
  }
  str("loader", &m.loader);
  // Optional too; when there, an RFC 3339 time.
  auto optional_time = [&](std::string_view field,
                           std::optional<int64_t>* out) {
    if (!json->contains(field)) return true;
    if (auto text = JsonString(*json, field)) *out = ParseRfc3339(*text);
    return out->has_value();
  };
  if (!optional_time("build_time", &m.build_time)) return bad("build_time");
  if (!optional_time("data_time", &m.data_time)) return bad("data_time");
  if (auto schema = json->find("schema"); schema != json->end()) {
    absl::StatusOr<RowSchema> s = RowSchema::FromJson(*schema);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          StrCat("malformed \"schema\": ", s.status().message()));
    }
    m.schema = *std::move(s);
  }
  if (json->contains("schema_change")) {
    auto change = JsonString(*json, "schema_change");
    if (!change) return bad("schema_change");
    m.schema_change = *change;
  }
  return m;
}

absl::StatusOr<uint64_t> ChecksumFile(const std::string& path) {
  uint64_t size = 0;
  auto fd = OpenRegularFile(path, &size);
  if (!fd.ok()) return fd.status();
  StreamingChecksum sum;
  std::string buf(1 << 20, '\0');
  while (true) {
    const ssize_t n = ::read(*fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(*fd);
      return absl::DataLossError(
          StrCat("cannot read ", path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    sum.Update(buf.data(), static_cast<size_t>(n));
  }
  ::close(*fd);
  return sum.Digest();
}

absl::StatusOr<Manifest> ReadManifest(const std::string& path) {
  auto text = ReadRegularFile(path, kMaxManifestSize);
  if (!text.ok()) return text.status();
  auto m = Manifest::Parse(*text);
  if (!m.ok()) {
    return absl::InvalidArgumentError(StrCat(path, ": ", m.status().message()));
  }
  return m;
}

}  // namespace roost
