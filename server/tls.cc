#include "server/tls.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>

#include "server/certificate_feed.h"
#include "server/log.h"
#include "server/metrics.h"
#include "util/file.h"
#include "util/str_cat.h"
#include "util/timestamp.h"

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
struct OpenSslFree {
  void operator()(void* p) const { OPENSSL_free(p); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Bio MemoryBio(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// What a memory BIO holds.
std::string Contents(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return size > 0 ? std::string(data, static_cast<size_t>(size)) : "";
}

absl::StatusOr<std::string> ReadPem(const std::string& path,
                                    std::string_view flag) {
  absl::StatusOr<std::string> text = ReadRegularFile(path, kMaxPemBytes);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        StrCat(flag, " ", path, ": ", text.status().message()));
  }
  return text;
}

// A certificate, and whether it came as a TRUSTED CERTIFICATE (with
// OpenSSL's trust settings, which are kept).
struct Certificate {
  std::unique_ptr<X509, X509Free> x509;
  bool trusted = false;
};

// The certificates of a PEM text, in order. Every PEM block must be whole
// and every certificate block must parse; blocks of other types (the key,
// in a file that holds both) are skipped.
absl::StatusOr<std::vector<Certificate>> ParseCertificates(
    const std::string& text) {
  Bio bio = MemoryBio(text);
  std::vector<Certificate> out;
  ERR_clear_error();
  for (int block = 1;; ++block) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long size = 0;
    if (PEM_read_bio(bio.get(), &name, &header, &data, &size) != 1) {
      const unsigned long code = ERR_peek_last_error();
      if (ERR_GET_LIB(code) == ERR_LIB_PEM &&
          ERR_GET_REASON(code) == PEM_R_NO_START_LINE) {
        ERR_clear_error();  // no further block
        return out;
      }
      return absl::InvalidArgumentError(StrCat(
          "PEM block ", block, " is cut short or malformed: ", OpenSslError()));
    }
    std::unique_ptr<char, OpenSslFree> free_name(name);
    std::unique_ptr<char, OpenSslFree> free_header(header);
    std::unique_ptr<unsigned char, OpenSslFree> free_data(data);
    const std::string_view type(name);
    const bool trusted = type == PEM_STRING_X509_TRUSTED;
    if (!trusted && type != PEM_STRING_X509 && type != PEM_STRING_X509_OLD) {
      continue;
    }
    const unsigned char* p = data;
    Certificate cert{.x509 = decltype(Certificate::x509)(
                         trusted ? d2i_X509_AUX(nullptr, &p, size)
                                 : d2i_X509(nullptr, &p, size)),
                     .trusted = trusted};
    if (cert.x509 == nullptr || p != data + size) {
      return absl::InvalidArgumentError(
          StrCat("certificate ", out.size() + 1, " (PEM block ", block,
                 ") does not parse: ", OpenSslError()));
    }
    out.push_back(std::move(cert));
  }
}

// Refuses a key with a passphrase instead of asking a terminal for one.
int NoPassphrase(char*, int, int, void*) { return -1; }

absl::StatusOr<Key> ParseKey(const std::string& text) {
  ERR_clear_error();
  Key key(PEM_read_bio_PrivateKey(MemoryBio(text).get(), nullptr, NoPassphrase,
                                  nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(StrCat(
        "not a PEM private key (or one with a passphrase): ", OpenSslError()));
  }
  return key;
}

std::string PemOf(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr,
                           nullptr);
  return Contents(bio.get());
}

std::string PemOf(const std::vector<Certificate>& certs) {
  Bio bio(BIO_new(BIO_s_mem()));
  for (const Certificate& c : certs) {
    if (c.trusted) {
      PEM_write_bio_X509_AUX(bio.get(), c.x509.get());
    } else {
      PEM_write_bio_X509(bio.get(), c.x509.get());
    }
  }
  return Contents(bio.get());
}

