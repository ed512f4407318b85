#include "client/security_flags.h"

#include <string>

#include "absl/status/statusor.h"
#include "util/str_cat.h"

namespace roost {

void AddSecurityOptions(CLI::App* app, ChannelSecurity* security) {
  ChannelSecurity& s = *security;
  app->add_flag("--tls", s.tls,
                "Speak TLS, checking the server's certificate against the "
                "system's CAs (implied by the other --tls options)")
      ->group("Security");
  app->add_option("--tls-ca", s.ca,
                  "Speak TLS, checking the server's certificate against "
                  "the CA(s) in this PEM file")
      ->type_name("FILE")
      ->group("Security");
  app->add_option("--tls-cert", s.cert,
                  "Present this PEM client certificate (mutual TLS)")
      ->type_name("FILE")
      ->group("Security");
  app->add_option("--tls-key", s.key, "The PEM private key of --tls-cert")
      ->type_name("FILE")
      ->group("Security");
  app->add_option("--tls-server-name", s.server_name,
                  "The name the server's certificate must hold (default: "
                  "the host of the address)")
      ->type_name("NAME")
      ->group("Security");
  app->add_option("--token", s.token,
                  "Send this bearer token (visible to other users in the "
                  "process list: prefer --token-file or ROOST_TOKEN)")
      ->envname("ROOST_TOKEN")
      ->group("Security");
  app->add_option_function<std::string>(
         "--token-file",
         [&s](const std::string& path) {
           absl::StatusOr<std::string> text =
               ReadFlagFile(path, "--token-file");
           if (!text.ok()) {
             throw CLI::ValidationError(std::string(text.status().message()));
           }
           s.token = text->substr(0, text->find_first_of("\r\n"));
           if (s.token.empty()) {
             throw CLI::ValidationError(
                 StrCat("--token-file ", path, " holds no token"));
           }
         },
         "Send the bearer token in this file (its first line)")
      ->type_name("FILE")
      ->group("Security");
}

}  // namespace roost
