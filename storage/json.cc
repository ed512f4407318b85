#include "storage/json.h"

#include <charconv>
#include <cstdio>

#include "storage/str_cat.h"

namespace roost {
namespace {

void EscapeTo(std::string_view s, std::string* out) {
  out->push_back('"');
  for (const char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\r':
        *out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(c);  // UTF-8 passes through
        }
    }
  }
  out->push_back('"');
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  absl::StatusOr<Json> Document() {
    Json v;
    if (!Value(&v, 0)) return Error();
    SkipSpace();
    if (pos_ != s_.size()) {
      error_ = "trailing characters";
      return Error();
    }
    return v;
  }

 private:
  absl::Status Error() const {
    return absl::InvalidArgumentError(
        StrCat("bad JSON at byte ", pos_, ": ", error_));
  }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' ||
                                s_[pos_] == '\t' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Expect(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    error_ = StrCat("expected '", std::string(1, c), "'");
    return false;
  }
  bool StringLiteral(std::string* out) {
    if (!Expect('"')) return false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      const char e = s_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'u': {
          unsigned code = 0;
          if (pos_ + 4 > s_.size() ||
              std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, code, 16)
                      .ptr != s_.data() + pos_ + 4) {
            error_ = "bad \\u escape";
            return false;
          }
          pos_ += 4;
          if (code < 0x80) {
            out->push_back(static_cast<char>(code));
          } else if (code < 0x800) {
            out->push_back(static_cast<char>(0xc0 | (code >> 6)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
          } else {
            out->push_back(static_cast<char>(0xe0 | (code >> 12)));
            out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
          }
          break;
        }
        default:
          error_ = "bad escape";
          return false;
      }
    }
    error_ = "unterminated string";
    return false;
  }
  bool Value(Json* out, int depth) {
    if (depth > 64) {
      error_ = "nested too deeply";
      return false;
    }
    SkipSpace();
    if (pos_ >= s_.size()) {
      error_ = "unexpected end";
      return false;
    }
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      *out = Json::Object();
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      while (true) {
        std::string key;
        Json v;
        if (!StringLiteral(&key) || !Expect(':') || !Value(&v, depth + 1)) {
          return false;
        }
        out->Set(std::move(key), std::move(v));
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return Expect('}');
      }
    }
    if (c == '[') {
      ++pos_;
      *out = Json::Array();
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      while (true) {
        Json v;
        if (!Value(&v, depth + 1)) return false;
        out->Append(std::move(v));
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return Expect(']');
      }
    }
    if (c == '"') {
      std::string s;
      if (!StringLiteral(&s)) return false;
      *out = Json::String(std::move(s));
      return true;
    }
    for (const auto& [word, value] :
         {std::pair{"true", 1}, std::pair{"false", 0}, std::pair{"null", 2}}) {
      const std::string_view w(word);
      if (s_.substr(pos_, w.size()) == w) {
        pos_ += w.size();
        *out = value == 2 ? Json::Null() : Json::Bool(value == 1);
        return true;
      }
    }
    const size_t start = pos_;
    while (pos_ < s_.size() &&
           std::string_view("+-0123456789.eE").find(s_[pos_]) !=
               std::string_view::npos) {
      ++pos_;
    }
    double d;
    if (pos_ == start ||
        std::from_chars(s_.data() + start, s_.data() + pos_, d).ptr !=
            s_.data() + pos_) {
      error_ = "bad value";
      return false;
    }
    // Keep the exact text, so integers above 2^53 survive.
    *out = Json::NumberText(std::string(s_.substr(start, pos_ - start)));
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

Json Json::Bool(bool b) {
  Json j(kBool);
  j.text_ = b ? "true" : "false";
  return j;
}

Json Json::Number(uint64_t n) {
  Json j(kNumber);
  j.text_ = std::to_string(n);
  return j;
}

Json Json::Number(double d) {
  Json j(kNumber);
  j.text_ = StrCat(d);
  return j;
}

Json Json::String(std::string s) {
  Json j(kString);
  j.text_ = std::move(s);
  return j;
}

Json Json::NumberText(std::string text) {
  Json j(kNumber);
  j.text_ = std::move(text);
  return j;
}

Json& Json::Set(std::string key, Json value) {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) {
      items_[i] = std::move(value);
      return items_[i];
    }
  }
  keys_.push_back(std::move(key));
  items_.push_back(std::move(value));
  return items_.back();
}

Json& Json::Append(Json value) {
  items_.push_back(std::move(value));
  return items_.back();
}

const Json& Json::Get(std::string_view key) const {
  static const Json kNullValue;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return items_[i];
  }
  return kNullValue;
}

std::optional<uint64_t> Json::AsUint64() const {
  if (type_ != kNumber) return std::nullopt;
  uint64_t n = 0;
  const char* end = text_.data() + text_.size();
  if (std::from_chars(text_.data(), end, n).ptr != end) return std::nullopt;
  return n;
}

std::optional<std::string> Json::AsString() const {
  if (type_ != kString) return std::nullopt;
  return text_;
}

std::optional<bool> Json::AsBool() const {
  if (type_ != kBool) return std::nullopt;
  return text_ == "true";
}

void Json::DumpTo(std::string* out, bool indent, int depth) const {
  auto newline = [&](int d) {
    if (!indent) return;
    out->push_back('\n');
    out->append(2 * d, ' ');
  };
  switch (type_) {
    case kNull:
      *out += "null";
      return;
    case kBool:
    case kNumber:
      *out += text_;
      return;
    case kString:
      EscapeTo(text_, out);
      return;
    case kArray:
    case kObject: {
      const bool object = type_ == kObject;
      out->push_back(object ? '{' : '[');
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i > 0) out->push_back(',');
        newline(depth + 1);
        if (!indent && i > 0) out->push_back(' ');
        if (object) {
          EscapeTo(keys_[i], out);
          *out += ": ";
        }
        items_[i].DumpTo(out, indent, depth + 1);
      }
      if (!items_.empty()) newline(depth);
      out->push_back(object ? '}' : ']');
    }
  }
}

std::string Json::Dump(bool indent) const {
  std::string out;
  DumpTo(&out, indent, 0);
  return out;
}

absl::StatusOr<Json> Json::Parse(std::string_view text) {
  return Parser(text).Document();
}

}  // namespace roost
