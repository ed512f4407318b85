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
//     longer than --max-key-size too), more keys than --max-batch, a
//     version (none, the served one by name or number, one never served,
//     any text), and a deadline (none, passed, or a few microseconds away);
//   - a Scan of a table (mostly the block table) from bounds and a prefix
//     (pieces of its keys, or any bytes), a limit (up to past
//     --max-scan-keys), a version and a deadline, read to its end;
//   - the input's bytes sent as they are, as a GetRequest, a MultiGetRequest,
//     a StreamMultiGet message or a ScanRequest;
//   - ListTables.
// The server's answer is checked against what it must be: the status code
// that the request's table, key count and key sizes call for (lookup.proto,
// docs/operations/reference.md), RESOURCE_EXHAUSTED exactly when the response
// would pass --max-message-size, and otherwise every key's answer from the
// fixture's pairs. Raw bytes are also parsed by request_codec and by
// protobuf, which must agree (request_codec.h: "as protobuf parses them").
//
// The pieces: request_server.h starts the server, request_oracle.h says
// what it must answer and checks it; this file draws the requests from the
// input, makes the calls and is the entry point.
#include <fuzzer/FuzzedDataProvider.h>
#include <google/protobuf/stubs/common.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/support/sync_stream.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "fuzz/request_oracle.h"
#include "fuzz/request_server.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "storage/version/data_dir.h"

namespace roost::fuzz {
namespace {

using grpc::StatusCode;
using roost::v1::GetRequest;
using roost::v1::GetResponse;
using roost::v1::MultiGetRequest;
using roost::v1::MultiGetResponse;

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

// A request's version: none, the served one by name or number, one never
// served, or any text (bad syntax, mostly).
std::string PickVersion(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 9)) {
    case 0:
      return "1";
    case 1:
      return "v000001";
    case 2:
      return "2";
    case 3:
      return "v000002";
    case 4: {
      // Printable ASCII: the generated client sends what it is given.
      std::string text = in.ConsumeRandomLengthString(24);
      for (char& c : text) c = static_cast<char>(' ' + (c & 0x3f));
      return text;
    }
    default:
      return "";
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

void DoGet(FuzzedDataProvider& in, const Server& s) {
  GetRequest request;
  request.set_table(PickTable(in));
  const std::vector<std::string> keys = PickKeys(in, s, request.table(), 1);
  request.set_key(keys[0]);
  request.set_version(PickVersion(in));
  const Deadline deadline = PickDeadline(in);
  grpc::ClientContext context;
  deadline.Apply(&context);
  GetResponse response;
  const grpc::Status status = s.stub->Get(&context, request, &response);
  const Expected want =
      ExpectFor(s, request.table(), keys, false, request.version());
  CheckStatus("Get", status, want, deadline);
  if (status.ok()) {
    MultiGetResponse got;
    got.set_version(response.version());
    response.clear_version();
    *got.add_results() = response;
    CheckResults("Get", got, want);
  }
}

MultiGetRequest PickMultiGet(FuzzedDataProvider& in, const Server& s,
                             std::vector<std::string>* keys) {
  MultiGetRequest request;
  request.set_table(PickTable(in));
  *keys = PickKeys(in, s, request.table(),
                   in.ConsumeIntegralInRange<size_t>(0, kMaxBatch + 2));
  for (const std::string& key : *keys) request.add_keys(key);
  request.set_version(PickVersion(in));
  request.set_packed(in.ConsumeBool());
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
  const Expected want = ExpectFor(s, request.table(), keys, true,
                                  request.version(), request.packed());
  CheckStatus("MultiGet", status, want, deadline);
  if (status.ok()) CheckResults("MultiGet", response, want);
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
  for (int i = 0; s.server->streams_open() > 0; ++i) {
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
    CheckResults(StrCat("StreamMultiGet message ", i), responses[i], wants[i]);
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
    wants.push_back(ExpectFor(s, request.table(), keys, true, request.version(),
                              request.packed()));
  }
  DoStream(s, requests, wants, PickDeadline(in));
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
  } else {
    GetResponse* one = got.add_results();
    if (!one->ParseFromString(received)) Fail("raw Get: bad response");
    got.set_version(one->version());
    one->clear_version();
  }
  CheckResults(batch ? "raw MultiGet" : "raw Get", got, want);
}

// A Scan of `bytes` (a serialized ScanRequest), read to its end; the
// server's side of it must end too.
void DoScanBytes(const Server& s, const std::string& bytes,
                 const ExpectedScan& want, const Deadline& deadline) {
  grpc::ClientContext context;
  deadline.Apply(&context);
  const grpc::internal::RpcMethod method(
      "/roost.v1.Lookup/Scan", grpc::internal::RpcMethod::SERVER_STREAMING);
  grpc::Slice slice(bytes);
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
          s.channel.get(), method, &context, grpc::ByteBuffer(&slice, 1)));
  std::vector<v1::ScanResponse> messages;
  grpc::ByteBuffer buffer;
  while (reader->Read(&buffer)) {
    std::vector<grpc::Slice> slices;
    std::string received;
    if (!buffer.Dump(&slices).ok()) Fail("cannot read a Scan message");
    for (const grpc::Slice& piece : slices) {
      received.append(reinterpret_cast<const char*>(piece.begin()),
                      piece.size());
    }
    if (!messages.emplace_back().ParseFromString(received)) {
      Fail("Scan: message ", messages.size() - 1, " is not a ScanResponse");
    }
  }
  const grpc::Status status = reader->Finish();
  reader.reset();
  for (int i = 0; s.server->calls_open() > 0; ++i) {
    if (i == 2000) Fail("a Scan's server side never ended");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CheckScan("Scan", status, messages, want, deadline);
}

