// roost-server's "Security" flags: TLS on every listener (tls.h), mutual
// TLS, the admin service's exposure and the access policy
// (access_policy.h). docs/operations/security.md, "Security", says how they go
// together.
//
// Example config file:
//   tls-cert = "/etc/roost/server.crt"
//   tls-key = "/etc/roost/server.key"
//   access-policy = "/etc/roost/policy.json"
#ifndef ROOST_SERVER_SECURITY_OPTIONS_H_
#define ROOST_SERVER_SECURITY_OPTIONS_H_

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace roost {

struct SecurityOptions {
  // TLS (docs/operations/security.md, "Security"). With a certificate and key
  // (PEM) every listener speaks TLS only; with a client CA too, clients must
  // present a certificate it signed (mutual TLS). The files are re-read
  // when they change, every `tls_refresh_seconds`. The defaults are empty
  // (plaintext) and 60 seconds.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  uint32_t tls_refresh_seconds = 60;
  // /metrics speaks TLS too when the others do. The default value is true.
  bool metrics_tls = true;
  // The admin service on a non-loopback address requires mutual TLS unless
  // this is set (and loudly logged). The default value is false.
  bool admin_allow_insecure_remote = false;
  // Who may read which tables, and who may use the admin service: a JSON
  // policy file, re-read when it changes. Empty: everyone who can connect
  // may read every table. The default value is empty.
  std::string access_policy;
};

// Adds the "Security" group (--tls-cert, --tls-key, --tls-client-ca,
// --tls-refresh, --metrics-tls, --admin-allow-insecure-remote,
// --access-policy) to `app`, bound to `*options`. ParseServerOptions
// checks which of them need which once the command line is parsed.
void AddSecurityFlags(CLI::App& app, SecurityOptions* options);

}  // namespace roost

#endif  // ROOST_SERVER_SECURITY_OPTIONS_H_
