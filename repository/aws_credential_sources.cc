#include "repository/aws_credential_sources.h"

#include <curl/curl.h>

#include <cctype>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <string>
#include <utility>
#include <vector>

#include "repository/aws_config_file.h"
#include "repository/s3_client.h"
#include "repository/s3_xml.h"
#include "util/file.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// A token file larger than this is not one.
constexpr uint64_t kMaxTokenBytes = 64 << 10;

std::string Trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.pop_back();
  }
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

// The start of an answer's body, for a message.
std::string Excerpt(std::string_view body) {
  std::string out(body.substr(0, 200));
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return body.size() > 200 ? StrCat(out, "...") : out;
}

struct HttpAnswer {
  long status = 0;
  std::string body;
};

size_t Collect(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// One HTTP request, no retries. Unavailable "METHOD URL: why" when no
// answer came.
absl::StatusOr<HttpAnswer> Http(const char* method, const std::string& url,
                                const std::vector<std::string>& headers,
                                const std::string& body, long connect_ms,
                                long total_ms, bool local = false) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::ResourceExhaustedError("curl_easy_init");
  curl_slist* list = nullptr;
  for (const std::string& h : headers)
    list = curl_slist_append(list, h.c_str());
  HttpAnswer answer;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, total_ms);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  // The container endpoint and instance metadata are on this host or link:
  // never through an http_proxy meant for the outside world.
  if (local) curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
  const std::string_view m(method);
  if (m == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE,
                     static_cast<long>(body.size()));
  } else if (m != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  }
  const CURLcode code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  if (code != CURLE_OK) {
    return absl::UnavailableError(
        StrCat(method, " ", url, ": ", curl_easy_strerror(code)));
  }
  return answer;
}

// The status of a non-2xx answer: refused (4xx) or not now (5xx).
absl::Status Refused(std::string_view what, long status, std::string_view why) {
  const std::string text = StrCat(what, ": HTTP ", status, ": ", why);
  return status >= 400 && status < 500 ? absl::PermissionDeniedError(text)
                                       : absl::UnavailableError(text);
}

absl::StatusOr<SystemClock::time_point> ParseExpiration(
    std::string_view what, const std::string& text) {
  const int64_t unix_seconds = ParseIso8601(text);
  if (unix_seconds <= 0) {
    return absl::InvalidArgumentError(
        StrCat(what, ": the answer's Expiration \"", text,
               "\" is not a time like 2026-11-28T22:00:00Z"));
  }
  return SystemClock::from_time_t(static_cast<std::time_t>(unix_seconds));
}

// The JSON credentials of ECS, EKS Pod Identity and IMDS.
absl::StatusOr<AwsCredentials> ParseJsonCredentials(std::string_view what,
                                                    const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  auto text = [&](const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string()
               ? j[key].get<std::string>()
               : std::string();
  };
  AwsCredentials c;
  c.access_key_id = text("AccessKeyId");
  c.secret_access_key = text("SecretAccessKey");
  c.session_token = text("Token");
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    return absl::InvalidArgumentError(
        StrCat(what, ": the answer holds no AccessKeyId and SecretAccessKey: ",
               Excerpt(body)));
  }
  if (!text("Expiration").empty()) {
    auto expiration = ParseExpiration(what, text("Expiration"));
    if (!expiration.ok()) return expiration.status();
    c.expiration = *expiration;
  }
  return c;
}

// Credentials that never change.
class StaticSource : public AwsCredentialSource {
 public:
  StaticSource(std::string name, AwsCredentials c)
      : name_(std::move(name)), c_(std::move(c)) {}
  std::string Describe() const override { return name_; }
  absl::StatusOr<AwsCredentials> Fetch() override { return c_; }

 private:
  const std::string name_;
  const AwsCredentials c_;
};

