// Child processes for the end-to-end tests: running one to completion with
// its output captured, the memory one uses, and polling for what one does.
#ifndef ROOST_TESTS_HARNESS_CHILD_PROCESS_H_
#define ROOST_TESTS_HARNESS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace roost::testing {

// How long any wait in these tests may take before it fails. Generous: the
// suite also runs under AddressSanitizer on a busy two-core machine.
inline constexpr std::chrono::milliseconds kWaitTimeout{20000};

// Polls `condition` every 10 ms until it holds (true) or `timeout` passes
// (false).
bool WaitFor(const std::function<bool()>& condition,
             std::chrono::milliseconds timeout = kWaitTimeout);

// A finished child process.
struct ProcessResult {
  // The exit status; 128 + N when killed by signal N; -1 when it could not
  // be started.
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `argv` (argv[0] is a path) to completion, stdin from /dev/null,
// capturing stdout and stderr.
ProcessResult RunProcess(const std::vector<std::string>& argv);

// The exit status of a waitpid() status word, as ProcessResult::exit_code
// gives it.
int ExitCode(int status);

// argv for posix_spawn; the strings must outlive the returned vector.
std::vector<char*> Argv(const std::vector<std::string>& args);

// The memory a process uses now and at its peak, from /proc/PID/status.
struct ProcessMemory {
  uint64_t rss = 0;
  uint64_t peak_rss = 0;
};
ProcessMemory MemoryOf(pid_t pid);

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_CHILD_PROCESS_H_
