#include "repository/s3_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

#include "repository/s3_xml.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// libcurl's receive buffer for a body streamed to a sink (see SendOnce).
constexpr long kStreamBufferBytes = 512 << 10;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The status code of a final non-2xx answer.
absl::StatusCode CodeOf(long http_status, const std::string& s3_code) {
  if (s3_code == "NoSuchKey" || s3_code == "NoSuchBucket" ||
      s3_code == "NoSuchUpload" || http_status == 404) {
    return absl::StatusCode::kNotFound;
  }
  if (http_status == 401 || http_status == 403 || s3_code == "ExpiredToken" ||
      s3_code == "InvalidToken" || s3_code == "AuthorizationHeaderMalformed") {
    return absl::StatusCode::kPermissionDenied;
  }
  if (http_status == 412) return absl::StatusCode::kFailedPrecondition;
  if (http_status == 416) return absl::StatusCode::kOutOfRange;
  if (http_status == 429 || http_status == 503) {
    return absl::StatusCode::kUnavailable;
  }
  if (http_status >= 500) return absl::StatusCode::kUnavailable;
  if (http_status == 409) return absl::StatusCode::kAborted;
  return absl::StatusCode::kInvalidArgument;
}

bool RetryableAnswer(long http_status, const std::string& s3_code) {
  return http_status >= 500 || http_status == 429 || s3_code == "SlowDown" ||
         s3_code == "RequestTimeout" ||
         s3_code == "ConditionalRequestConflict" ||
         s3_code == "OperationAborted";
}

// Transfer errors that no retry mends.
bool RetryableTransport(CURLcode code) {
  switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_LOGIN_DENIED:
      return false;
    default:
      return true;
  }
}

}  // namespace

absl::StatusOr<S3Config> S3Config::FromEnvironment(std::string bucket,
                                                   std::string prefix) {
  S3Config config;
  config.bucket = std::move(bucket);
  config.prefix = std::move(prefix);
  ROOST_ASSIGN_OR_RETURN(config.region, AwsRegion(ProcessEnvironment()));
  config.endpoint = Env("AWS_ENDPOINT_URL_S3");
  const char* endpoint_var = "AWS_ENDPOINT_URL_S3";
  if (config.endpoint.empty()) {
    config.endpoint = Env("AWS_ENDPOINT_URL");
    endpoint_var = "AWS_ENDPOINT_URL";
  }
  while (!config.endpoint.empty() && config.endpoint.back() == '/') {
    config.endpoint.pop_back();
  }
  if (!config.endpoint.empty() && config.endpoint.rfind("http://", 0) != 0 &&
      config.endpoint.rfind("https://", 0) != 0) {
    return absl::InvalidArgumentError(
        StrCat(endpoint_var, " is not an http:// or https:// URL: \"",
               config.endpoint, "\""));
  }
  ROOST_ASSIGN_OR_RETURN(config.credentials, DefaultAwsCredentials());
  return config;
}

std::string AwsUriEncode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

S3Client::S3Client(S3Config config, const ObjectStoreOptions& options)
    : config_(std::move(config)), options_(options) {
  GlobalInit();
}

S3Client::~S3Client() {
  for (void* h : handles_) curl_easy_cleanup(static_cast<CURL*>(h));
}

bool S3Client::Stopping() const {
  return options_.stop != nullptr && options_.stop->load();
}

absl::Status S3Client::Stopped(std::string_view what) {
  return absl::CancelledError(StrCat(what, ": stopped before the end"));
}

