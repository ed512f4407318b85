#include "repository/object_store.h"

#include <cctype>
#include <utility>

#include "repository/local_object_store.h"
#include "repository/s3_client.h"
#include "repository/s3_object_store.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr std::string_view kUriForms =
    "(expected s3://BUCKET[/PREFIX], file:///PATH or a local path)";

absl::Status BadUri(std::string_view uri, std::string_view why) {
  return absl::InvalidArgumentError(
      StrCat("bad repository URI \"", uri, "\": ", why, " ", kUriForms));
}

// S3's bucket naming rules: 3 to 63 of a-z 0-9 . -, starting and ending
// with a letter or digit.
bool ValidBucket(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char c : b) {
    if (!std::islower(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != '-') {
      return false;
    }
  }
  return std::isalnum(static_cast<unsigned char>(b.front())) &&
         std::isalnum(static_cast<unsigned char>(b.back()));
}

}  // namespace

absl::Status ValidateObjectKey(std::string_view key) {
  auto bad = [&](std::string_view why) {
    std::string printable;
    for (unsigned char c : key.substr(0, 200)) {
      printable += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
    }
    return absl::InvalidArgumentError(
        StrCat("bad object key \"", printable, "\": ", why));
  };
  if (key.empty()) return bad("empty");
  if (key.size() > 1024) return bad("longer than 1024 bytes");
  for (unsigned char c : key) {
    if (c < 0x20 || c == 0x7f) return bad("holds a control character");
  }
  for (size_t start = 0; start <= key.size();) {
    size_t end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    const std::string_view segment = key.substr(start, end - start);
    if (segment.empty()) return bad("has an empty segment (a stray '/')");
    if (segment == "." || segment == "..") {
      return bad("has a \".\" or \"..\" segment");
    }
    start = end + 1;
  }
  return absl::OkStatus();
}

absl::Status ValidatePutOptions(const PutOptions& options) {
  if (options.if_absent && !options.if_match.empty()) {
    return absl::InvalidArgumentError(
        "a put cannot be both if_absent and if_match");
  }
  for (char c : options.if_match) {
    if (c == '"' || static_cast<unsigned char>(c) < 0x20) {
      return absl::InvalidArgumentError(
          StrCat("if_match is not an ETag: \"", options.if_match, "\""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ObjectInfo>> ObjectStore::ListAll(
    std::string_view prefix) {
  std::vector<ObjectInfo> all;
  ListOptions options;
  options.prefix = std::string(prefix);
  do {
    ROOST_ASSIGN_OR_RETURN(ListPage page, List(options));
    for (ObjectInfo& info : page.objects) all.push_back(std::move(info));
    options.page_token = std::move(page.next_page_token);
  } while (!options.page_token.empty());
  return all;
}

absl::StatusOr<std::unique_ptr<ObjectStore>> OpenObjectStore(
    std::string_view uri, const ObjectStoreOptions& options) {
  if (uri.empty()) return BadUri(uri, "empty");
  const size_t scheme_end = uri.find("://");
  if (scheme_end == std::string_view::npos) {
    // A local path, absolute or relative.
    return std::make_unique<LocalObjectStore>(std::string(uri), options.stop);
  }
  const std::string_view scheme = uri.substr(0, scheme_end);
  const std::string_view rest = uri.substr(scheme_end + 3);
  if (scheme == "file") {
    // file:///PATH, or file://localhost/PATH.
    std::string_view path = rest;
    if (path.substr(0, 9) == "localhost") path.remove_prefix(9);
    if (path.empty() || path.front() != '/') {
      return BadUri(uri, "a file:// URI needs an absolute path");
    }
    return std::make_unique<LocalObjectStore>(std::string(path), options.stop);
  }
  if (scheme != "s3") {
    return BadUri(uri, StrCat("unsupported scheme \"", scheme, "\""));
  }
  const size_t slash = rest.find('/');
  const std::string_view bucket = rest.substr(0, slash);
  std::string_view prefix =
      slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (bucket.empty()) return BadUri(uri, "no bucket");
  if (!ValidBucket(bucket)) {
    return BadUri(uri, StrCat("\"", bucket,
                              "\" is not a bucket name (3 to 63 of a-z 0-9 . "
                              "-, starting and ending with a letter or "
                              "digit)"));
  }
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  if (!prefix.empty()) {
    absl::Status s = ValidateObjectKey(prefix);
    if (!s.ok()) return BadUri(uri, StrCat("bad prefix: ", s.message()));
  }
  ROOST_ASSIGN_OR_RETURN(
      S3Config config,
      S3Config::FromEnvironment(std::string(bucket), std::string(prefix)));
  return std::make_unique<S3ObjectStore>(std::move(config), options);
}

}  // namespace roost
