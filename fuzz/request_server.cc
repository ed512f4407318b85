#include "fuzz/request_server.h"

#include <google/protobuf/stubs/common.h>
#include <google/protobuf/stubs/logging.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "fuzz/fuzz_util.h"
#include "server/file_lease.h"

namespace roost::fuzz {
namespace {

Server* the_server = nullptr;

void ShutDown() { the_server->server->Shutdown(); }

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
  s->options.listen = "127.0.0.1:0";
  s->options.admin_listen.clear();
  s->options.metrics_listen.clear();
  s->options.reflection = false;
  s->options.inotify = false;
  s->options.poll_interval_seconds = 3600;
  s->options.load_threads = 1;
  s->options.max_batch = kMaxBatch;
  s->options.max_key_size = kMaxKeySize;
  s->options.max_message_size = kMaxMessageSize;
  s->options.max_scan_keys = kMaxScanKeys;
  s->options.max_in_flight = 1000;
  // At exit, calls still open are cancelled at once.
  s->options.shutdown_timeout_seconds = 0;

  // A loopback port, not the in-process channel: the HTTP/2 transport is
  // the one production runs, and gRPC 1.51's in-process transport keeps the
  // memory of some finished streams (which made this fuzzer's memory grow
  // without bound while the server's own side ended every stream).
  auto server = roost::Server::Create(s->options);
  if (!server.ok()) {
    Fail("cannot start the server: ", server.status().ToString());
  }
  s->server = std::move(*server);
  if (absl::Status st = s->server->Start(); !st.ok()) {
    Fail("cannot start the registry: ", st.ToString());
  }
  for (int i = 0; !s->server->ready(); ++i) {
    if (i == 60000) Fail("the registry did not get ready");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  s->channel =
      grpc::CreateCustomChannel(StrCat("127.0.0.1:", s->server->lookup_port()),
                                grpc::InsecureChannelCredentials(), args);
  s->stub = roost::v1::Lookup::NewStub(s->channel);
  the_server = s;
  std::atexit(ShutDown);
  return s;
}

}  // namespace roost::fuzz
