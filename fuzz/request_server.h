// request_fuzz's server: the fixture tables (fixtures.h) published with
// roost-load's own build and served by roost-server's own Server
// (server/server.h: the registry, the lookup service, its listener and
// limits) on a loopback port, with a channel and a stub to it. Built once, on
// the first input, and never torn down (gRPC's threads would outlive a static
// destructor); shut down at exit.
#ifndef ROOST_FUZZ_REQUEST_SERVER_H_
#define ROOST_FUZZ_REQUEST_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "fuzz/fixtures.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "server/server.h"
#include "server/server_options.h"

namespace roost::fuzz {

// Limits small enough for an input of a few hundred bytes to reach.
inline constexpr uint32_t kMaxBatch = 16;
inline constexpr uint32_t kMaxKeySize = 48;
inline constexpr uint32_t kMaxMessageSize = 2048;
inline constexpr uint32_t kMaxScanKeys = 40;

struct Server {
  ServerOptions options;
  std::unique_ptr<roost::Server> server;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<roost::v1::Lookup::Stub> stub;
  std::map<std::string, const FixtureTable*> tables;
};

// Publishes the fixtures, starts the server with the limits above and
// connects to it; Fail()s when any of it goes wrong.
Server* StartServer();

}  // namespace roost::fuzz

#endif  // ROOST_FUZZ_REQUEST_SERVER_H_
