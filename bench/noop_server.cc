// noop_server: a roost.v1.Lookup server that looks nothing up, the ceiling
// against which bench/server_bench.sh measures roost-server. Get and MultiGet
// answer found=true with the same --value-size bytes for every key (one
// result per key, in the request's order; in the packed form when the
// MultiGet asks for it), whatever the table; ListTables
// answers an empty list. It uses the same gRPC callback service API (raw
// methods), the same message size limits and the same request parsing and
// response writing as roost-server (server/request_codec.h), so what is
// left is gRPC's own cost: transport and the same bytes on the wire.
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
#include "server/request_codec.h"
#include "util/mutex_mode.h"

namespace {

using RawLookup = roost::v1::Lookup::WithRawCallbackMethod_Get<
    roost::v1::Lookup::WithRawCallbackMethod_MultiGet<
        roost::v1::Lookup::WithRawCallbackMethod_ListTables<
            roost::v1::Lookup::Service>>>;

class NoopLookup final : public RawLookup {
 public:
  explicit NoopLookup(std::string value) : value_(std::move(value)) {}

  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* context,
                                const grpc::ByteBuffer* request,
                                grpc::ByteBuffer* response) override {
    return Answer(context, *request, response, /*batch=*/false);
  }

  grpc::ServerUnaryReactor* MultiGet(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override {
    return Answer(context, *request, response, /*batch=*/true);
  }

  grpc::ServerUnaryReactor* ListTables(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* /*request*/,
      grpc::ByteBuffer* /*response*/) override {
    return Finish(context, grpc::Status::OK);
  }

 private:
  grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer& request,
                                   grpc::ByteBuffer* response, bool batch) {
    grpc::Slice in;
    if (request.Length() > 0 && !request.TrySingleSlice(&in).ok() &&
        !request.DumpToSingleSlice(&in).ok()) {
      return Finish(context, grpc::Status(grpc::StatusCode::INTERNAL, ""));
    }
    const std::string_view bytes(reinterpret_cast<const char*>(in.begin()),
                                 in.size());
    thread_local roost::LookupRequest parsed;
    const absl::Status s =
        batch ? roost::ParseMultiGetRequest(bytes, SIZE_MAX, &parsed)
              : roost::ParseGetRequest(bytes, &parsed);
    if (!s.ok()) {
      return Finish(context, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                          std::string(s.message())));
    }
    const roost::EncodedResult result{true, value_};
    const size_t n = parsed.keys.size();
    if (batch && parsed.packed) {
      // The packed form, written by roost-server's own codec.
      roost::PackedMultiGet packed;
      for (size_t i = 0; i < n; ++i) packed.Count(result);
      grpc::Slice out(packed.size());
      packed.Start(reinterpret_cast<char*>(const_cast<uint8_t*>(out.begin())));
      for (size_t i = 0; i < n; ++i) packed.Write(result);
      *response = grpc::ByteBuffer(&out, 1);
      return Finish(context, grpc::Status::OK);
    }
    const size_t size = batch ? n * roost::MultiGetEntrySize(result)
                              : roost::GetResponseSize(result);
    grpc::Slice out(size);
    char* p = reinterpret_cast<char*>(const_cast<uint8_t*>(out.begin()));
    for (size_t i = 0; i < n; ++i) {
      p = batch ? roost::WriteMultiGetEntry(result, p)
                : roost::WriteGetResponse(result, p);
    }
    *response = grpc::ByteBuffer(&out, 1);
    return Finish(context, grpc::Status::OK);
  }

  static grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context,
                                          const grpc::Status& status) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }

  const std::string value_;
};

}  // namespace

int main(int argc, char** argv) {
  roost::TurnOffMutexDeadlockDetection();
  std::string listen = "127.0.0.1:0";
  uint32_t value_size = 8;
  // roost-server's default --max-message-size.
  constexpr int kMaxMessageSize = 32 << 20;

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
