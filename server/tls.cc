#include "server/tls.h"

#include <arpa/inet.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "server/log.h"
#include "server/metrics.h"
#include "util/file.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// PEM files are a few KB; a CA bundle a few hundred KB at most.
constexpr uint64_t kMaxPemBytes = 16 << 20;

// The text of OpenSSL's last error (and clears its queue).
std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no PEM data";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

std::unique_ptr<BIO, BioFree> MemoryBio(const std::string& text) {
  return std::unique_ptr<BIO, BioFree>(
      BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

absl::StatusOr<std::string> ReadPem(const std::string& path,
                                    std::string_view what) {
  absl::StatusOr<std::string> text = ReadRegularFile(path, kMaxPemBytes);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        StrCat(what, " ", path, ": ", text.status().message()));
  }
  return text;
}

}  // namespace

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(
    const TlsFiles& files, unsigned refresh_seconds) {
  if (!files.enabled()) return grpc::InsecureServerCredentials();
  auto provider =
      std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          files.key, files.cert, files.client_ca, refresh_seconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (files.mutual()) {
    options.watch_root_certs();
    options.set_cert_request_type(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

void SslCtxFree::operator()(ssl_ctx_st* ctx) const { SSL_CTX_free(ctx); }

absl::StatusOr<SslContext> MakeSslContext(const TlsFiles& files) {
  ERR_clear_error();
  SslContext ctx(SSL_CTX_new(TLS_server_method()));
  if (ctx == nullptr) {
    return absl::InternalError(StrCat("SSL_CTX_new: ", OpenSslError()));
  }
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), files.cert.c_str()) != 1) {
    return absl::InvalidArgumentError(
        StrCat("--tls-cert ", files.cert, ": ", OpenSslError()));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), files.key.c_str(),
                                  SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx.get()) != 1) {
    return absl::InvalidArgumentError(
        StrCat("--tls-key ", files.key, ": ", OpenSslError()));
  }
  if (files.mutual()) {
    if (SSL_CTX_load_verify_locations(ctx.get(), files.client_ca.c_str(),
                                      nullptr) != 1) {
      return absl::InvalidArgumentError(
          StrCat("--tls-client-ca ", files.client_ca, ": ", OpenSslError()));
    }
    SSL_CTX_set_client_CA_list(
        ctx.get(), SSL_load_client_CA_file(files.client_ca.c_str()));
    SSL_CTX_set_verify(
        ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return ctx;
}

bool IsLoopbackAddress(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") return true;
  in_addr v4;
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

absl::Status TlsWatch::Check(std::string* pem, int64_t* not_after) const {
  absl::StatusOr<std::string> cert = ReadPem(files_.cert, "--tls-cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(files_.key, "--tls-key");
  if (!key.ok()) return key.status();
  ERR_clear_error();
  std::unique_ptr<X509, X509Free> x509(
      PEM_read_bio_X509(MemoryBio(*cert).get(), nullptr, nullptr, nullptr));
  if (x509 == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("--tls-cert ", files_.cert,
               ": not a PEM certificate: ", OpenSslError()));
  }
  std::unique_ptr<EVP_PKEY, KeyFree> pkey(PEM_read_bio_PrivateKey(
      MemoryBio(*key).get(), nullptr, nullptr, nullptr));
  if (pkey == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("--tls-key ", files_.key,
               ": not a PEM private key (or one with a passphrase): ",
               OpenSslError()));
  }
  if (X509_check_private_key(x509.get(), pkey.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(StrCat("--tls-key ", files_.key,
                                             " is not the key of --tls-cert ",
                                             files_.cert));
  }
  std::string ca_text;
  if (files_.mutual()) {
    absl::StatusOr<std::string> ca =
        ReadPem(files_.client_ca, "--tls-client-ca");
    if (!ca.ok()) return ca.status();
    ca_text = *ca;
    std::unique_ptr<X509, X509Free> first(
        PEM_read_bio_X509(MemoryBio(*ca).get(), nullptr, nullptr, nullptr));
    if (first == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("--tls-client-ca ", files_.client_ca,
                 ": holds no PEM certificate: ", OpenSslError()));
    }
  }
  // The end of validity as seconds since the epoch.
  int days = 0;
  int seconds = 0;
  ASN1_TIME* epoch = ASN1_TIME_set(nullptr, 0);
  ASN1_TIME_diff(&days, &seconds, epoch, X509_get0_notAfter(x509.get()));
  ASN1_TIME_free(epoch);
  *not_after = int64_t{days} * 86400 + seconds;
  *pem = StrCat(*key, "\n", *cert, "\n", ca_text);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TlsWatch>> TlsWatch::Start(
    const TlsFiles& files) {
  auto watch = std::unique_ptr<TlsWatch>(new TlsWatch(files));
  std::string pem;
  int64_t not_after = 0;
  if (absl::Status s = watch->Check(&pem, &not_after); !s.ok()) return s;
  watch->not_after_ = not_after;
  watch->last_pem_ = std::move(pem);
  return watch;
}

bool TlsWatch::Refresh() {
  std::string pem;
  int64_t not_after = 0;
  const absl::Status s = Check(&pem, &not_after);
  if (s.ok() && pem == last_pem_) return false;
  if (!s.ok()) {
    // Logged once per failure, not every second while it lasts.
    if (last_pem_.empty()) return false;
    last_pem_.clear();
    reloads_failed_.fetch_add(1, std::memory_order_relaxed);
    Log("TLS files changed, but ", s.message(),
        "; the last good certificate stays in use until they are right");
    return false;
  }
  last_pem_ = std::move(pem);
  not_after_ = not_after;
  reloads_ok_.fetch_add(1, std::memory_order_relaxed);
  Log("TLS files reloaded: ", files_.cert, " (valid until ", not_after,
      " s since the epoch)");
  return true;
}

void TlsWatch::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  AddScalar(out, "roost_tls_certificate_expiry_timestamp_seconds",
            "When the serving certificate (--tls-cert) stops being valid, in "
            "seconds since the epoch.",
            prometheus::MetricType::Gauge,
            static_cast<double>(not_after_.load()));
  AddReloads(out, "roost_tls_reloads_total",
             "Changes of --tls-cert/--tls-key seen, by result (error: a "
             "certificate and key that do not parse or do not match; the last "
             "good pair stays).",
             reloads_ok_.load(), reloads_failed_.load());
}

}  // namespace roost
