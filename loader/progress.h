// Progress: what a running build reports on stderr. On a terminal, one line
// redrawn a few times a second; otherwise, a line every few seconds; quiet,
// nothing.
#ifndef ROOST_LOADER_PROGRESS_H_
#define ROOST_LOADER_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace roost {

class Progress {
 public:
  enum Mode { kQuiet, kLines, kTerminal };
  // kTerminal when stderr is a terminal, else kLines (unless quiet).
  static Mode DefaultMode(bool quiet);

  explicit Progress(Mode mode);

  // Starts a phase ("read", "sort", "build", "verify", "publish").
  void Phase(const std::string& name);
  // Records and bytes done so far in this phase; cheap enough to call per
  // record (it looks at the clock every few thousand calls).
  void Update(uint64_t records, uint64_t bytes) {
    if (Due()) Report(records, bytes, false);
  }
  // Update, with the bytes asked of `bytes()` only when they are reported.
  template <typename Bytes>
  void UpdateWith(uint64_t records, Bytes bytes) {
    if (Due()) Report(records, bytes(), false);
  }
  // Ends the current phase, printing its last figures.
  void Done(uint64_t records, uint64_t bytes);
  // Prints a message on its own line (a skipped record, a retry).
  void Note(const std::string& message);
  // Prints a warning on its own line, quiet or not: something about the
  // input the user should know although the build goes on.
  void Warn(const std::string& message);

 private:
  bool Due() { return (++calls_ & 4095) == 0; }
  void Report(uint64_t records, uint64_t bytes, bool final);

  using Clock = std::chrono::steady_clock;
  const Mode mode_;
  std::string phase_;
  Clock::time_point phase_start_;
  Clock::time_point last_print_;
  uint64_t calls_ = 0;
  bool line_open_ = false;
};

}  // namespace roost

#endif  // ROOST_LOADER_PROGRESS_H_
