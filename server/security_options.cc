#include "server/security_options.h"

#include <CLI/CLI.hpp>

namespace roost {

void AddSecurityFlags(CLI::App& app, SecurityOptions* o) {
  // --help lists each group's flags in the order they are added here.
  app.option_defaults()->group("Security");
  app.add_option("--tls-cert", o->tls_cert,
                 "Serve TLS on every listener with this PEM certificate "
                 "(chain, leaf first); needs --tls-key")
      ->type_name("FILE")
      ->group("Security");
  app.add_option("--tls-key", o->tls_key,
                 "The PEM private key of --tls-cert (no passphrase)")
      ->type_name("FILE")
      ->group("Security");
  app.add_option("--tls-client-ca", o->tls_client_ca,
                 "Mutual TLS: clients must present a certificate signed by "
                 "a CA in this PEM bundle")
      ->type_name("FILE")
      ->group("Security");
  app.add_option("--tls-refresh", o->tls_refresh_seconds,
                 "Re-read the certificate, key and client CA every SECONDS "
                 "(rotation without a restart)")
      ->type_name("SECONDS")
      ->check(CLI::Range(1u, 86400u))
      ->group("Security");
  app.add_option("--metrics-tls", o->metrics_tls,
                 "With --tls-cert, serve /metrics over TLS too (false keeps "
                 "it plaintext)")
      ->group("Security");
  app.add_flag("--admin-allow-insecure-remote", o->admin_allow_insecure_remote,
               "Allow the admin service on a non-loopback address without "
               "mutual TLS (anyone who reaches it can roll tables back)")
      ->group("Security");
  app.add_option("--access-policy", o->access_policy,
                 "JSON file of which clients (certificate names, bearer "
                 "tokens) may read which tables and use the admin service; "
                 "re-read when it changes")
      ->type_name("FILE")
      ->group("Security");
}

}  // namespace roost
