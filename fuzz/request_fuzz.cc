// request_fuzz: roost-server's request path, end to end in one process.
//
// At start-up the fuzzer publishes the fixture tables (fixtures.h) with
// roost-load's own build, serves them with the real TableRegistry and
// LookupService on a grpc::Server on a loopback port, and talks to it over
// HTTP/2: every request goes through gRPC, the raw-bytes handlers,
// request_codec and the table readers, as from a network client. After each
// stream the server's side of it must have ended too.
//
// Each input (through FuzzedDataProvider) is a few operations:
//   - Get, MultiGet, or a StreamMultiGet of a few messages, built with the
//     generated client from a table name (a served one, a missing one, the
//     empty one, any bytes), keys (ones the table holds, or any bytes,
//     longer than --max-key-size too), more keys than --max-batch, and a
//     deadline (none, passed, or a few microseconds away);
//   - the input's bytes sent as they are, as a GetRequest, a MultiGetRequest,
//     or a StreamMultiGet message;
//   - ListTables.
// The server's answer is checked against what it must be: the status code
// that the request's table, key count and key sizes call for (lookup.proto,
// docs/operations.md), RESOURCE_EXHAUSTED exactly when the response would
// pass --max-message-size, and otherwise every key's answer from the
// fixture's pairs. Raw bytes are also parsed by request_codec and by
// protobuf, which must agree (request_codec.h: "as protobuf parses them").
#include <fuzzer/FuzzedDataProvider.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/support/sync_stream.h>
#include <signal.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fuzz/fixtures.h"
#include "fuzz/fuzz_util.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "server/file_lease.h"
#include "server/lookup_service.h"
#include "server/metrics.h"
#include "server/request_codec.h"
#include "server/response_buffer.h"
#include "server/server_options.h"
#include "server/stream_watch.h"
#include "server/table_registry.h"
#include "util/escape.h"

namespace roost::fuzz {
namespace {

using grpc::StatusCode;
using roost::v1::GetRequest;
using roost::v1::GetResponse;
using roost::v1::MultiGetRequest;
using roost::v1::MultiGetResponse;

// Limits small enough for an input of a few hundred bytes to reach.
constexpr uint32_t kMaxBatch = 16;
constexpr uint32_t kMaxKeySize = 48;
constexpr uint32_t kMaxMessageSize = 2048;

// The server, built once and never torn down (gRPC's threads would outlive
// a static destructor); shut down at exit.
struct Server {
  ServerOptions options;
  std::unique_ptr<TableRegistry> registry;
  RpcMetrics metrics;
  std::unique_ptr<ResponseMemory> memory;
  StreamWatch streams;
  CallGate calls{1000};
  std::unique_ptr<LookupService> lookup;
  std::unique_ptr<grpc::Server> server;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<roost::v1::Lookup::Stub> stub;
  std::map<std::string, const FixtureTable*> tables;
};

Server* the_server = nullptr;

void ShutDown() {
  the_server->server->Shutdown(std::chrono::system_clock::now());
  the_server->registry->Stop();
}

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

// What the server must answer to a lookup of `keys` in `table`.
struct Expected {
  StatusCode code = StatusCode::OK;
  MultiGetResponse results;  // when OK
};

Expected Expect(const Server& s, std::string_view table,
                const std::vector<std::string>& keys, bool batch) {
  Expected e;
  if (table.empty() || (batch && keys.size() > kMaxBatch)) {
    e.code = StatusCode::INVALID_ARGUMENT;
    return e;
  }
  for (const std::string& key : keys) {
    if (key.size() > kMaxKeySize) {
      e.code = StatusCode::INVALID_ARGUMENT;
      return e;
    }
  }
  auto t = s.tables.find(std::string(table));
  if (t == s.tables.end()) {
    e.code = StatusCode::NOT_FOUND;
    return e;
  }
  for (const std::string& key : keys) {
    GetResponse* r = e.results.add_results();
    auto it = t->second->pairs.find(key);
    if (it != t->second->pairs.end()) {
      r->set_found(true);
      r->set_value(it->second);
    }
  }
  const size_t size =
      batch ? e.results.ByteSizeLong() : e.results.results(0).ByteSizeLong();
  if (size > kMaxMessageSize) {
    e.code = StatusCode::RESOURCE_EXHAUSTED;
    e.results.Clear();
  }
  return e;
}

bool ValidUtf8(std::string_view s) {
  return google::protobuf::internal::IsStructurallyValidUTF8(
      s.data(), static_cast<int>(s.size()));
}

// A deadline as the input picks it: none, passed, or a few microseconds
// away (which the server may or may not see pass).
struct Deadline {
  enum Kind { kNone, kPassed, kSoon } kind = kNone;
  void Apply(grpc::ClientContext* context) const {
    const auto now = std::chrono::system_clock::now();
    if (kind == kPassed) context->set_deadline(now - std::chrono::seconds(1));
    if (kind == kSoon)
      context->set_deadline(now + std::chrono::microseconds(50));
  }
  // Whether `code` may stand for what was expected.
  bool Allows(StatusCode code) const {
    return kind != kNone && code == StatusCode::DEADLINE_EXCEEDED;
  }
};

Deadline PickDeadline(FuzzedDataProvider& in) {
  Deadline d;
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0:
      d.kind = Deadline::kPassed;
      break;
    case 1:
      d.kind = Deadline::kSoon;
      break;
    default:
      break;
  }
  return d;
}

void CheckStatus(std::string_view what, const grpc::Status& got,
                 const Expected& want, const Deadline& deadline) {
  if (deadline.kind == Deadline::kPassed) {
    if (got.error_code() != StatusCode::DEADLINE_EXCEEDED) {
      Fail(what, " past its deadline: ", +got.error_code(), " ",
           got.error_message());
    }
    return;
  }
  if (got.error_code() != want.code && !deadline.Allows(got.error_code())) {
    Fail(what, ": status ", +got.error_code(), " (", got.error_message(),
         ") where ", +want.code, " was expected");
  }
}

void CheckResults(std::string_view what, const MultiGetResponse& got,
                  const MultiGetResponse& want) {
  if (got.results_size() != want.results_size()) {
    Fail(what, ": ", got.results_size(), " results for ", want.results_size(),
         " keys");
  }
  for (int i = 0; i < got.results_size(); ++i) {
    const GetResponse& g = got.results(i);
    const GetResponse& w = want.results(i);
    if (g.found() != w.found() || g.value() != w.value()) {
      Fail(what, ": key ", i, " gives found=", g.found(), " value ",
           PrintableKey(g.value()), " where found=", w.found(), " value ",
           PrintableKey(w.value()), " was expected");
    }
  }
}

std::string PickTable(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 9)) {
    case 0:
      return "";
    case 1:
      return "no-such-table";
    case 2:
      return in.ConsumeRandomLengthString(24);
    case 3:
      return "fixed";
    case 4:
      return "sorted";
    case 5:
      return "empty";
    default:
      return "kv";
  }
}