class WebIdentity : public AwsCredentialSource {
 public:
  WebIdentity(std::string token_file, std::string role, std::string session,
              std::string endpoint)
      : token_file_(std::move(token_file)),
        role_(std::move(role)),
        session_(std::move(session)),
        endpoint_(std::move(endpoint)) {}
  std::string Describe() const override {
    return StrCat("web identity (role ", role_, ")");
  }
  absl::StatusOr<AwsCredentials> Fetch() override {
    // Read again each time: kubelet replaces the projected token.
    absl::StatusOr<std::string> token =
        ReadRegularFile(token_file_, kMaxTokenBytes);
    if (!token.ok()) {
      return absl::Status(
          token.status().code(),
          StrCat("AWS_WEB_IDENTITY_TOKEN_FILE: ", token.status().message()));
    }
    const std::string jwt = Trimmed(*token);
    if (jwt.empty()) {
      return absl::InvalidArgumentError(
          StrCat("AWS_WEB_IDENTITY_TOKEN_FILE ", token_file_, " is empty"));
    }
    const std::string form =
        StrCat("Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=",
               AwsUriEncode(role_, false),
               "&RoleSessionName=", AwsUriEncode(session_, false),
               "&WebIdentityToken=", AwsUriEncode(jwt, false));
    const std::string what =
        StrCat("STS AssumeRoleWithWebIdentity at ", endpoint_);
    absl::StatusOr<HttpAnswer> answer =
        Http("POST", endpoint_,
             {"Content-Type: application/x-www-form-urlencoded",
              "Accept: application/xml"},
             form, 5000, 15000);
    if (!answer.ok()) return answer.status();
    pugi::xml_document doc;
    doc.load_buffer(answer->body.data(), answer->body.size());
    if (answer->status != 200) {
      const pugi::xml_node e = doc.child("ErrorResponse").child("Error");
      const std::string why =
          e ? StrCat(e.child_value("Code"), ": ", e.child_value("Message"))
            : Excerpt(answer->body);
      return Refused(what, answer->status, why);
    }
    const pugi::xml_node c = doc.child("AssumeRoleWithWebIdentityResponse")
                                 .child("AssumeRoleWithWebIdentityResult")
                                 .child("Credentials");
    AwsCredentials out;
    out.access_key_id = c.child_value("AccessKeyId");
    out.secret_access_key = c.child_value("SecretAccessKey");
    out.session_token = c.child_value("SessionToken");
    if (out.access_key_id.empty() || out.secret_access_key.empty() ||
        out.session_token.empty()) {
      return absl::InvalidArgumentError(StrCat(
          what, ": the answer holds no Credentials: ", Excerpt(answer->body)));
    }
    auto expiration = ParseExpiration(what, c.child_value("Expiration"));
    if (!expiration.ok()) return expiration.status();
    out.expiration = *expiration;
    return out;
  }

 private:
  const std::string token_file_, role_, session_, endpoint_;
};

class Container : public AwsCredentialSource {
 public:
  Container(std::string url, std::string token, std::string token_file)
      : url_(std::move(url)),
        token_(std::move(token)),
        token_file_(std::move(token_file)) {}
  std::string Describe() const override {
    return StrCat("container endpoint ", url_);
  }
  absl::StatusOr<AwsCredentials> Fetch() override {
    std::vector<std::string> headers = {"Accept: application/json"};
    std::string token = token_;
    if (!token_file_.empty()) {
      // Read again each time: EKS Pod Identity rotates it.
      absl::StatusOr<std::string> t =
          ReadRegularFile(token_file_, kMaxTokenBytes);
      if (!t.ok()) {
        return absl::Status(t.status().code(),
                            StrCat("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: ",
                                   t.status().message()));
      }
      token = Trimmed(*t);
    }
    if (!token.empty()) headers.push_back(StrCat("Authorization: ", token));
    absl::StatusOr<HttpAnswer> answer =
        Http("GET", url_, headers, "", 2000, 5000, /*local=*/true);
    if (!answer.ok()) return answer.status();
    if (answer->status != 200) {
      return Refused(StrCat("GET ", url_), answer->status,
                     Excerpt(answer->body));
    }
    return ParseJsonCredentials(StrCat("GET ", url_), answer->body);
  }

 private:
  const std::string url_, token_, token_file_;
};

