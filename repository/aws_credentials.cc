#include "repository/aws_credentials.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <utility>
#include <vector>

#include "repository/aws_config_file.h"
#include "repository/aws_credential_sources.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Renewal starts when less than this, or a fifth of the lifetime, remains.
constexpr auto kRenewAhead = std::chrono::minutes(5);
// After a failed renewal, the next is tried this much later (or sooner,
// when the credentials expire before).
constexpr auto kRetryAfterFailure = std::chrono::seconds(10);

std::string UtcText(SystemClock::time_point t) {
  const std::time_t s = SystemClock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct NamedFactory {
  const char* name;
  AwsSourceOrNone (*make)(const AwsEnvironment&);
};

constexpr NamedFactory kChain[] = {
    {"environment", EnvironmentSource},
    {"shared files", SharedFilesSource},
    {"web identity", WebIdentitySource},
    {"container", ContainerSource},
    {"instance metadata", InstanceMetadataSource},
};

}  // namespace

AwsEnvironment ProcessEnvironment() {
  return [](std::string_view name) {
    const char* v = std::getenv(std::string(name).c_str());
    return v == nullptr ? std::string() : std::string(v);
  };
}

absl::StatusOr<std::shared_ptr<AwsCredentialsProvider>>
AwsCredentialsProvider::FromChain(const AwsEnvironment& env, LogFn log) {
  std::vector<std::string> said;
  auto fail = [&](const absl::Status& s) {
    std::string text = "no AWS credentials: ";
    for (size_t i = 0; i < said.size(); ++i) {
      text += StrCat(i == 0 ? "" : "; ", said[i]);
    }
    return absl::Status(s.code(), text);
  };
  for (const NamedFactory& link : kChain) {
    AwsSourceOrNone source = link.make(env);
    if (absl::IsNotFound(source.status())) {
      said.push_back(StrCat(link.name, ": ", source.status().message()));
      continue;
    }
    if (!source.ok()) {
      said.push_back(StrCat(link.name, ": ", source.status().message()));
      return fail(source.status());
    }
    absl::StatusOr<AwsCredentials> first = (*source)->Fetch();
    if (!first.ok()) {
      said.push_back(
          StrCat((*source)->Describe(), ": ", first.status().message()));
      return fail(first.status());
    }
    auto provider = std::make_shared<AwsCredentialsProvider>(
        *std::move(source), *std::move(first), std::move(log));
    if (provider->log_) {
      const double expiry = provider->expiry_unix_seconds();
      provider->log_(
          StrCat("credentials from ", provider->source(),
                 expiry > 0 ? StrCat(", temporary, expiring ",
                                     UtcText(*provider->current_.expiration))
                            : std::string()));
    }
    return provider;
  }
  // Nothing configured (instance metadata turned off).
  return fail(absl::InvalidArgumentError(""));
}

std::shared_ptr<AwsCredentialsProvider> AwsCredentialsProvider::Fixed(
    AwsCredentials credentials) {
  return std::make_shared<AwsCredentialsProvider>(
      nullptr, std::move(credentials), nullptr);
}

std::shared_ptr<AwsCredentialsProvider> AwsCredentialsProvider::Fixed(
    std::string access_key_id, std::string secret_access_key) {
  AwsCredentials c;
  c.access_key_id = std::move(access_key_id);
  c.secret_access_key = std::move(secret_access_key);
  return Fixed(std::move(c));
}

AwsCredentialsProvider::AwsCredentialsProvider(
    std::unique_ptr<AwsCredentialSource> source, AwsCredentials first,
    LogFn log)
    : source_(std::move(source)),
      source_name_(source_ ? source_->Describe() : "fixed credentials"),
      log_(std::move(log)) {
  std::lock_guard lock(mu_);
  SetLocked(std::move(first));
}

void AwsCredentialsProvider::SetLocked(AwsCredentials credentials) {
  current_ = std::move(credentials);
  if (current_.expiration) {
    const auto now = SystemClock::now();
    const auto lifetime = *current_.expiration - now;
    const auto ahead = std::min<SystemClock::duration>(
        kRenewAhead, std::max<SystemClock::duration>(lifetime / 5, {}));
    renew_at_ = *current_.expiration - ahead;
  }
  next_attempt_ = {};
}

double AwsCredentialsProvider::expiry_unix_seconds() const {
  std::lock_guard lock(mu_);
  if (!current_.expiration) return 0;
  return std::chrono::duration<double>(current_.expiration->time_since_epoch())
      .count();
}

