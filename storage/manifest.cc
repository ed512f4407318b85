#include "storage/manifest.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "storage/hash.h"
#include "storage/str_cat.h"

namespace roost {
namespace {

constexpr uint64_t kManifestVersion = 1;

std::string Hex64(uint64_t v) { return fmt::format("{:016x}", v); }

}  // namespace

std::string Manifest::ToJson() const {
  Json m = Json::Object();
  m.Set("manifest_version", Json::Number(kManifestVersion));
  m.Set("table", Json::String(table));
  m.Set("version", Json::Number(version));
  m.Set("format", Json::String(format));
  m.Set("format_version", Json::String(format_version));
  m.Set("keys", Json::Number(keys));
  m.Set("key_bytes", Json::Number(key_bytes));
  m.Set("value_bytes", Json::Number(value_bytes));
  m.Set("key_width", key_width ? Json::Number(uint64_t{*key_width}) : Json());
  m.Set("value_width",
        value_width ? Json::Number(uint64_t{*value_width}) : Json());
  Json& f = m.Set("files", Json::Array());
  for (const ManifestFile& file : files) {
    Json j = Json::Object();
    j.Set("name", Json::String(file.name));
    j.Set("size", Json::Number(file.size));
    j.Set("xxh3", Json::String(Hex64(file.xxh3)));
    f.Append(std::move(j));
  }
  m.Set("build_options", build_options);
  Json& in = m.Set("inputs", Json::Array());
  for (const ManifestInput& input : inputs) {
    Json j = Json::Object();
    j.Set("path", Json::String(input.path));
    j.Set("size", Json::Number(input.size));
    in.Append(std::move(j));
  }
  m.Set("loader", Json::String(loader));
  return m.Dump() + "\n";
}

absl::StatusOr<Manifest> Manifest::Parse(std::string_view text) {
  auto json = Json::Parse(text);
  if (!json.ok()) return json.status();
  auto bad = [](std::string_view field) {
    return absl::InvalidArgumentError(
        StrCat("MANIFEST: missing or malformed \"", field, "\""));
  };
  Manifest m;
  if (json->Get("manifest_version").AsUint64() != kManifestVersion) {
    return bad("manifest_version");
  }
  auto str = [&](std::string_view field, std::string* out) {
    auto v = json->Get(field).AsString();
    if (!v) return false;
    *out = *v;
    return true;
  };
  auto num = [&](std::string_view field, uint64_t* out) {
    auto v = json->Get(field).AsUint64();
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
  if (auto w = json->Get("key_width").AsUint64()) m.key_width = *w;
  if (auto w = json->Get("value_width").AsUint64()) m.value_width = *w;
  const Json& files = json->Get("files");
  if (files.type() != Json::kArray || files.items().empty()) {
    return bad("files");
  }
  for (const Json& f : files.items()) {
    ManifestFile file;
    auto name = f.Get("name").AsString();
    auto size = f.Get("size").AsUint64();
    auto sum = f.Get("xxh3").AsString();
    if (!name || !size || !sum || sum->size() != 16 ||
        name->find('/') != std::string::npos) {
      return bad("files");
    }
    file.name = *name;
    file.size = *size;
    char* end = nullptr;
    file.xxh3 = std::strtoull(sum->c_str(), &end, 16);
    if (end != sum->c_str() + 16) return bad("files");
    m.files.push_back(std::move(file));
  }
  m.build_options = json->Get("build_options");
  for (const Json& i : json->Get("inputs").items()) {
    ManifestInput input;
    if (auto p = i.Get("path").AsString()) input.path = *p;
    if (auto s = i.Get("size").AsUint64()) input.size = *s;
    m.inputs.push_back(std::move(input));
  }
  str("loader", &m.loader);
  return m;
}

absl::StatusOr<uint64_t> ChecksumFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  StreamingChecksum sum;
  std::string buf(1 << 20, '\0');
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return absl::DataLossError(
          StrCat("cannot read ", path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    sum.Update(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return sum.Digest();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::string out;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return absl::InternalError(
          StrCat("cannot read ", path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace roost
