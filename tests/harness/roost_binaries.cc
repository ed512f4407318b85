#include "tests/harness/roost_binaries.h"

#include <cstdlib>

namespace roost::testing {
namespace {
// The binary built beside the tests, unless the environment names another
// (to run the tests against an earlier build, say).
const char* Binary(const char* variable, const char* built) {
  const char* other = std::getenv(variable);
  return other != nullptr && *other != '\0' ? other : built;
}
}  // namespace

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

}  // namespace roost::testing
