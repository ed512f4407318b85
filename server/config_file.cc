#include "server/config_file.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <iterator>

#include "util/str_cat.h"

namespace roost {
namespace {

// One input for CLI11 from a scalar; nullopt for a table or an array.
std::optional<std::string> Scalar(const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return fmt::format("{}", i->get());
  if (const auto* f = node.as_floating_point()) {
    return fmt::format("{}", f->get());
  }
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  return std::nullopt;
}

}  // namespace

std::vector<CLI::ConfigItem> TomlConfig::from_config(
    std::istream& input) const {
  lines_.clear();
  const std::string text(std::istreambuf_iterator<char>(input), {});
  toml::table table;
  try {
    table = toml::parse(text);
  } catch (const toml::parse_error& e) {
    throw CLI::ConfigError(StrCat("line ", e.source().begin.line, ", column ",
                                  e.source().begin.column, ": ",
                                  e.description()));
  }
  std::vector<CLI::ConfigItem> items;
  for (const auto& [key, node] : table) {
    const int line = static_cast<int>(key.source().begin.line);
    lines_[std::string(key.str())] = line;
    CLI::ConfigItem item;
    item.name = std::string(key.str());
    if (const auto* array = node.as_array()) {
      for (const toml::node& element : *array) {
        std::optional<std::string> value = Scalar(element);
        if (!value) {
          throw CLI::ConfigError(StrCat("line ", line, ": ", item.name,
                                        " holds an array or a table; a "
                                        "flag takes values"));
        }
        item.inputs.push_back(std::move(*value));
      }
    } else if (std::optional<std::string> value = Scalar(node)) {
      item.inputs.push_back(std::move(*value));
    } else {
      throw CLI::ConfigError(StrCat("line ", line, ": [", item.name,
                                    "] is a table; the server's keys are "
                                    "flat (key = value)"));
    }
    items.push_back(std::move(item));
  }
  return items;
}

std::string TomlConfig::to_config(const CLI::App* app, bool default_also,
                                  bool write_description,
                                  std::string prefix) const {
  return CLI::ConfigTOML().to_config(app, default_also, write_description,
                                     std::move(prefix));
}

std::optional<int> TomlConfig::LineOf(const std::string& key) const {
  auto it = lines_.find(key);
  if (it == lines_.end()) return std::nullopt;
  return it->second;
}

}  // namespace roost