class InstanceMetadata : public AwsCredentialSource {
 public:
  explicit InstanceMetadata(std::string endpoint)
      : endpoint_(std::move(endpoint)) {}
  std::string Describe() const override {
    return role_.empty()
               ? StrCat("instance metadata ", endpoint_)
               : StrCat("instance metadata ", endpoint_, " (role ", role_, ")");
  }
  absl::StatusOr<AwsCredentials> Fetch() override {
    // IMDSv2: a session token first, sent with every read.
    const std::string token_url = StrCat(endpoint_, "/latest/api/token");
    absl::StatusOr<HttpAnswer> token =
        Http("PUT", token_url, {"X-aws-ec2-metadata-token-ttl-seconds: 21600"},
             "", 1000, 2000, /*local=*/true);
    if (!token.ok()) return token.status();
    if (token->status != 200) {
      return Refused(StrCat("PUT ", token_url), token->status,
                     Excerpt(token->body));
    }
    const std::string header =
        StrCat("X-aws-ec2-metadata-token: ", Trimmed(token->body));
    const std::string list_url =
        StrCat(endpoint_, "/latest/meta-data/iam/security-credentials/");
    absl::StatusOr<HttpAnswer> roles =
        Http("GET", list_url, {header}, "", 1000, 2000, /*local=*/true);
    if (!roles.ok()) return roles.status();
    if (roles->status == 404) {
      return absl::PermissionDeniedError(StrCat(
          "GET ", list_url,
          ": HTTP 404: the instance has no IAM role (instance profile)"));
    }
    if (roles->status != 200) {
      return Refused(StrCat("GET ", list_url), roles->status,
                     Excerpt(roles->body));
    }
    const std::string body = Trimmed(roles->body);
    std::string role = body.substr(0, body.find('\n'));
    if (role.empty()) {
      return absl::PermissionDeniedError(
          StrCat("GET ", list_url, ": the instance has no IAM role"));
    }
    role_ = role;
    const std::string role_url = StrCat(list_url, AwsUriEncode(role, false));
    absl::StatusOr<HttpAnswer> creds =
        Http("GET", role_url, {header}, "", 1000, 2000, /*local=*/true);
    if (!creds.ok()) return creds.status();
    if (creds->status != 200) {
      return Refused(StrCat("GET ", role_url), creds->status,
                     Excerpt(creds->body));
    }
    nlohmann::json j = nlohmann::json::parse(creds->body, nullptr, false);
    if (j.is_object() && j.contains("Code") && j["Code"].is_string() &&
        j["Code"] != "Success") {
      return absl::PermissionDeniedError(
          StrCat("GET ", role_url, ": Code ", j["Code"].get<std::string>(),
                 j.contains("Message") && j["Message"].is_string()
                     ? StrCat(": ", j["Message"].get<std::string>())
                     : std::string()));
    }
    return ParseJsonCredentials(StrCat("GET ", role_url), creds->body);
  }

 private:
  const std::string endpoint_;
  std::string role_;  // learned on the first Fetch
};