std::vector<std::string> PickKeys(FuzzedDataProvider& in, const Server& s,
                                  const std::string& table, size_t count) {
  std::vector<std::string> keys;
  auto t = s.tables.find(table);
  for (size_t i = 0; i < count; ++i) {
    if (t != s.tables.end() && !t->second->pairs.empty() && in.ConsumeBool()) {
      auto it = t->second->pairs.begin();
      std::advance(it, in.ConsumeIntegralInRange<size_t>(
                           0, t->second->pairs.size() - 1));
      keys.push_back(it->first);
    } else {
      keys.push_back(in.ConsumeRandomLengthString(kMaxKeySize + 8));
    }
  }
  return keys;
}

// Table names with invalid UTF-8 are refused when the request is parsed.
Expected ExpectFor(const Server& s, const std::string& table,
                   const std::vector<std::string>& keys, bool batch) {
  if (!ValidUtf8(table)) return {StatusCode::INVALID_ARGUMENT, {}};
  return Expect(s, table, keys, batch);
}

void DoGet(FuzzedDataProvider& in, const Server& s) {
  GetRequest request;
  request.set_table(PickTable(in));
  const std::vector<std::string> keys = PickKeys(in, s, request.table(), 1);
  request.set_key(keys[0]);
  const Deadline deadline = PickDeadline(in);
  grpc::ClientContext context;
  deadline.Apply(&context);
  GetResponse response;
  const grpc::Status status = s.stub->Get(&context, request, &response);
  const Expected want = ExpectFor(s, request.table(), keys, false);
  CheckStatus("Get", status, want, deadline);
  if (status.ok()) {
    MultiGetResponse got;
    *got.add_results() = response;
    CheckResults("Get", got, want.results);
  }
}

MultiGetRequest PickMultiGet(FuzzedDataProvider& in, const Server& s,
                             std::vector<std::string>* keys) {
  MultiGetRequest request;
  request.set_table(PickTable(in));
  *keys = PickKeys(in, s, request.table(),
                   in.ConsumeIntegralInRange<size_t>(0, kMaxBatch + 2));
  for (const std::string& key : *keys) request.add_keys(key);
  return request;
}

