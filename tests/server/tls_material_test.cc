// ReadTlsMaterial (server/tls.h), in process: which TLS files roost takes,
// what it hands gRPC and /metrics from them, and the one-line reason it
// gives for the ones it refuses. End to end, with a running server, is
// server_tls_test.cc's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "server/tls.h"
#include "tests/harness/child_process.h"
#include "tests/harness/pki.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class TlsMaterialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_.MakeCa("ca");
    pki_.Issue("server", "ca", "DNS:localhost");
    pki_.Issue("other", "ca", "DNS:localhost");
  }

  // A file of the scratch directory holding `text`.
  std::string Put(const std::string& name, const std::string& text) {
    const std::string path = scratch_.File(name);
    WriteFile(path, text);
    return path;
  }

  // The server's certificate and key, and `ca` as the client CA.
  TlsFiles Files(const std::string& ca = "") const {
    return Pair(pki_.Pem("server"), pki_.Key("server"), ca);
  }
  static TlsFiles Pair(const std::string& cert, const std::string& key,
                       const std::string& ca = "") {
    return {.cert = cert, .key = key, .client_ca = ca};
  }

  ScratchDir scratch_;
  Pki pki_{scratch_.File("pki")};
};

TEST_F(TlsMaterialTest, AGoodPairIsTakenAsOpenSslWritesIt) {
  absl::StatusOr<TlsMaterial> m = ReadTlsMaterial(Files(pki_.Pem("ca")));
  ASSERT_OK(m.status());
  EXPECT_THAT(m->key, StartsWith("-----BEGIN PRIVATE KEY-----\n"));
  EXPECT_THAT(m->cert_chain, StartsWith("-----BEGIN CERTIFICATE-----\n"));
  EXPECT_EQ(m->client_ca, ReadFile(pki_.Pem("ca")));
  EXPECT_TRUE(m->mutual());
  EXPECT_EQ(m->not_after, pki_.NotAfter("server"));
  EXPECT_OK(MakeSslContext(*m).status());
  // Without a client CA, none.
  m = ReadTlsMaterial(Files());
  ASSERT_OK(m.status());
  EXPECT_FALSE(m->mutual());
  EXPECT_OK(MakeSslContext(*m).status());
}

// What gRPC is handed is what roost parsed: text around the PEM blocks
// (openssl pkcs12's "Bag Attributes", comments) is left out, and a file
// that holds both the key and the certificate serves as either.
TEST_F(TlsMaterialTest, OnlyTheParsedBlocksAreHandedOn) {
  absl::StatusOr<TlsMaterial> clean = ReadTlsMaterial(Files());
  ASSERT_OK(clean.status());
  const std::string cert = ReadFile(pki_.Pem("server"));
  const std::string key = ReadFile(pki_.Key("server"));
  const std::string annotated =
      Put("annotated.pem", "Bag Attributes\n    friendlyName: server\n" + cert +
                               "a comment after the block\n");
  absl::StatusOr<TlsMaterial> m =
      ReadTlsMaterial(Pair(annotated, pki_.Key("server")));
  ASSERT_OK(m.status());
  EXPECT_EQ(*m, *clean);
  const std::string both = Put("both.pem", cert + key);
  m = ReadTlsMaterial(Pair(both, both));
  ASSERT_OK(m.status());
  EXPECT_EQ(*m, *clean);
}

TEST_F(TlsMaterialTest, BadFilesAreRefusedWithTheFileAndTheReason) {
  const std::string cert = ReadFile(pki_.Pem("server"));
  const std::string ca = ReadFile(pki_.Pem("ca"));
  const std::string fifo = scratch_.File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string encrypted = scratch_.File("encrypted.key");
  ASSERT_EQ(
      RunProcess({"/usr/bin/openssl", "pkey", "-in", pki_.Key("server"),
                  "-aes256", "-passout", "pass:secret", "-out", encrypted})
          .exit_code,
      0);
  const struct {
    const char* what;
    TlsFiles files;
    std::string message;
  } cases[] = {
      {"garbage", Pair(Put("garbage.crt", "garbage\n"), pki_.Key("server")),
       ": not a PEM certificate (no CERTIFICATE block in it)"},
      {"half a certificate",
       Pair(Put("half.crt", cert.substr(0, cert.size() / 2)),
            pki_.Key("server")),
       "half.crt: PEM block 1 is cut short or malformed"},
      {"a chain cut in its second certificate",
       Pair(Put("cut.crt", cert + ca.substr(0, ca.size() / 2)),
            pki_.Key("server")),
       "cut.crt: PEM block 2 is cut short or malformed"},
      {"another certificate's key", Pair(pki_.Pem("server"), pki_.Key("other")),
       "--tls-key " + pki_.Key("other") + " is not the key of --tls-cert " +
           pki_.Pem("server")},
      {"a key with a passphrase", Pair(pki_.Pem("server"), encrypted),
       "--tls-key " + encrypted +
           ": not a PEM private key (or one with a passphrase)"},
      {"a FIFO as the certificate", Pair(fifo, pki_.Key("server")),
       "--tls-cert " + fifo + ": cannot open " + fifo + ": not a regular file"},
      {"a FIFO as the key", Pair(pki_.Pem("server"), fifo),
       "--tls-key " + fifo + ": cannot open " + fifo + ": not a regular file"},
      {"a FIFO as the client CA", Files(fifo),
       "--tls-client-ca " + fifo + ": cannot open " + fifo +
           ": not a regular file"},
      {"a certificate of 17 MiB",
       Pair(Put("huge.crt", cert + std::string(17 << 20, '\n')),
            pki_.Key("server")),
       "huge.crt is larger than 16777216 bytes"},
      {"a client CA bundle of a key only", Files(pki_.Key("ca")),
       "--tls-client-ca " + pki_.Key("ca") + ": holds no PEM certificate"},
      {"a client CA bundle cut in its second certificate",
       Files(Put("cut-ca.pem", ca + ca.substr(0, ca.size() / 2))),
       "cut-ca.pem: PEM block 2 is cut short or malformed"},
      {"a missing client CA bundle", Files(scratch_.File("absent.pem")),
       "--tls-client-ca " + scratch_.File("absent.pem") + ": cannot open"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(ReadTlsMaterial(c.files).status().message(),
                HasSubstr(c.message))
        << c.what;
  }
}

}  // namespace
}  // namespace roost::testing
