#include "repository/aws_config_file.h"

#include <cctype>

#include "util/file.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// A credentials or config file larger than this is not one.
constexpr uint64_t kMaxFileBytes = 1 << 20;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(c));
  return out;
}

}  // namespace

std::string AwsProfile::Value(std::string_view key) const {
  auto it = values.find(std::string(key));
  return it == values.end() ? std::string() : it->second.first;
}

std::string AwsProfile::Where(std::string_view key) const {
  auto it = values.find(std::string(key));
  return it == values.end() ? path : StrCat(path, ":", it->second.second);
}

absl::StatusOr<AwsProfile> ReadAwsProfile(const std::string& path,
                                          std::string_view profile,
                                          bool config_file) {
  AwsProfile out;
  out.path = path;
  absl::StatusOr<std::string> text = ReadRegularFile(path, kMaxFileBytes);
  if (absl::IsNotFound(text.status())) return out;
  if (!text.ok()) return text.status();
  const std::string wanted = config_file && profile != "default"
                                 ? StrCat("profile ", profile)
                                 : std::string(profile);
  bool in_section = false;  // a section has been opened
  bool in_wanted = false;
  std::string_view rest = *text;
  for (int line_no = 1; !rest.empty(); ++line_no) {
    const size_t eol = rest.find('\n');
    std::string_view raw = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view()
                                         : rest.substr(eol + 1);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const std::string_view line = Trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    // An indented line: a nested setting or a continued value.
    if (std::isspace(static_cast<unsigned char>(raw.front())) && in_section &&
        line.front() != '[') {
      continue;
    }
    if (line.front() == '[') {
      if (line.back() != ']') {
        return absl::InvalidArgumentError(StrCat(
            path, ":", line_no, ": a section header lacks its closing ']'"));
      }
      const std::string name(Trim(line.substr(1, line.size() - 2)));
      if (name.empty()) {
        return absl::InvalidArgumentError(
            StrCat(path, ":", line_no, ": an empty section name"));
      }
      in_section = true;
      // "[profile  prod]" is "[profile prod]"; the SDKs collapse the space.
      std::string normal = name;
      if (normal.rfind("profile", 0) == 0 && normal.size() > 7 &&
          std::isspace(static_cast<unsigned char>(normal[7]))) {
        normal = StrCat("profile ", Trim(std::string_view(normal).substr(7)));
      }
      in_wanted = normal == wanted;
      if (in_wanted) out.found = true;
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(
          StrCat(path, ":", line_no,
                 ": expected \"[section]\" or \"key = value\", found \"",
                 line.substr(0, 40), "\""));
    }
    const std::string key = Lower(Trim(line.substr(0, eq)));
    if (key.empty()) {
      return absl::InvalidArgumentError(
          StrCat(path, ":", line_no, ": a setting without a name"));
    }
    if (!in_section) {
      return absl::InvalidArgumentError(StrCat(
          path, ":", line_no, ": \"", key, "\" comes before any [section]"));
    }
    if (in_wanted) {
      out.values[key] = {std::string(Trim(line.substr(eq + 1))), line_no};
    }
  }
  return out;
}

}  // namespace roost
