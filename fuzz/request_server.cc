#include "fuzz/request_server.h"

#include <google/protobuf/stubs/common.h>
#include <google/protobuf/stubs/logging.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>

#include "fuzz/fuzz_util.h"
#include "server/file_lease.h"

namespace roost::fuzz {
namespace {

Server* the_server = nullptr;

void ShutDown() {
  the_server->server->Shutdown(std::chrono::system_clock::now());
  the_server->registry->Stop();
}

}  // namespace

Server* StartServer() {
  // As roost-server does before any thread starts: lease breaks go to the
  // registry's signalfd only.
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, LeaseSignal());
  sigaddset(&blocked, SIGIO);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  // Requests with invalid UTF-8 are expected; protobuf need not say so.
  google::protobuf::SetLogHandler(nullptr);

  auto* s = new Server;
  const std::string data_dir = ScratchPath("data");
  std::filesystem::create_directories(data_dir);
  if (absl::Status st = PublishFixtures(data_dir, ScratchDir()); !st.ok()) {
    Fail("cannot publish the fixture tables: ", st.ToString());
  }
  for (const FixtureTable& t : FixtureTables()) s->tables[t.name] = &t;

  s->options.data_dir = data_dir;
  s->options.inotify = false;
  s->options.poll_interval_seconds = 3600;
  s->options.load_threads = 1;
  s->options.max_batch = kMaxBatch;
  s->options.max_key_size = kMaxKeySize;
  s->options.max_message_size = kMaxMessageSize;
  s->options.max_scan_keys = kMaxScanKeys;
  s->memory = std::make_unique<ResponseMemory>(s->options.max_response_memory);

  std::promise<void> ready;
  s->registry = std::make_unique<TableRegistry>(
      s->options,
      TableRegistry::Callbacks{.on_ready = [&ready] { ready.set_value(); }});
  if (absl::Status st = s->registry->Start(); !st.ok()) {
    Fail("cannot start the registry: ", st.ToString());
  }
  if (ready.get_future().wait_for(std::chrono::seconds(60)) !=
      std::future_status::ready) {
    Fail("the registry did not get ready");
  }
  s->lookup = std::make_unique<LookupService>(s->registry.get(), &s->metrics,
                                              s->memory.get(), &s->streams,
                                              &s->calls, s->options);
  grpc::ServerBuilder builder;
  // A loopback port, not the in-process channel: the HTTP/2 transport is
  // the one production runs, and gRPC 1.51's in-process transport keeps the
  // memory of some finished streams (which made this fuzzer's memory grow
  // without bound while the server's own side ended every stream).
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(s->lookup.get());
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(s->options.max_request_size));
  builder.SetMaxSendMessageSize(static_cast<int>(kMaxMessageSize + 4096));
  s->server = builder.BuildAndStart();
  if (s->server == nullptr) Fail("cannot start the gRPC server");
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  s->channel = grpc::CreateCustomChannel(
      StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials(), args);
  s->stub = roost::v1::Lookup::NewStub(s->channel);
  the_server = s;
  std::atexit(ShutDown);
  return s;
}

}  // namespace roost::fuzz
