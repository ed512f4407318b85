// The server's --config file: TOML read by toml++, handed to CLI11 as if
// its keys were flags, so that the command line still wins and an unknown
// key is still CLI11's error. What toml++ adds is the line: a syntax error
// and an unknown key both name where they are.
//
// Example:
//   auto config = std::make_shared<TomlConfig>();
//   app.config_formatter(config);
//   ...  // on CLI::ConfigError for key K: config->LineOf(K)
#ifndef ROOST_SERVER_CONFIG_FILE_H_
#define ROOST_SERVER_CONFIG_FILE_H_

#include <CLI/CLI.hpp>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace roost {

// Keys are flags' long names without the dashes; values are strings,
// integers, floats, booleans, or arrays of them (one input each). Tables
// (`[section]`) are refused: the server's flags are flat.
// Not thread-safe (CLI11 calls it once, while parsing).
class TomlConfig : public CLI::Config {
 public:
  // Throws CLI::ConfigError "line L, column C: WHAT" for a document that is
  // not TOML, and "line L: ..." for a value that is no flag's.
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;
  // Writes the app's flags as TOML (CLI11's own writer).
  std::string to_config(const CLI::App* app, bool default_also,
                        bool write_description,
                        std::string prefix) const override;

  // The line of `key` in the last file read, if it was there.
  std::optional<int> LineOf(const std::string& key) const;

 private:
  mutable std::map<std::string, int> lines_;
};

}  // namespace roost

#endif  // ROOST_SERVER_CONFIG_FILE_H_