// The end of a certificate's validity as seconds since the epoch.
int64_t NotAfter(X509* x509) {
  int days = 0;
  int seconds = 0;
  ASN1_TIME* epoch = ASN1_TIME_set(nullptr, 0);
  ASN1_TIME_diff(&days, &seconds, epoch, X509_get0_notAfter(x509));
  ASN1_TIME_free(epoch);
  return int64_t{days} * 86400 + seconds;
}

// "2026-12-01T00:00:00Z" for the log.
std::string Date(int64_t seconds) {
  return FormatRfc3339(std::clamp<int64_t>(seconds, 0, kMaxTimestamp));
}

}  // namespace

absl::StatusOr<TlsMaterial> ReadTlsMaterial(const TlsFiles& files) {
  absl::StatusOr<std::string> cert_text = ReadPem(files.cert, "--tls-cert");
  if (!cert_text.ok()) return cert_text.status();
  absl::StatusOr<std::string> key_text = ReadPem(files.key, "--tls-key");
  if (!key_text.ok()) return key_text.status();
  absl::StatusOr<std::vector<Certificate>> chain =
      ParseCertificates(*cert_text);
  if (!chain.ok()) {
    return absl::InvalidArgumentError(
        StrCat("--tls-cert ", files.cert, ": ", chain.status().message()));
  }
  if (chain->empty()) {
    return absl::InvalidArgumentError(
        StrCat("--tls-cert ", files.cert,
               ": not a PEM certificate (no CERTIFICATE block in it)"));
  }
  absl::StatusOr<Key> key = ParseKey(*key_text);
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        StrCat("--tls-key ", files.key, ": ", key.status().message()));
  }
  if (X509_check_private_key(chain->front().x509.get(), key->get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(StrCat(
        "--tls-key ", files.key, " is not the key of --tls-cert ", files.cert));
  }
  TlsMaterial material;
  if (files.mutual()) {
    absl::StatusOr<std::string> ca_text =
        ReadPem(files.client_ca, "--tls-client-ca");
    if (!ca_text.ok()) return ca_text.status();
    absl::StatusOr<std::vector<Certificate>> cas = ParseCertificates(*ca_text);
    if (!cas.ok()) {
      return absl::InvalidArgumentError(StrCat(
          "--tls-client-ca ", files.client_ca, ": ", cas.status().message()));
    }
    if (cas->empty()) {
      return absl::InvalidArgumentError(StrCat(
          "--tls-client-ca ", files.client_ca, ": holds no PEM certificate"));
    }
    material.client_ca = PemOf(*cas);
  }
  material.key = PemOf(key->get());
  material.cert_chain = PemOf(*chain);
  material.not_after = NotAfter(chain->front().x509.get());
  return material;
}

void SslCtxFree::operator()(ssl_ctx_st* ctx) const { SSL_CTX_free(ctx); }

