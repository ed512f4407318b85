// A small JSON value, writer and parser: enough for MANIFEST files and the
// loader's machine-readable summary. Numbers are kept as their text, so
// 64-bit integers round-trip exactly.
//
// Example:
//   Json m = Json::Object();
//   m.Set("keys", Json::Number(100));
//   std::string text = m.Dump();  // {"keys": 100}
//   ROOST_ASSIGN_OR_RETURN(Json back, Json::Parse(text));
//   std::optional<uint64_t> keys = back.Get("keys").AsUint64();
#ifndef ROOST_STORAGE_JSON_H_
#define ROOST_STORAGE_JSON_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace roost {

class Json {
 public:
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Json() = default;
  static Json Null() { return Json(); }
  static Json Bool(bool b);
  static Json Number(uint64_t n);
  static Json Number(double d);
  static Json String(std::string s);
  // A number given as valid JSON number text, kept as is.
  static Json NumberText(std::string text);
  static Json Array() { return Json(kArray); }
  static Json Object() { return Json(kObject); }

  Type type() const { return type_; }
  // Objects keep their members in insertion order.
  Json& Set(std::string key, Json value);
  Json& Append(Json value);
  // Member `key` of an object, or a null value.
  const Json& Get(std::string_view key) const;
  const std::vector<Json>& items() const { return items_; }

  std::optional<uint64_t> AsUint64() const;
  std::optional<std::string> AsString() const;
  std::optional<bool> AsBool() const;

  // Pretty-printed with two-space indents when `indent`, else on one line.
  std::string Dump(bool indent = true) const;

  // Parses a whole document. InvalidArgument naming the byte offset.
  static absl::StatusOr<Json> Parse(std::string_view text);

 private:
  explicit Json(Type type) : type_(type) {}
  void DumpTo(std::string* out, bool indent, int depth) const;

  Type type_ = kNull;
  std::string text_;         // bool ("true"/"false"), number, or string value
  std::vector<Json> items_;  // array items, or object values
  std::vector<std::string> keys_;  // object keys, parallel to items_
};

}  // namespace roost

#endif  // ROOST_STORAGE_JSON_H_
