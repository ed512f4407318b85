#include "tests/harness/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "tests/harness/test_util.h"
#include "util/str_cat.h"

extern char** environ;

namespace roost::testing {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::vector<char*> Argv(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
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

}  // namespace roost::testing
