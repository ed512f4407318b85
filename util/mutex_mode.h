// Abseil's mutex deadlock detection, turned off for a whole process.
//
// Debian's Abseil is built without NDEBUG, which leaves the detector on by
// default: every absl::Mutex lock gRPC takes (several per call) then updates
// a global lock graph under a global lock. On a busy roost-server its
// GraphCycles functions alone took 2-3% of the CPU. Abseil built for
// release has the detector off; roost's own locks are std::mutex, which it
// never watched. Call first thing in main, before gRPC starts any thread.
#ifndef ROOST_UTIL_MUTEX_MODE_H_
#define ROOST_UTIL_MUTEX_MODE_H_

#include "absl/synchronization/mutex.h"

namespace roost {

inline void TurnOffMutexDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace roost

#endif  // ROOST_UTIL_MUTEX_MODE_H_