void* S3Client::TakeHandle() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!handles_.empty()) {
      void* h = handles_.back();
      handles_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void S3Client::ReturnHandle(void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (handles_.size() < 8) {
    handles_.push_back(handle);
  } else {
    curl_easy_cleanup(static_cast<CURL*>(handle));
  }
}

std::string S3Client::Url(
    std::string_view key,
    const std::vector<std::pair<std::string, std::string>>& query) const {
  std::string url;
  if (!config_.endpoint.empty()) {
    url = StrCat(config_.endpoint, "/", config_.bucket, "/");
  } else if (config_.bucket.find('.') != std::string::npos) {
    // A dotted bucket name breaks the wildcard certificate of the
    // virtual-hosted name.
    url = StrCat("https://s3.", config_.region, ".amazonaws.com/",
                 config_.bucket, "/");
  } else {
    url = StrCat("https://", config_.bucket, ".s3.", config_.region,
                 ".amazonaws.com/");
  }
  url += AwsUriEncode(key, /*keep_slash=*/true);
  // SigV4 signs the query sorted by name, every name with an '=': sending
  // it in that form already leaves nothing for the signer to reorder.
  auto sorted = query;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    url += i == 0 ? '?' : '&';
    url += AwsUriEncode(sorted[i].first, false);
    url += '=';
    url += AwsUriEncode(sorted[i].second, false);
  }
  return url;
}

namespace {

// What the callbacks of one attempt share.
struct Attempt {
  CURL* curl = nullptr;
  const S3Request* request = nullptr;
  S3Response response;
  uint64_t sent = 0;
  absl::Status sink_status;  // the sink's error that stopped the transfer
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* a = static_cast<Attempt*>(user);
  const size_t len = size * n;
  long status = 0;
  curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
  // An error's body is S3's XML, always collected.
  if (status / 100 != 2 || !a->request->sink) {
    a->response.body.append(data, len);
    return len;
  }
  a->sink_status = a->request->sink(std::string_view(data, len));
  return a->sink_status.ok() ? len : 0;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* a = static_cast<Attempt*>(user);
  const size_t len = size * n;
  std::string_view line(data, len);
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(c));
    if (name == "etag") {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() &&
             std::isspace(static_cast<unsigned char>(value.front()))) {
        value.remove_prefix(1);
      }
      while (!value.empty() &&
             std::isspace(static_cast<unsigned char>(value.back()))) {
        value.remove_suffix(1);
      }
      a->response.etag = UnquoteEtag(value);
    }
  }
  return len;
}

// Ends the transfer (CURLE_ABORTED_BY_CALLBACK) once the store's stop flag
// is set. libcurl calls it as data moves and at least once a second while
// it waits (connecting, or for a silent peer).
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(user)->load() ? 1 : 0;
}

size_t OnRead(char* buffer, size_t size, size_t n, void* user) {
  auto* a = static_cast<Attempt*>(user);
  const S3Request& r = *a->request;
  const uint64_t total = r.body_fd >= 0 ? r.body_length : r.body.size();
  const size_t want =
      static_cast<size_t>(std::min<uint64_t>(size * n, total - a->sent));
  if (want == 0) return 0;
  if (r.body_fd < 0) {
    std::copy_n(r.body.data() + a->sent, want, buffer);
    a->sent += want;
    return want;
  }
  ssize_t got;
  do {
    got = ::pread(r.body_fd, buffer, want,
                  static_cast<off_t>(r.body_offset + a->sent));
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return CURL_READFUNC_ABORT;  // the file shrank or failed
  a->sent += static_cast<uint64_t>(got);
  return static_cast<size_t>(got);
}

}  // namespace

