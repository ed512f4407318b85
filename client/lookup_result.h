// What the clients' lookups answer, one key at a time.
#ifndef ROOST_CLIENT_LOOKUP_RESULT_H_
#define ROOST_CLIENT_LOOKUP_RESULT_H_

#include <string>

#include "absl/status/status.h"

namespace roost {

struct LookupResult {
  bool found = false;
  std::string value;
  // With partial answers (ClusterClientOptions::partial_answers): the error
  // of the key's shard when it could not answer (then found is false);
  // otherwise OK.
  absl::Status error;
};

struct GetResult {
  bool found = false;
  std::string value;
  std::string version;  // the version that answered ("" from old servers)
};

}  // namespace roost

#endif  // ROOST_CLIENT_LOOKUP_RESULT_H_
