#include "server/server_options.h"

#include <fmt/format.h>
#include <sysexits.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string_view>

#include "server/config_file.h"
#include "server/repository_options.h"
#include "util/build_info.h"
#include "util/cli.h"
#include "util/str_cat.h"

namespace roost {

std::optional<int> ParseServerOptions(int argc, char** argv,
                                      ServerOptions* options) {
  constexpr int kExitUsage = EX_USAGE;
  CLI::App app(
      "roost-server: serves the tables published under a data directory "
      "over gRPC (roost.v1.Lookup), picking up new versions without a "
      "restart.\n\nFlags may also come from a TOML file given with "
      "--config (e.g. `keep-versions = 3`); the command line wins. Sizes in "
      "bytes take k, M and G (powers of 1024): --max-message-size 64M. "
      "Signals: SIGTERM or SIGINT drains and exits 0. Exit codes: 0 stopped "
      "by a signal, 1 cannot start (data directory, port, TLS files), 64 "
      "bad usage.",
      "roost-server");
  app.footer(
      "Examples:\n"
      "  roost-server --data-dir /srv/roost\n"
      "  roost-server --data-dir /srv/roost --listen 0.0.0.0:50051 "
      "--metrics-listen 0.0.0.0:9464 --keep-versions 3\n"
      "  roost-server --config /etc/roost/server.toml --drain-period 0\n"
      "  roost-server --data-dir /var/lib/roost --repository "
      "s3://tables/prod --shard 2 --listen 0.0.0.0:50051\n"
      "  roost-server --data-dir /srv/roost --tls-cert server.crt --tls-key "
      "server.key --tls-client-ca clients-ca.crt\n"
      "See docs/operations/reference.md for every flag at length.");
  app.set_config("--config", "",
                 "Read flags from this TOML file (flag = value)")
      ->type_name("FILE");
  AddVersionFlag(app, VersionLine("roost-server"));
  auto config = std::make_shared<TomlConfig>();
  app.config_formatter(config);
  app.option_defaults()->always_capture_default();
  // A misspelt key in the config file is an error, not silently ignored.
  app.allow_config_extras(false);
  ServerOptions& o = *options;
  std::string load_mode = "mmap";
  // --help lists the groups in the order their first flag is added, each
  // group's flags in the order its function adds them.
  AddTableFlags(app, &o, &load_mode);
  AddListenerFlags(app, &o);
  AddRepositoryFlags(app, &o.repository);
  AddLimitFlags(app, &o);
  AddConnectionFlags(app, &o);
  AddShutdownFlags(app, &o);
  AddMetricsFlags(app, &o);
  AddSecurityFlags(app, &o);
  // --help shows each flag's type and default; the ranges that the checks
  // enforce are in the flags' own text where they are not obvious (and in
  // docs/operations/reference.md), not repeated after every type. Every
  // fractional flag is a duration, every other number a count unless it says
  // BYTES.
  for (CLI::Option* option : app.get_options()) {
    try {
      for (int i = 0;; ++i) option->get_validator(i)->description("");
    } catch (const CLI::OptionNotFound&) {  // CLI11: past the last check
    }
    if (option->get_type_name() == "FLOAT") option->type_name("SECONDS");
    if (option->get_type_name() == "UINT") option->type_name("N");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // CLI11 says "INI was not able to parse KEY" of a key it does not know:
    // name the key, the file and the line instead.
    constexpr std::string_view kExtra = "INI was not able to parse ";
    const std::string_view what = e.what();
    const std::string file = app["--config"]->as<std::string>();
    if (what.substr(0, kExtra.size()) == kExtra) {
      std::string key(what.substr(kExtra.size()));
      std::string hint;
      std::string dashed = key;
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      if (dashed != key && app.get_option_no_throw("--" + dashed) != nullptr) {
        hint = StrCat(" (did you mean ", dashed, "?)");
      }
      const std::optional<int> line = config->LineOf(key);
      fmt::print(stderr, "roost-server: unknown key \"{}\" in {}{}{}\n", key,
                 file, line ? StrCat(" line ", *line) : "", hint);
    } else {
      fmt::print(stderr, "roost-server: {}: {}\n", file, e.what());
    }
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e);
  }
  auto mode = ParseLoadMode(load_mode);
  if (!mode.ok()) {
    fmt::print(stderr, "roost-server: --load-mode: {}\n",
               std::string(mode.status().message()));
    return kExitUsage;
  }
  o.load_mode = *mode;
  const auto usage = [](std::string_view message) {
    fmt::print(stderr,
               "roost-server: {}\nRun with --help for more information.\n",
               message);
    return kExitUsage;
  };
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    return usage("--tls-cert and --tls-key go together");
  }
  if (!o.tls_client_ca.empty() && o.tls_cert.empty()) {
    return usage("--tls-client-ca needs --tls-cert and --tls-key");
  }
  return std::nullopt;
}

}  // namespace roost
