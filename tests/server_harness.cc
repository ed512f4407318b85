#include "tests/server_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <thread>

#include "storage/data_dir.h"
#include "tests/test_util.h"
#include "util/encoding.h"
#include "util/json.h"
#include "util/str_cat.h"

extern char** environ;

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kRpcDeadline{10};

// Exit status of a waitpid() status word.
int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// argv for posix_spawn; the strings must outlive the returned vector.
std::vector<char*> Argv(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

void SetDeadline(grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
}

// The complete lines of `log` (up to its last newline): a line being
// written is never matched half-way.
std::string_view CompleteLines(const std::string& log) {
  const size_t end = log.rfind('\n');
  return end == std::string::npos ? std::string_view()
                                  : std::string_view(log).substr(0, end + 1);
}

}  // namespace

namespace {
// The binary built beside the tests, unless the environment names another
// (to run the tests against an earlier build, say).
const char* Binary(const char* variable, const char* built) {
  const char* other = std::getenv(variable);
  return other != nullptr && *other != '\0' ? other : built;
}
}  // namespace

std::shared_ptr<grpc::Channel> CreateTestChannel(
    const std::string& address,
    std::shared_ptr<grpc::ChannelCredentials> credentials,
    const std::string& server_name) {
  grpc::ChannelArguments args;
  if (!server_name.empty()) args.SetSslTargetNameOverride(server_name);
  // The server bounds what it sends (--max-message-size); the tests take
  // whatever it sends.
  args.SetMaxReceiveMessageSize(-1);
  // A connection of its own, not one shared with other channels.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(
      address,
      credentials != nullptr ? credentials : grpc::InsecureChannelCredentials(),
      args);
}

const char* RoostLoadBinary() {
  return Binary("ROOST_TEST_LOAD_BINARY", ROOST_LOAD_BINARY);
}
const char* RoostServerBinary() {
  return Binary("ROOST_TEST_SERVER_BINARY", ROOST_SERVER_BINARY);
}
const char* RoostGetBinary() {
  return Binary("ROOST_TEST_GET_BINARY", ROOST_GET_BINARY);
}
const char* RoostAdminBinary() {
  return Binary("ROOST_TEST_ADMIN_BINARY", ROOST_ADMIN_BINARY);
}

ProcessMemory MemoryOf(pid_t pid) {
  ProcessMemory m;
  const std::string status = ReadFile(StrCat("/proc/", pid, "/status"));
  const auto field = [&](std::string_view name) -> uint64_t {
    const size_t at = status.find(name);
    if (at == std::string::npos) return 0;
    return std::strtoull(status.c_str() + at + name.size(), nullptr, 10) * 1024;
  };
  m.rss = field("VmRSS:");
  m.peak_rss = field("VmHWM:");
  return m;
}