absl::StatusOr<SslContext> MakeSslContext(const TlsMaterial& material) {
  ERR_clear_error();
  SslContext ctx(SSL_CTX_new(TLS_server_method()));
  if (ctx == nullptr) {
    return absl::InternalError(StrCat("SSL_CTX_new: ", OpenSslError()));
  }
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  absl::StatusOr<std::vector<Certificate>> chain =
      ParseCertificates(material.cert_chain);
  if (!chain.ok()) return chain.status();
  absl::StatusOr<Key> key = ParseKey(material.key);
  if (!key.ok()) return key.status();
  bool ok = !chain->empty() &&
            SSL_CTX_use_certificate(ctx.get(), chain->front().x509.get()) == 1;
  for (size_t i = 1; ok && i < chain->size(); ++i) {
    ok = SSL_CTX_add1_chain_cert(ctx.get(), (*chain)[i].x509.get()) == 1;
  }
  ok = ok && SSL_CTX_use_PrivateKey(ctx.get(), key->get()) == 1 &&
       SSL_CTX_check_private_key(ctx.get()) == 1;
  if (!ok) {
    return absl::InvalidArgumentError(
        StrCat("certificate and key: ", OpenSslError()));
  }
  if (material.mutual()) {
    absl::StatusOr<std::vector<Certificate>> cas =
        ParseCertificates(material.client_ca);
    if (!cas.ok()) return cas.status();
    X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
    STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
    for (const Certificate& ca : *cas) {
      X509_STORE_add_cert(store, ca.x509.get());
      sk_X509_NAME_push(names,
                        X509_NAME_dup(X509_get_subject_name(ca.x509.get())));
    }
    SSL_CTX_set_client_CA_list(ctx.get(), names);  // takes `names`
    SSL_CTX_set_verify(
        ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  ERR_clear_error();
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

TlsWatch::TlsWatch(TlsFiles files, TlsMaterial material,
                   std::unique_ptr<CertificateFeed> feed)
    : files_(std::move(files)),
      material_(std::move(material)),
      feed_(std::move(feed)) {
  not_after_ = material_.not_after;
}

TlsWatch::~TlsWatch() = default;

absl::StatusOr<std::unique_ptr<TlsWatch>> TlsWatch::Start(
    const TlsFiles& files) {
  absl::StatusOr<TlsMaterial> material = ReadTlsMaterial(files);
  if (!material.ok()) return material.status();
  absl::StatusOr<std::unique_ptr<CertificateFeed>> feed =
      CertificateFeed::Create(*material);
  if (!feed.ok()) return feed.status();
  return std::unique_ptr<TlsWatch>(
      new TlsWatch(files, std::move(*material), std::move(*feed)));
}

std::shared_ptr<grpc::ServerCredentials> TlsWatch::Credentials() const {
  return feed_->Credentials();
}

bool TlsWatch::Refresh() {
  absl::StatusOr<TlsMaterial> read = ReadTlsMaterial(files_);
  if (read.ok() && *read == material_) {
    if (!error_.empty()) {
      error_.clear();
      rejected_ = false;
      Log("TLS files are right again; the certificate in use (valid until ",
          Date(material_.not_after), ") did not change");
    }
    return false;
  }
  absl::Status s = read.status();
  // A feed that fails to take the new pair (out of memory) keeps the old.
  if (s.ok()) s = feed_->Publish(*read);
  if (!s.ok()) {
    rejected_ = true;
    // Logged and counted once, not every --tls-refresh while it lasts.
    if (s.message() == error_) return false;
    error_ = std::string(s.message());
    reloads_failed_.fetch_add(1, std::memory_order_relaxed);
    Log("TLS files changed, but ", error_,
        "; the last good TLS files stay in use until these are right");
    return false;
  }
  error_.clear();
  rejected_ = false;
  material_ = std::move(*read);
  not_after_ = material_.not_after;
  reloads_ok_.fetch_add(1, std::memory_order_relaxed);
  Log("TLS files reloaded: ", files_.cert, " (valid until ",
      Date(material_.not_after), ") is in use for new connections");
  return true;
}

void TlsWatch::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  AddScalar(out, "roost_tls_certificate_expiry_timestamp_seconds",
            "When the certificate in use stops being valid, in seconds since "
            "the epoch (the last good --tls-cert, which is not the file on "
            "disk while that is refused).",
            prometheus::MetricType::Gauge,
            static_cast<double>(not_after_.load()));
  AddScalar(out, "roost_tls_files_rejected",
            "1 while the TLS files on disk are refused (bad, half written, "
            "a key that is not the certificate's) and the last good pair "
            "stays in use, else 0.",
            prometheus::MetricType::Gauge, rejected_.load() ? 1 : 0);
  AddReloads(out, "roost_tls_reloads_total",
             "Changes of --tls-cert, --tls-key and --tls-client-ca seen, by "
             "result (error: files refused, counted once per problem; the "
             "last good pair stays in use).",
             reloads_ok_.load(), reloads_failed_.load());
}

}  // namespace roost