void DoScan(FuzzedDataProvider& in, const Server& s) {
  v1::ScanRequest request;
  request.set_table(in.ConsumeBool() ? "sorted" : PickTable(in));
  const auto bound = [&](size_t max) {
    // Often a key of the table, or a piece of one.
    auto t = s.tables.find(request.table());
    if (t != s.tables.end() && !t->second->pairs.empty() && in.ConsumeBool()) {
      auto it = t->second->pairs.begin();
      std::advance(it, in.ConsumeIntegralInRange<size_t>(
                           0, t->second->pairs.size() - 1));
      return it->first.substr(0, in.ConsumeIntegralInRange<size_t>(0, max));
    }
    return in.ConsumeRandomLengthString(max);
  };
  request.set_start(bound(kMaxKeySize + 4));
  request.set_end(in.ConsumeBool() ? std::string() : bound(kMaxKeySize + 4));
  request.set_prefix(in.ConsumeBool() ? std::string() : bound(12));
  request.set_limit(in.ConsumeBool() ? 0
                                     : in.ConsumeIntegralInRange<uint32_t>(
                                           0, kMaxScanKeys + 2));
  request.set_version(PickVersion(in));
  const Deadline deadline = PickDeadline(in);
  ExpectedScan want = ExpectScan(s, request);
  // The generated code would send a table name that is not UTF-8; the
  // server refuses it.
  if (!google::protobuf::internal::IsStructurallyValidUTF8(
          request.table().data(), static_cast<int>(request.table().size()))) {
    want = {StatusCode::INVALID_ARGUMENT, {}, false};
  }
  DoScanBytes(s, request.SerializeAsString(), want, deadline);
}

void DoRawScan(FuzzedDataProvider& in, const Server& s) {
  const std::string bytes = in.ConsumeRandomLengthString(512);
  DoScanBytes(s, bytes, ExpectRawScan(s, bytes), Deadline());
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
    if (t.serving_version() != VersionDirName(kFixtureVersion) ||
        !t.previous_version().empty() || t.shard_count() != 0) {
      Fail("ListTables: table ", t.name(), " serves ", t.serving_version(),
           " (previous ", t.previous_version(), ", ", t.shard_count(),
           " shards)");
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
    switch (in.ConsumeIntegralInRange(0, 8)) {
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
      case 7:
        fuzz::DoScan(in, *server);
        break;
      case 8:
        fuzz::DoRawScan(in, *server);
        break;
    }
  }
  return 0;
}