bool WaitFor(const std::function<bool()>& condition,
             std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

ProcessResult RunProcess(const std::vector<std::string>& args) {
  ProcessResult result;
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return result;
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> argv = Argv(args);
  pid_t pid;
  const int rc =
      posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc == 0) {
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open_fds = 2;
    while (open_fds > 0) {
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        char buf[65536];
        const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
        if (n > 0) {
          sinks[i]->append(buf, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
        }
      }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = ExitCode(status);
  } else {
    result.err = std::string("posix_spawn: ") + std::strerror(rc);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
  }
  return result;
}

void WriteHexTsv(const std::string& path, const KeyValues& kvs) {
  std::string text;
  for (const auto& [key, value] : kvs) {
    text += EncodeHex(key);
    text += '\t';
    text += EncodeHex(value);
    text += '\n';
  }
  WriteFile(path, text);
}

std::string BuildTable(const std::string& data_dir, const std::string& table,
                       const KeyValues& kvs, const std::string& format,
                       const std::vector<std::string>& flags) {
  static std::atomic<int> inputs{0};
  const fs::path parent = fs::absolute(data_dir).parent_path();
  const std::string input =
      (parent / ("input-" + table + "-" + std::to_string(inputs++) + ".tsv"))
          .string();
  WriteHexTsv(input, kvs);
  std::vector<std::string> args = {RoostLoadBinary(),
                                   "build",
                                   "-q",
                                   "--output-format",
                                   "json",
                                   "--format",
                                   format,
                                   "--key-encoding",
                                   "hex",
                                   "--value-encoding",
                                   "hex",
                                   "--data-dir",
                                   data_dir,
                                   "--table",
                                   table,
                                   "-i",
                                   input};
  args.insert(args.end(), flags.begin(), flags.end());
  const ProcessResult r = RunProcess(args);
  fs::remove(input);
  auto json = ParseJson(r.out);
  const std::optional<uint64_t> version =
      json.ok() ? JsonUint64(*json, "version") : std::nullopt;
  if (r.exit_code != 0 || !version) {
    ADD_FAILURE() << "roost-load build of " << table << " failed (exit "
                  << r.exit_code << ")\nstdout: " << r.out
                  << "\nstderr: " << r.err;
    return "";
  }
  return (fs::path(data_dir) / table / VersionDirName(*version)).string();
}

std::vector<std::string> VersionDirs(const std::string& table_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(table_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (ParseVersionDirName(name)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

ServerProcess::ServerProcess(const ServerFlags& flags, std::string log_path)
    : log_path_(std::move(log_path)),
      admin_(!flags.admin_listen.empty()),
      metrics_(!flags.metrics_listen.empty()) {
  std::vector<std::string> args = {
      "--data-dir", flags.data_dir, "--listen", flags.listen,
      // Separate words: CLI11 reads "--admin-listen=" (empty after the =)
      // as the flag without its value.
      "--admin-listen", flags.admin_listen, "--metrics-listen",
      flags.metrics_listen, "--poll-interval",
      std::to_string(flags.poll_interval), "--drain-period",
      std::to_string(flags.drain_period)};
  args.insert(args.end(), flags.extra.begin(), flags.extra.end());
  wrapper_ = flags.wrapper;
  Spawn(args);
}

ServerProcess::ServerProcess(const std::vector<std::string>& args,
                             std::string log_path)
    : log_path_(std::move(log_path)), admin_(false), metrics_(false) {
  Spawn(args);
}

void ServerProcess::Spawn(const std::vector<std::string>& args) {
  std::vector<std::string> full = wrapper_;
  full.push_back(RoostServerBinary());
  full.insert(full.end(), args.begin(), args.end());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, log_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 2, 1);
  std::vector<char*> argv = Argv(full);
  const int rc =
      posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << full[0] << ": " << std::strerror(rc);
    pid_ = -1;
    exit_code_ = -1;
  }
}

ServerProcess::~ServerProcess() {
  // The channels go first, while the server may still answer their
  // goodbyes.
  Disconnect();
  if (Running()) {
    ::kill(pid_, SIGKILL);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exit_code_ = ExitCode(status);
  }
  const std::string log = Log();
  for (const char* report :
       {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"}) {
    if (log.find(report) != std::string::npos) {
      ADD_FAILURE() << "roost-server's log holds a sanitizer report:\n" << log;
      break;
    }
  }
}

std::string ServerProcess::Log() const { return ReadFile(log_path_); }

int ServerProcess::CountLogLines(std::string_view text) const {
  const std::string log = Log();
  std::string_view lines = CompleteLines(log);
  int count = 0;
  while (!lines.empty()) {
    const size_t eol = lines.find('\n');
    if (lines.substr(0, eol).find(text) != std::string_view::npos) ++count;
    lines.remove_prefix(eol + 1);
  }
  return count;
}

std::string ServerProcess::Describe() const {
  return "\n--- " + log_path_ + " ---\n" + Log() + "--- end of log ---";
}

::testing::AssertionResult ServerProcess::WaitForLog(
    std::string_view text, std::chrono::milliseconds timeout) {
  bool found = false;
  WaitFor(
      [&] {
        // Whether it still runs is asked first: a line logged just before
        // the exit is then still seen.
        const bool running = Running();
        found = CountLogLines(text) > 0;
        return found || !running;
      },
      timeout);
  if (found) return ::testing::AssertionSuccess();
  if (!Running()) {
    return ::testing::AssertionFailure()
           << "roost-server exited with status " << *exit_code_
           << " without logging \"" << text << "\"" << Describe();
  }
  return ::testing::AssertionFailure()
         << "roost-server did not log \"" << text << "\" within "
         << timeout.count() << " ms" << Describe();
}

int ServerProcess::PortFromLog(std::string_view what) const {
  const std::string log = Log();
  const std::string needle =
      "roost-server: " + std::string(what) + " listening on ";
  const size_t at = std::string_view(CompleteLines(log)).find(needle);
  if (at == std::string::npos) return 0;
  const size_t eol = log.find('\n', at);
  const std::string address =
      log.substr(at + needle.size(), eol - at - needle.size());
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return 0;
  return std::atoi(address.c_str() + colon + 1);
}

::testing::AssertionResult ServerProcess::WaitListening() {
  if (lookup_stub_) return ::testing::AssertionSuccess();
  std::vector<std::string> services = {"lookup service"};
  if (admin_) services.push_back("admin service");
  if (metrics_) services.push_back("metrics");
  for (const std::string& s : services) {
    if (auto r = WaitForLog(s + " listening on "); !r) return r;
  }
  lookup_port_ = PortFromLog("lookup service");
  if (admin_) admin_port_ = PortFromLog("admin service");
  if (metrics_) metrics_port_ = PortFromLog("metrics");
  if (lookup_port_ <= 0 || (admin_ && admin_port_ <= 0) ||
      (metrics_ && metrics_port_ <= 0)) {
    return ::testing::AssertionFailure()
           << "cannot read the bound ports from the log" << Describe();
  }
  auto lookup_channel =
      CreateTestChannel(lookup_address(), credentials_, server_name_);
  lookup_stub_ = v1::Lookup::NewStub(lookup_channel);
  health_stub_ = grpc::health::v1::Health::NewStub(lookup_channel);
  if (admin_) {
    admin_stub_ = v1::Admin::NewStub(
        CreateTestChannel(admin_address(), credentials_, server_name_));
  }
  return ::testing::AssertionSuccess();
}

void ServerProcess::Disconnect() {
  lookup_stub_.reset();
  admin_stub_.reset();
  health_stub_.reset();
}

::testing::AssertionResult ServerProcess::WaitReady() {
  if (auto r = WaitListening(); !r) return r;
  return WaitForLog("roost-server: ready: ");
}

void ServerProcess::SendSignal(int signal) {
  if (Running()) ::kill(pid_, signal);
}

bool ServerProcess::Running() {
  if (exit_code_) return false;
  int status;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_code_ = ExitCode(status);
    return false;
  }
  return true;
}

int ServerProcess::WaitExit(std::chrono::milliseconds timeout) {
  if (!WaitFor([&] { return !Running(); }, timeout)) return -1;
  return *exit_code_;
}

std::string ServerProcess::lookup_address() const {
  return "127.0.0.1:" + std::to_string(lookup_port_);
}

std::string ServerProcess::admin_address() const {
  return "127.0.0.1:" + std::to_string(admin_port_);
}

grpc::Status ServerProcess::Get(const std::string& table,
                                const std::string& key,
                                v1::GetResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::GetRequest request;
  request.set_table(table);
  request.set_key(key);
  return lookup_stub_->Get(&context, request, response);
}

grpc::Status ServerProcess::MultiGet(const std::string& table,
                                     const std::vector<std::string>& keys,
                                     v1::MultiGetResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::MultiGetRequest request;
  request.set_table(table);
  for (const std::string& k : keys) request.add_keys(k);
  return lookup_stub_->MultiGet(&context, request, response);
}

grpc::Status ServerProcess::ListTables(v1::ListTablesResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  return lookup_stub_->ListTables(&context, v1::ListTablesRequest(), response);
}

grpc::Status ServerProcess::Rollback(const std::string& table,
                                     const std::string& version,
                                     v1::RollbackResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::RollbackRequest request;
  request.set_table(table);
  request.set_version(version);
  return admin_stub_->Rollback(&context, request, response);
}

grpc::Status ServerProcess::Unpin(const std::string& table,
                                  v1::UnpinResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::UnpinRequest request;
  request.set_table(table);
  return admin_stub_->Unpin(&context, request, response);
}

grpc::Status ServerProcess::HealthCheck(
    const std::string& service,
    grpc::health::v1::HealthCheckResponse::ServingStatus* status) {
  grpc::ClientContext context;
  SetDeadline(&context);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status s = health_stub_->Check(&context, request, &response);
  *status = response.status();
  return s;
}

std::optional<v1::TableInfo> ServerProcess::Table(const std::string& table) {
  v1::ListTablesResponse response;
  if (!ListTables(&response).ok()) return std::nullopt;
  for (const v1::TableInfo& t : response.tables()) {
    if (t.name() == table) return t;
  }
  return std::nullopt;
}

std::string ServerProcess::ServingVersion(const std::string& table) {
  auto t = Table(table);
  return t ? t->serving_version() : std::string();
}

Metrics ServerProcess::ScrapeMetrics() {
  std::string error;
  auto body = HttpGet(metrics_port_, "/metrics", &error);
  if (!body) {
    ADD_FAILURE() << "cannot scrape /metrics on port " << metrics_port_ << ": "
                  << error;
    return {};
  }
  return ParsePrometheusText(*body);
}

::testing::AssertionResult IsOk(const grpc::Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "not OK: " << status.error_code() << ": " << status.error_message();
}

::testing::AssertionResult IsError(const grpc::Status& status,
                                   grpc::StatusCode code,
                                   const std::string& message) {
  if (status.error_code() == code && status.error_message() == message) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got code " << status.error_code() << " \""
         << status.error_message() << "\", want code " << code << " \""
         << message << "\"";
}

std::vector<std::string> Keys(int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) {
    keys.push_back(StrCat("key-", i, std::string(i % 13, 'x')));
  }
  return keys;
}

KeyValues Versioned(int version, const std::vector<std::string>& keys) {
  KeyValues kvs;
  for (const std::string& k : keys) kvs[k] = StrCat(version, ":", k);
  return kvs;
}

int VersionOf(const std::string& value, const std::string& key) {
  const size_t colon = value.find(':');
  if (colon == std::string::npos || colon == 0 ||
      value.compare(colon + 1, std::string::npos, key) != 0) {
    return -1;
  }
  return std::atoi(value.substr(0, colon).c_str());
}

::testing::AssertionResult ServesVersion(ServerProcess& server,
                                         const std::vector<std::string>& keys,
                                         int version,
                                         const std::string& table) {
  v1::MultiGetResponse m;
  grpc::Status s = server.MultiGet(table, keys, &m);
  if (!s.ok()) {
    return ::testing::AssertionFailure() << "MultiGet: " << s.error_message();
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (VersionOf(m.results(i).value(), keys[i]) != version) {
      return ::testing::AssertionFailure()
             << keys[i] << " = \"" << m.results(i).value() << "\", want v"
             << version;
    }
  }
  v1::GetResponse g;
  s = server.Get(table, keys.front(), &g);
  if (!s.ok() || VersionOf(g.value(), keys.front()) != version) {
    return ::testing::AssertionFailure()
           << "Get: " << s.error_message() << " \"" << g.value() << "\"";
  }
  return ::testing::AssertionSuccess();
}

void Problems::Add(std::string problem) {
  std::lock_guard lock(mu_);
  if (++count_ <= 20) first_.push_back(std::move(problem));
}

int Problems::count() const {
  std::lock_guard lock(mu_);
  return count_;
}

std::string Problems::Describe() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const std::string& p : first_) out += p + "\n";
  return out;
}

}  // namespace roost::testing

namespace roost::testing {

grpc::Status ServerProcess::RawCall(const std::string& method,
                                    const std::string& request,
                                    std::string* response, bool admin,
                                    grpc_compression_algorithm compression) {
  auto channel = CreateTestChannel(admin ? admin_address() : lookup_address(),
                                   credentials_, server_name_);
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  SetDeadline(&context);
  if (compression != GRPC_COMPRESS_NONE) {
    context.set_compression_algorithm(compression);
  }
  grpc::Slice slice(request);
  grpc::ByteBuffer in(&slice, 1), out;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &in, &out,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  grpc::Status status = done.get_future().get();
  if (status.ok() && response != nullptr) {
    std::vector<grpc::Slice> slices;
    response->clear();
    if (out.Dump(&slices).ok()) {
      for (const grpc::Slice& s : slices) {
        response->append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
  }
  return status;
}

}  // namespace roost::testing
