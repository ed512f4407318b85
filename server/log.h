// Log: one line on stderr, "roost-server: " and the text of its arguments.
// The lines are a contract (server/README.md lists them); one write(2) per
// line keeps lines from different threads whole.
//
// Example:
//   Log("serving ", table, " ", version_name);
#ifndef ROOST_SERVER_LOG_H_
#define ROOST_SERVER_LOG_H_

#include <cstdio>
#include <string>

#include "storage/str_cat.h"

namespace roost {

template <typename... Args>
void Log(const Args&... args) {
  const std::string line = StrCat("roost-server: ", args..., "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace roost

#endif  // ROOST_SERVER_LOG_H_