// The host of an http:// URL, lowercased, without port.
std::string HostOf(const std::string& url) {
  const size_t start = url.find("://");
  if (start == std::string::npos) return "";
  std::string rest = url.substr(start + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (!rest.empty() && rest.front() == '[') {
    return Lower(rest.substr(0, rest.find(']') + 1));
  }
  return Lower(rest.substr(0, rest.find(':')));
}

std::string WithoutTrailingSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// A profile that gets its credentials in a way roost does not support.
absl::Status Unsupported(const AwsProfile& p, std::string_view profile) {
  for (const char* key : {"role_arn", "credential_process", "sso_session",
                          "sso_start_url", "web_identity_token_file"}) {
    if (!p.Value(key).empty()) {
      return absl::InvalidArgumentError(
          StrCat(p.Where(key), ": profile \"", profile, "\" sets ", key,
                 ", which roost does not support; give the profile "
                 "aws_access_key_id and aws_secret_access_key, or use "
                 "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string AwsCredentialsFilePath(const AwsEnvironment& env) {
  const std::string path = env("AWS_SHARED_CREDENTIALS_FILE");
  return path.empty() ? StrCat(env("HOME"), "/.aws/credentials") : path;
}

std::string AwsConfigFilePath(const AwsEnvironment& env) {
  const std::string path = env("AWS_CONFIG_FILE");
  return path.empty() ? StrCat(env("HOME"), "/.aws/config") : path;
}

std::string AwsProfileName(const AwsEnvironment& env) {
  const std::string name = env("AWS_PROFILE");
  return name.empty() ? "default" : name;
}

AwsSourceOrNone EnvironmentSource(const AwsEnvironment& env) {
  AwsCredentials c;
  c.access_key_id = env("AWS_ACCESS_KEY_ID");
  c.secret_access_key = env("AWS_SECRET_ACCESS_KEY");
  c.session_token = env("AWS_SESSION_TOKEN");
  if (c.access_key_id.empty() && c.secret_access_key.empty()) {
    return absl::NotFoundError("AWS_ACCESS_KEY_ID is not set");
  }
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    return absl::InvalidArgumentError(
        c.access_key_id.empty()
            ? "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
            : "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
  }
  return std::make_unique<StaticSource>("environment", std::move(c));
}

AwsSourceOrNone SharedFilesSource(const AwsEnvironment& env) {
  const std::string profile = AwsProfileName(env);
  std::vector<std::string> missing;
  for (bool config_file : {false, true}) {
    const std::string path =
        config_file ? AwsConfigFilePath(env) : AwsCredentialsFilePath(env);
    absl::StatusOr<AwsProfile> p = ReadAwsProfile(path, profile, config_file);
    if (!p.ok()) return p.status();
    if (!p->found) {
      missing.push_back(path);
      continue;
    }
    AwsCredentials c;
    c.access_key_id = p->Value("aws_access_key_id");
    c.secret_access_key = p->Value("aws_secret_access_key");
    c.session_token = p->Value("aws_session_token");
    if (c.access_key_id.empty() && c.secret_access_key.empty()) {
      absl::Status unsupported = Unsupported(*p, profile);
      if (!unsupported.ok()) return unsupported;
      missing.push_back(StrCat(path, " (no keys in profile)"));
      continue;
    }
    if (c.access_key_id.empty() || c.secret_access_key.empty()) {
      const char* has = c.access_key_id.empty() ? "aws_secret_access_key"
                                                : "aws_access_key_id";
      const char* lacks = c.access_key_id.empty() ? "aws_access_key_id"
                                                  : "aws_secret_access_key";
      return absl::InvalidArgumentError(StrCat(p->Where(has), ": profile \"",
                                               profile, "\" sets ", has,
                                               " but not ", lacks));
    }
    return std::make_unique<StaticSource>(
        StrCat("shared ", config_file ? "config" : "credentials", " file ",
               path, " (profile ", profile, ")"),
        std::move(c));
  }
  std::string why = StrCat("no profile \"", profile, "\" with keys in ");
  for (size_t i = 0; i < missing.size(); ++i) {
    why += StrCat(i == 0 ? "" : " or ", missing[i]);
  }
  return absl::NotFoundError(why);
}

AwsSourceOrNone WebIdentitySource(const AwsEnvironment& env) {
  const std::string token_file = env("AWS_WEB_IDENTITY_TOKEN_FILE");
  const std::string role = env("AWS_ROLE_ARN");
  if (token_file.empty()) {
    return absl::NotFoundError("AWS_WEB_IDENTITY_TOKEN_FILE is not set");
  }
  if (role.empty()) {
    return absl::InvalidArgumentError(
        "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not");
  }
  std::string session = env("AWS_ROLE_SESSION_NAME");
  if (session.empty()) {
    session = StrCat("roost-", static_cast<long long>(std::time(nullptr)));
  }
  std::string endpoint = env("AWS_ENDPOINT_URL_STS");
  if (endpoint.empty()) endpoint = env("AWS_ENDPOINT_URL");
  if (endpoint.empty()) {
    absl::StatusOr<std::string> region = AwsRegion(env);
    if (!region.ok()) return region.status();
    endpoint = StrCat("https://sts.", *region, ".amazonaws.com");
  }
  endpoint = WithoutTrailingSlash(endpoint);
  if (endpoint.rfind("http://", 0) != 0 && endpoint.rfind("https://", 0) != 0) {
    return absl::InvalidArgumentError(
        StrCat("the STS endpoint is not an http:// or https:// URL: \"",
               endpoint, "\""));
  }
  return std::make_unique<WebIdentity>(token_file, role, session,
                                       StrCat(endpoint, "/"));
}

AwsSourceOrNone ContainerSource(const AwsEnvironment& env) {
  const std::string relative = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  std::string url = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  if (!relative.empty()) {
    url = StrCat("http://169.254.170.2", relative.front() == '/' ? "" : "/",
                 relative);
  } else if (url.empty()) {
    return absl::NotFoundError(
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and "
        "AWS_CONTAINER_CREDENTIALS_FULL_URI are not set");
  } else if (url.rfind("https://", 0) != 0) {
    // As the SDKs: plain http only to the local agents, lest a token go out.
    const std::string host = HostOf(url);
    const bool local = host == "localhost" || host.rfind("127.", 0) == 0 ||
                       host == "[::1]" || host == "169.254.170.2" ||
                       host == "169.254.170.23" || host == "[fd00:ec2::23]";
    if (url.rfind("http://", 0) != 0 || !local) {
      return absl::InvalidArgumentError(
          StrCat("AWS_CONTAINER_CREDENTIALS_FULL_URI \"", url,
                 "\" must be https://, or http:// to a loopback address, "
                 "169.254.170.2 (ECS) or 169.254.170.23 (EKS Pod Identity)"));
    }
  }
  return std::make_unique<Container>(
      url, env("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
      env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"));
}

AwsSourceOrNone InstanceMetadataSource(const AwsEnvironment& env) {
  if (Lower(env("AWS_EC2_METADATA_DISABLED")) == "true") {
    return absl::NotFoundError("AWS_EC2_METADATA_DISABLED is true");
  }
  std::string endpoint = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (endpoint.empty()) endpoint = "http://169.254.169.254";
  return std::make_unique<InstanceMetadata>(WithoutTrailingSlash(endpoint));
}

}  // namespace roost
