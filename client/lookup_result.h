// What the clients' lookups answer, one key at a time.
#ifndef ROOST_CLIENT_LOOKUP_RESULT_H_
#define ROOST_CLIENT_LOOKUP_RESULT_H_

#include <string>

namespace roost {

struct LookupResult {
  bool found = false;
  std::string value;
};

struct GetResult {
  bool found = false;
  std::string value;
  std::string version;  // the version that answered ("" from old servers)
};

}  // namespace roost

#endif  // ROOST_CLIENT_LOOKUP_RESULT_H_
