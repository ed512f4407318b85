// End-to-end test harness for roost-server: tables built by the real
// roost-load, the real roost-server started as a child process on loopback,
// and real gRPC clients (Lookup, Admin, Health) talking to it. /metrics is
// fetched over a plain socket and its Prometheus text parsed.
//
// Nothing here is mocked: a test drives the same binaries an operator does.
// Waits are polls with generous timeouts (kWaitTimeout) that fail with the
// server's log attached, never assertions about speed.
//
// This is the one header the server suites include. Its parts, one idea
// each:
//   roost_binaries.h    which roost-load, roost-server, roost-get and
//                       roost-admin are under test
//   child_process.h     running a process to completion, its memory,
//                       polling (WaitFor, kWaitTimeout)
//   build_table.h       tables built and published by roost-load
//   server_process.h    the roost-server child process, its log, ports and
//                       calls (server_process.cc, server_calls.cc)
//   grpc_client.h       test channels, IsOk and IsError
//   versioned_tables.h  tables whose values name their version
//   problems.h          what client threads saw go wrong
//   metrics_scrape.h    /metrics fetched and parsed
// and, included by the suites that need them: pki.h (a throwaway PKI) and
// stalled_http2_client.h (an HTTP/2 client by hand that never takes a
// response).
//
// Example:
//   ScratchDir scratch;
//   const std::string data = scratch.File("data");
//   ASSERT_NE(BuildTable(data, "users", {{"k", "v"}}), "");
//   ServerProcess server({.data_dir = data}, scratch.File("server.log"));
//   ASSERT_TRUE(server.WaitReady());
//   v1::GetResponse response;
//   ASSERT_TRUE(server.Get("users", "k", &response).ok());
#ifndef ROOST_TESTS_HARNESS_SERVER_HARNESS_H_
#define ROOST_TESTS_HARNESS_SERVER_HARNESS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/harness/build_table.h"
#include "tests/harness/child_process.h"
#include "tests/harness/grpc_client.h"
#include "tests/harness/metrics_scrape.h"
#include "tests/harness/problems.h"
#include "tests/harness/roost_binaries.h"
#include "tests/harness/server_process.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "tests/harness/versioned_tables.h"

namespace roost::testing {

// A test with its own scratch directory and data directory (made by the
// first BuildTable, or by the test).
class ServerFixture : public ::testing::Test {
 protected:
  // The harness's defaults, serving data_.
  ServerFlags Flags() const {
    ServerFlags flags;
    flags.data_dir = data_;
    return flags;
  }
  // A log file in the scratch directory.
  std::string LogFile(const std::string& name = "server") const {
    return scratch_.File(name + ".log");
  }
  std::string TableDir(const std::string& table = "t") const {
    return data_ + "/" + table;
  }

  ScratchDir scratch_;
  const std::string data_ = scratch_.File("data");
};

using Names = std::vector<std::string>;
inline Names Strings(
    const google::protobuf::RepeatedPtrField<std::string>& field) {
  return Names(field.begin(), field.end());
}

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_SERVER_HARNESS_H_