absl::Status AwsCredentialsProvider::Renew() {
  absl::StatusOr<AwsCredentials> fresh = source_->Fetch();
  const auto now = SystemClock::now();
  if (fresh.ok()) {
    refreshes_.fetch_add(1);
    std::lock_guard lock(mu_);
    SetLocked(*std::move(fresh));
    return absl::OkStatus();
  }
  refresh_failures_.fetch_add(1);
  SystemClock::time_point expiration;
  {
    std::lock_guard lock(mu_);
    last_error_ = std::string(fresh.status().message());
    expiration = current_.expiration.value_or(now);
    // A quarter of what is left, within 0.2 to 10 s; once expired, every
    // second (each failure is a log line).
    const auto wait =
        now >= expiration
            ? SystemClock::duration(std::chrono::seconds(1))
            : std::clamp<SystemClock::duration>((expiration - now) / 4,
                                                std::chrono::milliseconds(200),
                                                kRetryAfterFailure);
    next_attempt_ = now + wait;
  }
  if (log_) {
    log_(StrCat("renewing the credentials from ", source_name_,
                " failed: ", fresh.status().message(),
                now < expiration ? StrCat("; the current ones serve until ",
                                          UtcText(expiration))
                                 : std::string("; they have expired")));
  }
  return fresh.status();
}

absl::Status AwsCredentialsProvider::ExpiredLocked() const {
  return absl::PermissionDeniedError(
      StrCat("the credentials from ", source_name_, " expired at ",
             UtcText(*current_.expiration), " and could not be renewed: ",
             last_error_.empty() ? "not tried yet" : last_error_));
}

absl::StatusOr<AwsCredentials> AwsCredentialsProvider::Current() {
  // Whether to use what there is (or fail) without renewing; mu_ held.
  auto settled = [this]() -> std::optional<absl::StatusOr<AwsCredentials>> {
    const auto now = SystemClock::now();
    if (now < renew_at_ || now < next_attempt_) {
      if (now < *current_.expiration) return current_;
      return ExpiredLocked();
    }
    return std::nullopt;
  };
  bool valid;
  {
    std::lock_guard lock(mu_);
    if (!source_ || !current_.expiration) return current_;
    if (auto answer = settled()) return *answer;
    valid = SystemClock::now() < *current_.expiration;
  }
  // Due. While the credentials still work, a thread that finds another
  // renewing uses them; once they have expired, it waits for that renewal.
  std::unique_lock renewing(refresh_mu_, std::defer_lock);
  if (valid) {
    if (!renewing.try_lock()) {
      std::lock_guard lock(mu_);
      return current_;
    }
  } else {
    renewing.lock();
  }
  {
    std::lock_guard lock(mu_);
    if (auto answer = settled()) return *answer;  // renewed meanwhile
  }
  Renew().IgnoreError();
  std::lock_guard lock(mu_);
  if (SystemClock::now() < *current_.expiration) return current_;
  return ExpiredLocked();
}

namespace {

// The variables the chain reads: the process's provider is found again
// when one of them changes (as tests do between stores).
constexpr const char* kChainVariables[] = {
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "HOME",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_ENDPOINT_URL_STS",
    "AWS_ENDPOINT_URL",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
};

std::string ChainVariables() {
  const AwsEnvironment env = ProcessEnvironment();
  std::string out;
  for (const char* name : kChainVariables) {
    out += StrCat(name, "=", env(name), "\n");
  }
  return out;
}

struct DefaultState {
  std::mutex mu;
  std::shared_ptr<AwsCredentialsProvider> provider;
  std::string variables;  // ChainVariables() when `provider` was found
  AwsCredentialsProvider::LogFn log;
};

DefaultState& Default() {
  static DefaultState* state = new DefaultState;
  return *state;
}

}  // namespace

absl::StatusOr<std::shared_ptr<AwsCredentialsProvider>>
DefaultAwsCredentials() {
  DefaultState& d = Default();
  std::lock_guard lock(d.mu);
  const std::string variables = ChainVariables();
  if (d.provider && d.variables == variables) return d.provider;
  absl::StatusOr<std::shared_ptr<AwsCredentialsProvider>> p =
      AwsCredentialsProvider::FromChain(ProcessEnvironment(), d.log);
  if (p.ok()) {
    d.provider = *p;
    d.variables = variables;
  }
  return p;
}

std::shared_ptr<AwsCredentialsProvider> DefaultAwsCredentialsIfFound() {
  DefaultState& d = Default();
  std::lock_guard lock(d.mu);
  return d.provider;
}

void SetAwsCredentialsLog(AwsCredentialsProvider::LogFn log) {
  DefaultState& d = Default();
  std::lock_guard lock(d.mu);
  d.log = std::move(log);
}

absl::StatusOr<std::string> AwsRegion(const AwsEnvironment& env) {
  std::string region = env("AWS_REGION");
  std::string where = "AWS_REGION";
  if (region.empty()) {
    region = env("AWS_DEFAULT_REGION");
    where = "AWS_DEFAULT_REGION";
  }
  if (region.empty()) {
    const std::string profile = AwsProfileName(env);
    absl::StatusOr<AwsProfile> p =
        ReadAwsProfile(AwsConfigFilePath(env), profile, true);
    if (!p.ok()) return p.status();
    region = p->Value("region");
    where = p->Where("region");
  }
  if (region.empty()) return std::string("us-east-1");
  for (char c : region) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') {
      return absl::InvalidArgumentError(StrCat(
          where, where.find(':') == std::string::npos ? " is" : ": region is",
          " not a region name: \"", region, "\""));
    }
  }
  return region;
}

}  // namespace roost