absl::StatusOr<S3Response> S3Client::SendOnce(const S3Request& request,
                                              std::string_view what,
                                              bool* retry) {
  *retry = false;
  CURL* curl = static_cast<CURL*>(TakeHandle());
  if (curl == nullptr) return absl::ResourceExhaustedError("curl_easy_init");
  curl_easy_reset(curl);
  Attempt a;
  a.curl = curl;
  a.request = &request;

  absl::StatusOr<AwsCredentials> credentials = config_.credentials->Current();
  if (!credentials.ok()) {
    ReturnHandle(curl);
    return absl::Status(credentials.status().code(),
                        StrCat(what, ": ", credentials.status().message()));
  }
  const std::string url = Url(request.key, request.query);
  const std::string sigv4 = StrCat("aws:amz:", config_.region, ":s3");
  curl_slist* headers = nullptr;
  // The payload hash SigV4 signs (see the header comment).
  headers =
      curl_slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
  // (No "Expect:" to drop libcurl's 100-continue: libcurl 7.88 signs the
  // empty header it never sends, and the signature no longer matches.)
  if (!credentials->session_token.empty()) {
    headers = curl_slist_append(
        headers,
        StrCat("x-amz-security-token: ", credentials->session_token).c_str());
  }
  for (const std::string& h : request.headers) {
    headers = curl_slist_append(headers, h.c_str());
  }

  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_easy_setopt(curl, CURLOPT_USERNAME, credentials->access_key_id.c_str());
  curl_easy_setopt(curl, CURLOPT_PASSWORD,
                   credentials->secret_access_key.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(
      curl, CURLOPT_LOW_SPEED_TIME,
      std::max(1L, static_cast<long>(options_.stall_timeout.count() / 1000)));
  if (request.sink) {
    // A streamed body (a table file) is read from the socket in pieces of
    // this size rather than libcurl's 16 KiB: a 170 MiB download takes
    // some 340 recv(2) calls, not 11,000, each of which may send an ACK
    // and wake the sender (the sink still gets pieces of 16 KiB).
    curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, kStreamBufferBytes);
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &a);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &a);
  if (options_.stop != nullptr) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA,
                     const_cast<std::atomic<bool>*>(options_.stop));
  }

  const std::string_view method(request.method);
  const uint64_t body_size =
      request.body_fd >= 0 ? request.body_length : request.body.size();
  if (method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE,
                     static_cast<curl_off_t>(body_size));
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(curl, CURLOPT_READDATA, &a);
  } else if (method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(body_size));
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(curl, CURLOPT_READDATA, &a);
  } else if (method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method);
  }

  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.response.http_status);
  curl_off_t length = -1;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  a.response.content_length = length < 0 ? 0 : static_cast<uint64_t>(length);
  ReturnHandle(curl);

  if (!a.sink_status.ok()) return a.sink_status;
  if (code == CURLE_ABORTED_BY_CALLBACK && Stopping()) return Stopped(what);
  if (code != CURLE_OK) {
    *retry = RetryableTransport(code);
    return absl::UnavailableError(StrCat(what, ": ", curl_easy_strerror(code)));
  }
  const long status = a.response.http_status;
  if (status / 100 == 2) return std::move(a.response);

  std::string s3_code, message;
  if (auto error = ParseS3Error(a.response.body)) {
    s3_code = error->code;
    message = error->message;
  }
  *retry = RetryableAnswer(status, s3_code);
  std::string text = StrCat(what, ": HTTP ", status);
  if (!s3_code.empty()) text += StrCat(" ", s3_code);
  if (!message.empty()) text += StrCat(": ", message);
  const absl::StatusCode code_of = CodeOf(status, s3_code);
  if (code_of == absl::StatusCode::kPermissionDenied) {
    text += StrCat(" (credentials from ", config_.credentials->source(), ")");
  }
  return absl::Status(code_of, text);
}

absl::StatusOr<S3Response> S3Client::Send(const S3Request& request,
                                          std::string_view what) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const int attempts = std::max(1, options_.max_attempts);
  absl::Status last;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) {
      const int64_t base = options_.initial_backoff.count()
                           << std::min(attempt - 2, 20);
      const int64_t delay =
          std::min<int64_t>(base, options_.max_backoff.count());
      std::uniform_int_distribution<int64_t> jitter(0, delay / 2);
      // In slices, so that a stop is not held up by a backoff of seconds.
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(delay - jitter(rng));
      while (!Stopping() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(
            std::min<std::chrono::steady_clock::duration>(
                until - std::chrono::steady_clock::now(),
                std::chrono::milliseconds(50)));
      }
    }
    if (Stopping()) return Stopped(what);
    if (request.before_attempt) {
      absl::Status s = request.before_attempt();
      if (!s.ok()) return s;
    }
    bool retry = false;
    absl::StatusOr<S3Response> response = SendOnce(request, what, &retry);
    if (response.ok() || !retry) return response;
    last = response.status();
  }
  return absl::Status(last.code(), StrCat(last.message(), " (gave up after ",
                                          attempts, " attempts)"));
}

}  // namespace roost
