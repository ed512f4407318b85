#include "tests/harness/versioned_tables.h"

#include <cstdlib>

#include "util/str_cat.h"

namespace roost::testing {

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

}  // namespace roost::testing