void DoMultiGet(FuzzedDataProvider& in, const Server& s) {
  std::vector<std::string> keys;
  const MultiGetRequest request = PickMultiGet(in, s, &keys);
  const Deadline deadline = PickDeadline(in);
  grpc::ClientContext context;
  deadline.Apply(&context);
  MultiGetResponse response;
  const grpc::Status status = s.stub->MultiGet(&context, request, &response);
  const Expected want = ExpectFor(s, request.table(), keys, true);
  CheckStatus("MultiGet", status, want, deadline);
  if (status.ok()) CheckResults("MultiGet", response, want.results);
}

// A StreamMultiGet of `requests` (serialized MultiGetRequests), each
// expected to be answered as `wants` says: responses in order up to the
// first that is not OK, which ends the stream with its status.
void DoStream(const Server& s, const std::vector<std::string>& requests,
              const std::vector<Expected>& wants, const Deadline& deadline) {
  grpc::ClientContext context;
  deadline.Apply(&context);
  const grpc::internal::RpcMethod method(
      "/roost.v1.Lookup/StreamMultiGet",
      grpc::internal::RpcMethod::BIDI_STREAMING);
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>>
      stream(grpc::internal::ClientReaderWriterFactory<
             grpc::ByteBuffer, grpc::ByteBuffer>::Create(s.channel.get(),
                                                         method, &context));
  std::vector<MultiGetResponse> responses;
  for (const std::string& bytes : requests) {
    grpc::Slice slice(bytes);
    if (!stream->Write(grpc::ByteBuffer(&slice, 1))) break;
    grpc::ByteBuffer buffer;
    if (!stream->Read(&buffer)) break;
    std::vector<grpc::Slice> slices;
    std::string received;
    if (!buffer.Dump(&slices).ok()) Fail("cannot read a stream response");
    for (const grpc::Slice& piece : slices) {
      received.append(reinterpret_cast<const char*>(piece.begin()),
                      piece.size());
    }
    if (!responses.emplace_back().ParseFromString(received)) {
      Fail("StreamMultiGet: response ", responses.size() - 1,
           " is not a MultiGetResponse");
    }
  }
  stream->WritesDone();
  const grpc::Status status = stream->Finish();
  stream.reset();
  // The server's side of the stream must end too (its reactor's OnDone),
  // or every such stream would hold its memory for good.
  for (int i = 0; s.streams.open() > 0; ++i) {
    if (i == 2000) Fail("a StreamMultiGet's server side never ended");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  size_t ok = 0;
  while (ok < wants.size() && wants[ok].code == StatusCode::OK) ++ok;
  const Expected end = ok < wants.size() ? wants[ok] : Expected{};
  CheckStatus("StreamMultiGet", status, end, deadline);
  if (deadline.kind == Deadline::kNone && responses.size() != ok) {
    Fail("StreamMultiGet: ", responses.size(), " responses where ", ok,
         " were expected");
  }
  if (responses.size() > ok) {
    Fail("StreamMultiGet: a response after an error");
  }
  for (size_t i = 0; i < responses.size(); ++i) {
    CheckResults(StrCat("StreamMultiGet message ", i), responses[i],
                 wants[i].results);
  }
  if (!status.ok() && status.error_code() != StatusCode::DEADLINE_EXCEEDED &&
      status.error_message().rfind(StrCat("request ", ok, ": "), 0) != 0) {
    Fail("StreamMultiGet: error \"", status.error_message(),
         "\" does not name request ", ok);
  }
}

void DoTypedStream(FuzzedDataProvider& in, const Server& s) {
  std::vector<std::string> requests;
  std::vector<Expected> wants;
  const size_t n = in.ConsumeIntegralInRange<size_t>(0, 4);
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> keys;
    const MultiGetRequest request = PickMultiGet(in, s, &keys);
    requests.push_back(request.SerializeAsString());
    wants.push_back(ExpectFor(s, request.table(), keys, true));
  }
  DoStream(s, requests, wants, PickDeadline(in));
}

