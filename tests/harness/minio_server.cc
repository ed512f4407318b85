#include "tests/harness/minio_server.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <pugixml.hpp>
#include <thread>
#include <vector>

#include "util/str_cat.h"

extern char** environ;

namespace roost::testing {
namespace {

using Clock = std::chrono::steady_clock;

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

size_t Collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// The HTTP status of a request to `url` (SigV4-signed when `user` is given),
// or 0 when nothing answered.
long Request(const std::string& url, const char* method,
             const std::string& user = "", const std::string& password = "") {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return 0;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Discard);
  curl_slist* headers = nullptr;
  if (!user.empty()) {
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
    curl_easy_setopt(curl, CURLOPT_USERNAME, user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, password.c_str());
    headers =
        curl_slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }
  long status = 0;
  if (curl_easy_perform(curl) == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return status;
}

std::string Tail(const std::string& path) {
  std::string log = ReadFile(path);
  return log.size() > 2000 ? log.substr(log.size() - 2000) : log;
}

// Stops the shared server when the tests end.
std::unique_ptr<MinioServer>& Shared() {
  static auto* server = new std::unique_ptr<MinioServer>;
  return *server;
}
std::string& SharedError() {
  static auto* error = new std::string;
  return *error;
}
class StopSharedMinio : public ::testing::Environment {
 public:
  void TearDown() override { Shared().reset(); }
};
[[maybe_unused]] ::testing::Environment* const kStopSharedMinio =
    ::testing::AddGlobalTestEnvironment(new StopSharedMinio);

}  // namespace

std::string MinioBinary() {
  if (const char* env = std::getenv("ROOST_MINIO"); env && *env) return env;
  return ROOST_MINIO_BINARY;
}

int UnusedLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

absl::StatusOr<std::unique_ptr<MinioServer>> MinioServer::Start(int port) {
  const std::string binary = MinioBinary();
  if (::access(binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        StrCat("MinIO not found at ", binary,
               ": run scripts/install-minio.sh (or point $ROOST_MINIO at a "
               "minio binary)"));
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  std::unique_ptr<MinioServer> server(new MinioServer);
  absl::Status status;
  // A port found free may be taken before MinIO binds it: try again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    status = server->Launch(port);
    if (status.ok()) break;
    server->Stop();
  }
  if (!status.ok()) return status;
  if (absl::Status s = server->CreateBucket(); !s.ok()) return s;
  return server;
}

absl::Status MinioServer::Launch(int port) {
  port_ = port != 0 ? port : UnusedLoopbackPort();
  const int console_port = UnusedLoopbackPort();
  const std::string data = dir_.File("data");
  const std::string log = dir_.File("minio.log");
  std::vector<std::string> args = {MinioBinary(),
                                   "server",
                                   "--quiet",
                                   "--address",
                                   StrCat("127.0.0.1:", port_),
                                   "--console-address",
                                   StrCat("127.0.0.1:", console_port),
                                   data};
  std::vector<std::string> env_strings = {
      StrCat("MINIO_ROOT_USER=", access_key_),
      StrCat("MINIO_ROOT_PASSWORD=", secret_key_), "MINIO_BROWSER=off",
      "MINIO_UPDATE=off", StrCat("HOME=", dir_.path().string())};
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    if (v.substr(0, 6) == "MINIO_" || v.substr(0, 5) == "HOME=") continue;
    env_strings.emplace_back(v);
  }
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int log_fd =
      ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    // Dies with the test binary, however that ends.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log_fd);
  if (pid_ < 0) return absl::InternalError("cannot fork for MinIO");

  const auto until = Clock::now() + std::chrono::seconds(60);
  const std::string health = StrCat(endpoint(), "/minio/health/live");
  while (Clock::now() < until) {
    if (Request(health, "GET") == 200) return absl::OkStatus();
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::UnavailableError(
          StrCat("MinIO exited while starting; its log:\n", Tail(log)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError(
      StrCat("MinIO did not become live in 60 s; its log:\n", Tail(log)));
}

absl::Status MinioServer::CreateBucket() const {
  // Live is not ready: MinIO answers 503 until its storage is initialised.
  const auto until = Clock::now() + std::chrono::seconds(60);
  long status = 0;
  while (true) {
    status = Request(StrCat(endpoint(), "/", bucket_), "PUT", access_key_,
                     secret_key_);
    if (status == 200) return absl::OkStatus();
    if ((status != 503 && status != 0) || Clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::InternalError(StrCat("creating bucket ", bucket_,
                                    " in MinIO: HTTP ", status, "; its log:\n",
                                    Tail(dir_.File("minio.log"))));
}

absl::StatusOr<MinioServer::TemporaryCredentials> MinioServer::AssumeRole()
    const {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init");
  const std::string url = StrCat(endpoint(), "/");
  const std::string form =
      "Action=AssumeRole&DurationSeconds=900&Version=2011-06-15";
  std::string body;
  curl_slist* headers = curl_slist_append(
      nullptr, "Content-Type: application/x-www-form-urlencoded");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:sts");
  curl_easy_setopt(curl, CURLOPT_USERNAME, access_key_.c_str());
  curl_easy_setopt(curl, CURLOPT_PASSWORD, secret_key_.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, form.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  long status = 0;
  const CURLcode code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  pugi::xml_document doc;
  doc.load_buffer(body.data(), body.size());
  const pugi::xml_node c = doc.child("AssumeRoleResponse")
                               .child("AssumeRoleResult")
                               .child("Credentials");
  TemporaryCredentials credentials{c.child_value("AccessKeyId"),
                                   c.child_value("SecretAccessKey"),
                                   c.child_value("SessionToken")};
  if (code != CURLE_OK || status != 200 || credentials.session_token.empty()) {
    return absl::InternalError(
        StrCat("MinIO AssumeRole: curl ", code, ", HTTP ", status, ": ", body));
  }
  return credentials;
}

void MinioServer::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const auto until = Clock::now() + std::chrono::seconds(10);
  int wstatus = 0;
  while (::waitpid(pid_, &wstatus, WNOHANG) == 0) {
    if (Clock::now() >= until) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &wstatus, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
}

MinioServer::~MinioServer() { Stop(); }

std::string MinioServer::endpoint() const {
  return StrCat("http://127.0.0.1:", port_);
}

void MinioServer::SetEnvironment() const {
  ::setenv("AWS_ACCESS_KEY_ID", access_key_.c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", secret_key_.c_str(), 1);
  ::setenv("AWS_REGION", "us-east-1", 1);
  ::setenv("AWS_ENDPOINT_URL", endpoint().c_str(), 1);
  ::unsetenv("AWS_ENDPOINT_URL_S3");
  ::unsetenv("AWS_SESSION_TOKEN");
  // Nothing else of the credential chain: no ~/.aws of the machine's, no
  // instance metadata (a test on EC2 would otherwise find a role).
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws/credentials", 1);
  ::setenv("AWS_CONFIG_FILE", "/nonexistent/aws/config", 1);
  ::setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  for (const char* name :
       {"AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
        "AWS_ENDPOINT_URL_STS", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"}) {
    ::unsetenv(name);
  }
}

MinioServer* SharedMinio() {
  static bool tried = false;
  if (!tried) {
    tried = true;
    auto server = MinioServer::Start();
    if (server.ok()) {
      Shared() = *std::move(server);
    } else {
      SharedError() = std::string(server.status().message());
    }
  }
  return Shared().get();
}

const std::string& MinioStartError() { return SharedError(); }

}  // namespace roost::testing
