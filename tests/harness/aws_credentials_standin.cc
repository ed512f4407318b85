#include "tests/harness/aws_credentials_standin.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "util/str_cat.h"

namespace roost::testing {
namespace {

size_t Collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// The body of a request to the stand-in; "" when it did not answer.
std::string Call(const std::string& url, const char* method) {
  CURL* curl = curl_easy_init();
  std::string body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  if (std::string_view(method) == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  if (curl_easy_perform(curl) != CURLE_OK) body.clear();
  curl_easy_cleanup(curl);
  return body;
}

std::vector<std::string> Strings(const std::string& stats, const char* key) {
  nlohmann::json j = nlohmann::json::parse(stats, nullptr, false);
  std::vector<std::string> out;
  if (j.is_object() && j.contains(key) && j[key].is_array()) {
    for (const auto& v : j[key]) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AwsCredentialsStandin>>
AwsCredentialsStandin::Start(const MinioServer& minio, const Options& options) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  std::unique_ptr<AwsCredentialsStandin> s(new AwsCredentialsStandin);
  const std::string port_file = s->dir_.File("port");
  const std::string log = s->dir_.File("standin.log");
  std::vector<std::string> args = {
      "/usr/bin/python3",   ROOST_CREDENTIALS_STANDIN,
      "--minio-endpoint",   minio.endpoint(),
      "--minio-access-key", minio.access_key(),
      "--minio-secret-key", minio.secret_key(),
      "--expires-in",       StrCat(options.expires_in),
      "--container-token",  options.container_token,
      "--port-file",        port_file};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  s->pid_ = ::fork();
  if (s->pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (s->pid_ < 0) return absl::InternalError("cannot fork the stand-in");
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(port_file);
    if (in >> s->port_) return s;
    int wstatus = 0;
    if (::waitpid(s->pid_, &wstatus, WNOHANG) == s->pid_) {
      s->pid_ = -1;
      return absl::UnavailableError(
          StrCat("the credentials stand-in exited; its log:\n", ReadFile(log)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError("the credentials stand-in did not start");
}

AwsCredentialsStandin::~AwsCredentialsStandin() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

std::string AwsCredentialsStandin::endpoint() const {
  return StrCat("http://127.0.0.1:", port_);
}

std::string AwsCredentialsStandin::Stats() const {
  return Call(endpoint() + "/stats", "GET");
}

int AwsCredentialsStandin::Hits(const std::string& kind) const {
  nlohmann::json j = nlohmann::json::parse(Stats(), nullptr, false);
  if (!j.is_object() || !j.contains(kind)) return -1;
  return j[kind].get<int>();
}

std::vector<std::string> AwsCredentialsStandin::WebTokens() const {
  return Strings(Stats(), "web_tokens");
}

std::vector<std::string> AwsCredentialsStandin::ContainerAuthorizations()
    const {
  return Strings(Stats(), "container_auth");
}

void AwsCredentialsStandin::FailNext(const std::string& kind, int n) const {
  Call(StrCat(endpoint(), "/fail?kind=", kind, "&n=", n), "POST");
}

}  // namespace roost::testing