// request_codec against protobuf on the same bytes; the expectation for
// the server from protobuf's reading.
Expected ExpectRaw(const Server& s, std::string_view bytes, bool batch) {
  LookupRequest parsed;
  const absl::Status codec =
      batch ? ParseMultiGetRequest(bytes, kMaxBatch, &parsed)
            : ParseGetRequest(bytes, &parsed);
  std::string table;
  std::vector<std::string> keys;
  bool proto_ok;
  if (batch) {
    MultiGetRequest r;
    proto_ok = r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    table = r.table();
    keys.assign(r.keys().begin(), r.keys().end());
  } else {
    GetRequest r;
    proto_ok = r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    table = r.table();
    keys.push_back(r.key());
  }
  if (codec.ok() != proto_ok) {
    Fail("request_codec ", codec.ok() ? "accepts" : "refuses",
         " bytes protobuf ", proto_ok ? "accepts" : "refuses", " as a ",
         batch ? "MultiGetRequest" : "GetRequest", ": ", codec.ToString(),
         "; the bytes: ", PrintableKey(bytes, 1024));
  }
  if (!proto_ok) return {StatusCode::INVALID_ARGUMENT, {}};
  if (parsed.table != table || parsed.total_keys != keys.size() ||
      parsed.keys.size() !=
          std::min<size_t>(keys.size(), batch ? kMaxBatch : 1)) {
    Fail("request_codec reads table ", PrintableKey(parsed.table), " and ",
         parsed.total_keys, " keys where protobuf reads ", PrintableKey(table),
         " and ", keys.size());
  }
  for (size_t i = 0; i < parsed.keys.size(); ++i) {
    if (parsed.keys[i] != keys[i]) {
      Fail("request_codec reads key ", i, " as ", PrintableKey(parsed.keys[i]),
           " where protobuf reads ", PrintableKey(keys[i]));
    }
  }
  return Expect(s, table, keys, batch);
}

void DoRaw(FuzzedDataProvider& in, const Server& s, int kind) {
  const std::string bytes = in.ConsumeRandomLengthString(512);
  const bool batch = kind != 0;
  const Expected want = ExpectRaw(s, bytes, batch);
  if (kind == 2) {
    DoStream(s, {bytes}, {want}, Deadline());
    return;
  }
  const grpc::internal::RpcMethod method(
      batch ? "/roost.v1.Lookup/MultiGet" : "/roost.v1.Lookup/Get",
      grpc::internal::RpcMethod::NORMAL_RPC);
  grpc::ClientContext context;
  grpc::Slice slice(bytes);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  const grpc::Status status =
      grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
          s.channel.get(), method, &context, request, &response);
  CheckStatus(batch ? "raw MultiGet" : "raw Get", status, want, Deadline());
  if (!status.ok()) return;
  std::vector<grpc::Slice> slices;
  std::string received;
  if (response.Length() > 0 && !response.Dump(&slices).ok()) {
    Fail("cannot read a response");
  }
  for (const grpc::Slice& piece : slices) {
    received.append(reinterpret_cast<const char*>(piece.begin()), piece.size());
  }
  MultiGetResponse got;
  if (batch) {
    if (!got.ParseFromString(received)) Fail("raw MultiGet: bad response");
  } else if (!got.add_results()->ParseFromString(received)) {
    Fail("raw Get: bad response");
  }
  CheckResults(batch ? "raw MultiGet" : "raw Get", got, want.results);
}

void DoListTables(const Server& s) {
  grpc::ClientContext context;
  roost::v1::ListTablesResponse response;
  const grpc::Status status =
      s.stub->ListTables(&context, roost::v1::ListTablesRequest(), &response);
  if (!status.ok()) Fail("ListTables: ", status.error_message());
  if (static_cast<size_t>(response.tables_size()) != s.tables.size()) {
    Fail("ListTables lists ", response.tables_size(), " tables");
  }
  for (const roost::v1::TableInfo& t : response.tables()) {
    auto it = s.tables.find(t.name());
    if (it == s.tables.end() || t.key_count() != it->second->pairs.size()) {
      Fail("ListTables: table ", t.name(), " with ", t.key_count(), " keys");
    }
  }
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  static fuzz::Server* server = fuzz::StartServer();
  FuzzedDataProvider in(data, size);
  const int operations = in.ConsumeIntegralInRange(1, 4);
  for (int i = 0; i < operations && in.remaining_bytes() > 0; ++i) {
    switch (in.ConsumeIntegralInRange(0, 6)) {
      case 0:
        fuzz::DoGet(in, *server);
        break;
      case 1:
        fuzz::DoMultiGet(in, *server);
        break;
      case 2:
        fuzz::DoTypedStream(in, *server);
        break;
      case 3:
        fuzz::DoRaw(in, *server, 0);
        break;
      case 4:
        fuzz::DoRaw(in, *server, 1);
        break;
      case 5:
        fuzz::DoRaw(in, *server, 2);
        break;
      case 6:
        fuzz::DoListTables(*server);
        break;
    }
  }
  return 0;
}
