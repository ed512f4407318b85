// A throwaway PKI in a directory, for the TLS tests: CAs and certificates
// signed by them, made by the openssl command, and gRPC credentials that
// trust them.
//
// Example:
//   Pki pki(scratch.File("pki"));
//   pki.MakeCa("ca");
//   pki.Issue("server", "ca", "DNS:localhost,IP:127.0.0.1");
//   ... --tls-cert pki.Pem("server") --tls-key pki.Key("server") ...
//   server.UseCredentials(pki.Credentials({"ca"}));
#ifndef ROOST_TESTS_HARNESS_PKI_H_
#define ROOST_TESTS_HARNESS_PKI_H_

#include <grpcpp/security/credentials.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace roost::testing {

// NAME.pem and NAME.key are a certificate and its key. A failed openssl
// command records a test failure.
class Pki {
 public:
  explicit Pki(std::string dir);

  // A self-signed CA.
  void MakeCa(const std::string& name);

  // A certificate for `name` (its CN) with subject alternative names `san`
  // ("DNS:localhost,IP:127.0.0.1"), signed by `ca`, valid for `days` (-1:
  // expired yesterday).
  void Issue(const std::string& name, const std::string& ca,
             const std::string& san, int days = 30);

  // When `name`'s certificate stops being valid, in seconds since the
  // epoch (0, with a test failure, when openssl cannot say).
  int64_t NotAfter(const std::string& name) const;

  std::string Pem(const std::string& name) const { return File(name + ".pem"); }
  std::string Key(const std::string& name) const { return File(name + ".key"); }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }

  // TLS credentials trusting the CAs `cas` (their PEMs concatenated),
  // presenting `client`'s certificate unless it is empty.
  std::shared_ptr<grpc::ChannelCredentials> Credentials(
      const std::vector<std::string>& cas,
      const std::string& client = "") const;

 private:
  static void Run(const std::vector<std::string>& argv);

  const std::string dir_;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_PKI_H_
