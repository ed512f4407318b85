// The binaries under test: the ones built beside the tests, or those that
// ROOST_TEST_LOAD_BINARY, ROOST_TEST_SERVER_BINARY, ROOST_TEST_GET_BINARY
// and ROOST_TEST_ADMIN_BINARY name (to show that a test fails against an
// earlier build).
#ifndef ROOST_TESTS_HARNESS_ROOST_BINARIES_H_
#define ROOST_TESTS_HARNESS_ROOST_BINARIES_H_

namespace roost::testing {

const char* RoostLoadBinary();
const char* RoostServerBinary();
const char* RoostGetBinary();
const char* RoostAdminBinary();

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_ROOST_BINARIES_H_
