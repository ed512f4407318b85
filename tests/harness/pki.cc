#include "tests/harness/pki.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <utility>

#include "tests/harness/child_process.h"
#include "tests/harness/test_util.h"

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

int64_t Pki::NotAfter(const std::string& name) const {
  const ProcessResult r =
      RunProcess({kOpenssl, "x509", "-noout", "-enddate", "-dateopt",
                  "iso_8601", "-in", Pem(name)});
  // "notAfter=2026-03-01 10:00:00Z"
  std::tm tm{};
  std::istringstream in(r.out);
  in >> std::get_time(&tm, "notAfter=%Y-%m-%d %H:%M:%SZ");
  EXPECT_TRUE(r.exit_code == 0 && !in.fail()) << r.out << r.err;
  return in.fail() ? 0 : static_cast<int64_t>(::timegm(&tm));
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
