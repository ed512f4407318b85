#include "util/json.h"

#include "util/str_cat.h"

namespace roost {

absl::StatusOr<Json> ParseJson(std::string_view text) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(StrCat("bad JSON: ", e.what()));
  }
}

std::string DumpJson(const OrderedJson& json, bool indent) {
  return json.dump(indent ? 2 : -1, ' ', /*ensure_ascii=*/false,
                   OrderedJson::error_handler_t::replace);
}

namespace {
const Json* Member(const Json& json, std::string_view key) {
  if (!json.is_object()) return nullptr;
  auto it = json.find(key);
  return it == json.end() ? nullptr : &*it;
}
}  // namespace

std::optional<uint64_t> JsonUint64(const Json& json, std::string_view key) {
  const Json* m = Member(json, key);
  if (m == nullptr || !m->is_number_unsigned()) return std::nullopt;
  return m->get<uint64_t>();
}

std::optional<std::string> JsonString(const Json& json, std::string_view key) {
  const Json* m = Member(json, key);
  if (m == nullptr || !m->is_string()) return std::nullopt;
  return m->get<std::string>();
}

}  // namespace roost
