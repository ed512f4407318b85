#include "tests/harness/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "tests/harness/grpc_client.h"
#include "tests/harness/roost_binaries.h"
#include "tests/harness/test_util.h"

extern char** environ;

namespace roost::testing {
namespace {

// The complete lines of `log` (up to its last newline): a line being
// written is never matched half-way.
std::string_view CompleteLines(const std::string& log) {
  const size_t end = log.rfind('\n');
  return end == std::string::npos ? std::string_view()
                                  : std::string_view(log).substr(0, end + 1);
}

}  // namespace

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
  // The address ends at the line's end or at a space (the Redis front
  // end's line goes on with "(keys are TABLE:KEY)").
  const size_t end = log.find_first_of(" \n", at + needle.size());
  const std::string address =
      log.substr(at + needle.size(), end - at - needle.size());
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

::testing::AssertionResult ServerProcess::Stop() {
  if (!Running()) return ::testing::AssertionFailure() << "not running";
  ::kill(pid_, SIGSTOP);
  // waitpid(WUNTRACED) reports the child once its group stop is complete:
  // every thread stopped.
  const auto deadline = std::chrono::steady_clock::now() + kWaitTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG | WUNTRACED);
    if (r == pid_ && WIFSTOPPED(status)) return ::testing::AssertionSuccess();
    if (r == pid_) {
      exit_code_ = ExitCode(status);
      return ::testing::AssertionFailure() << "exited instead of stopping";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return ::testing::AssertionFailure() << "not stopped after SIGSTOP";
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

}  // namespace roost::testing
