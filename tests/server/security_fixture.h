// What the security suites share (server_tls_test.cc and
// server_access_policy_test.cc): a fixture with a PKI of two CAs and
// certificates for the server and clients, roost-server's TLS flags, and
// clients that make one Get (GetOver) or fetch /metrics with curl.
#ifndef ROOST_TESTS_SERVER_SECURITY_FIXTURE_H_
#define ROOST_TESTS_SERVER_SECURITY_FIXTURE_H_

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/harness/pki.h"
#include "tests/harness/server_harness.h"

namespace roost::testing {

inline constexpr char kCurl[] = "/usr/bin/curl";

// The SHA-256 of `text` in hex, as an access policy's token_sha256.
inline std::string Sha256Hex(const std::string& text) {
  unsigned char hash[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
         hash);
  std::string hex;
  for (unsigned char c : hash) {
    static constexpr char kDigits[] = "0123456789abcdef";
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

// One Get on its own channel, optionally with a bearer token.
inline grpc::Status GetOver(
    const std::string& address,
    std::shared_ptr<grpc::ChannelCredentials> credentials,
    const std::string& table, const std::string& key,
    const std::string& token = "", v1::GetResponse* response = nullptr) {
  auto stub = v1::Lookup::NewStub(CreateTestChannel(address, credentials));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  if (!token.empty()) context.AddMetadata("authorization", token);
  v1::GetRequest request;
  request.set_table(table);
  request.set_key(key);
  v1::GetResponse ignored;
  return stub->Get(&context, request, response ? response : &ignored);
}

class SecurityTest : public ServerFixture {
 protected:
  void SetUp() override {
    pki_.MakeCa("ca");
    pki_.MakeCa("other-ca");
    pki_.Issue("server", "ca", "DNS:localhost,IP:127.0.0.1");
    pki_.Issue("client-a", "ca", "DNS:client-a");
    pki_.Issue("client-b", "ca", "DNS:client-b");
    pki_.Issue("stranger", "other-ca", "DNS:client-a");
    pki_.Issue("expired", "ca", "DNS:client-a", -1);
    ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  }

  // The harness's flags with TLS (mutual with `mutual`), and `more`.
  ServerFlags TlsFlags(bool mutual, std::vector<std::string> more = {}) {
    ServerFlags flags = Flags();
    flags.extra = {"--tls-cert", pki_.Pem("server"), "--tls-key",
                   pki_.Key("server")};
    if (mutual) {
      flags.extra.insert(flags.extra.end(),
                         {"--tls-client-ca", pki_.Pem("ca")});
    }
    flags.extra.insert(flags.extra.end(), more.begin(), more.end());
    return flags;
  }

  // curl's exit code and output fetching https://127.0.0.1:PORT/metrics
  // trusting `ca`, as `client` (or none).
  ProcessResult Curl(int port, const std::string& ca,
                     const std::string& client = "",
                     const std::string& scheme = "https") {
    std::vector<std::string> argv = {kCurl, "-sS", "--max-time", "10"};
    if (!ca.empty()) argv.insert(argv.end(), {"--cacert", pki_.Pem(ca)});
    if (!client.empty()) {
      argv.insert(argv.end(),
                  {"--cert", pki_.Pem(client), "--key", pki_.Key(client)});
    }
    argv.push_back(scheme + "://127.0.0.1:" + std::to_string(port) +
                   "/metrics");
    return RunProcess(argv);
  }

  // A directory of the pairs of `names` (certificates issued by pki_), each
  // NAME/tls.crt and NAME/tls.key, and current, a link to the first: the
  // files a server is given as DIR/current/tls.crt and DIR/current/tls.key.
  std::string RotatableTlsFiles(const std::vector<std::string>& names) {
    const std::string dir = scratch_.File("certs");
    for (const std::string& name : names) {
      std::filesystem::create_directories(dir + "/" + name);
      std::filesystem::copy_file(pki_.Pem(name), dir + "/" + name + "/tls.crt");
      std::filesystem::copy_file(pki_.Key(name), dir + "/" + name + "/tls.key");
    }
    std::filesystem::create_directory_symlink(names.front(), dir + "/current");
    return dir;
  }
  // Points DIR/current at `name`'s pair in one rename, as Kubernetes swaps
  // a mounted secret's directory link.
  static void RotateTo(const std::string& dir, const std::string& name) {
    std::filesystem::create_directory_symlink(name, dir + "/next");
    std::filesystem::rename(dir + "/next", dir + "/current");
  }

  Pki pki_{scratch_.File("pki")};
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_SERVER_SECURITY_FIXTURE_H_
