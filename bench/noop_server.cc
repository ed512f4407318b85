// noop_server: a roost.v1.Lookup server that looks nothing up, the ceiling
// against which bench/server_bench.sh measures roost-server. Get and MultiGet
// answer found=true with the same --value-size bytes for every key (one
// result per key, in the request's order), whatever the table; ListTables
// answers an empty list. It uses the same gRPC callback service API and the
// same message size limits and the same per-RPC protobuf arenas as
// roost-server, so what is left is gRPC's own cost: transport, parsing and
// serializing the same messages.
//
//   noop_server [--listen 127.0.0.1:0] [--value-size 8]
//
// Logs to stderr `noop_server: listening on HOST:PORT` (the bound port, also
// for port 0) once serving; on SIGINT or SIGTERM it shuts down, logs
// `noop_server: stopped`, and exits 0.

#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "fmt/format.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "server/arena_allocator.h"

namespace {

class NoopLookup final : public roost::v1::Lookup::CallbackService {
 public:
  explicit NoopLookup(std::string value) : value_(std::move(value)) {
    SetMessageAllocatorFor_Get(&get_allocator_);
    SetMessageAllocatorFor_MultiGet(&multi_get_allocator_);
  }

  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* context,
                                const roost::v1::GetRequest* /*request*/,
                                roost::v1::GetResponse* response) override {
    response->set_found(true);
    response->set_value(value_);
    return Finish(context);
  }

  grpc::ServerUnaryReactor* MultiGet(
      grpc::CallbackServerContext* context,
      const roost::v1::MultiGetRequest* request,
      roost::v1::MultiGetResponse* response) override {
    response->mutable_results()->Reserve(request->keys_size());
    for (int i = 0; i < request->keys_size(); ++i) {
      roost::v1::GetResponse* result = response->add_results();
      result->set_found(true);
      result->set_value(value_);
    }
    return Finish(context);
  }

  grpc::ServerUnaryReactor* ListTables(
      grpc::CallbackServerContext* context,
      const roost::v1::ListTablesRequest* /*request*/,
      roost::v1::ListTablesResponse* /*response*/) override {
    return Finish(context);
  }

 private:
  static grpc::ServerUnaryReactor* Finish(
      grpc::CallbackServerContext* context) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  const std::string value_;
  roost::ArenaMessageAllocator<roost::v1::GetRequest, roost::v1::GetResponse>
      get_allocator_;
  roost::ArenaMessageAllocator<roost::v1::MultiGetRequest,
                               roost::v1::MultiGetResponse>
      multi_get_allocator_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string listen = "127.0.0.1:0";
  uint32_t value_size = 8;
  // roost-server's default --max-message-size.
  constexpr int kMaxMessageSize = 64 << 20;

  CLI::App app{
      "noop_server: a roost.v1.Lookup server that answers every key with "
      "found=true and a fixed value, without looking anything up."};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--listen", listen, "HOST:PORT to serve on; port 0 picks one")
      ->capture_default_str();
  app.add_option("--value-size", value_size, "Bytes of every value")
      ->check(CLI::Range(uint32_t{0}, uint32_t{16} << 20))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  // Before gRPC starts any thread, so that all of them inherit the mask and
  // the signals reach sigwait below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  NoopLookup service(std::string(value_size, 'v'));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(kMaxMessageSize);
  builder.SetMaxSendMessageSize(kMaxMessageSize);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    fmt::print(stderr, "noop_server: cannot listen on {}\n", listen);
    return 1;
  }
  const size_t colon = listen.rfind(':');
  fmt::print(stderr, "noop_server: listening on {}:{}\n",
             listen.substr(0, colon == std::string::npos ? 0 : colon), port);

  int signal = 0;
  sigwait(&signals, &signal);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  fmt::print(stderr, "noop_server: stopped\n");
  return 0;
}
