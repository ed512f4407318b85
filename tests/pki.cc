#include "tests/pki.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <utility>

#include "tests/child_process.h"
#include "tests/test_util.h"

namespace roost::testing {
namespace {

constexpr char kOpenssl[] = "/usr/bin/openssl";

}  // namespace

Pki::Pki(std::string dir) : dir_(std::move(dir)) {
  std::filesystem::create_directories(dir_);
}

void Pki::MakeCa(const std::string& name) {
  Run({kOpenssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
       "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", Key(name), "-out",
       Pem(name), "-days", "30", "-subj", "/CN=" + name});
}

void Pki::Issue(const std::string& name, const std::string& ca,
                const std::string& san, int days) {
  const std::string csr = File(name + ".csr");
  const std::string ext = File(name + ".ext");
  Run({kOpenssl, "req", "-newkey", "ec", "-pkeyopt",
       "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", Key(name), "-out",
       csr, "-subj", "/CN=" + name});
  WriteFile(ext, "subjectAltName=" + san + "\n");
  Run({kOpenssl, "x509", "-req", "-in", csr, "-CA", Pem(ca), "-CAkey", Key(ca),
       "-out", Pem(name), "-days", std::to_string(days), "-extfile", ext});
}

std::shared_ptr<grpc::ChannelCredentials> Pki::Credentials(
    const std::vector<std::string>& cas, const std::string& client) const {
  grpc::SslCredentialsOptions options;
  for (const std::string& ca : cas) options.pem_root_certs += ReadFile(Pem(ca));
  if (!client.empty()) {
    options.pem_cert_chain = ReadFile(Pem(client));
    options.pem_private_key = ReadFile(Key(client));
  }
  return grpc::SslCredentials(options);
}

void Pki::Run(const std::vector<std::string>& argv) {
  const ProcessResult r = RunProcess(argv);
  ASSERT_EQ(r.exit_code, 0) << argv[1] << ": " << r.err;
}

}  // namespace roost::testing
