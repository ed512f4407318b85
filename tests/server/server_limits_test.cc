// roost-server end to end: what one client can make the server do. No
// request may kill it, grow its memory without bound, flood its log or get
// an answer that depends on the data where the contract does not. See
// tests/harness/server_harness.h.

#include <grpcpp/generic/generic_stub.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "tests/harness/server_harness.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;

class LimitsTest : public ServerFixture {
 protected:
  // `n` keys "k0".."k{n-1}", each with a value of `size` bytes.
  KeyValues BigValues(int n, size_t size) {
    KeyValues kvs;
    for (int i = 0; i < n; ++i) {
      kvs[StrCat("k", i)] = std::string(size, static_cast<char>('a' + i % 26));
    }
    return kvs;
  }
  // A MultiGetRequest of table "t" and `keys` copies of key `key`, as
  // bytes.
  static std::string RepeatedKeyRequest(const std::string& key, size_t keys) {
    std::string bytes = "\x0a\x01t";
    const std::string one = StrCat("\x12", static_cast<char>(key.size()), key);
    bytes.reserve(bytes.size() + keys * one.size());
    for (size_t i = 0; i < keys; ++i) bytes += one;
    return bytes;
  }
};

bool UnderSanitizers() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#else
  return false;
#endif
}

// Defect 1: 8,000 copies of a key with a 300 KB value ask for a 2.4 GB
// answer; protobuf cannot serialize past 2 GiB, and gRPC aborted the
// process. The response is now sized before anything is copied.
TEST_F(LimitsTest, AnAnswerPastTwoGibibytesIsRefusedNotFatal) {
  ASSERT_NE(BuildTable(data_, "t", BigValues(4, 300000)), "");
  ServerFlags flags = Flags();
  flags.extra = {"--max-message-size", "2147483647"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  const std::string kTooLarge =
      "the response would be larger than --max-message-size (2147483647 "
      "bytes)";
  std::string response;
  EXPECT_TRUE(IsError(server.RawCall("/roost.v1.Lookup/MultiGet",
                                     RepeatedKeyRequest("k0", 8000), &response),
                      StatusCode::RESOURCE_EXHAUSTED, kTooLarge));
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(20));
    auto stream = server.lookup().StreamMultiGet(&context);
    v1::MultiGetRequest request;
    request.set_table("t");
    for (int i = 0; i < 8000; ++i) request.add_keys("k1");
    v1::MultiGetResponse r;
    EXPECT_FALSE(stream->Write(request) && stream->Read(&r));
    EXPECT_TRUE(IsError(stream->Finish(), StatusCode::RESOURCE_EXHAUSTED,
                        "request 0: " + kTooLarge));
  }
  ASSERT_TRUE(server.Running());
  v1::GetResponse g;
  ASSERT_OK(server.Get("t", "k2", &g));
  EXPECT_EQ(g.value().size(), 300000u);
  // Nothing near the answer's size was ever allocated.
  EXPECT_LT(MemoryOf(server.pid()).peak_rss, uint64_t{1} << 30);
}

// Defect 2: a 60 MB request of 30 million empty keys took the server to
// 2 GB before --max-batch was looked at, and a gzip request weighing 61 KB
// did the same. Requests are now bounded by --max-request-size (4 MiB),
// their keys counted before any is kept, and compressed ones refused.
TEST_F(LimitsTest, OversizedAndCompressedRequestsAreRefusedBeforeTheyGrow) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());

  std::string response;
  const grpc::Status huge = server.RawCall(
      "/roost.v1.Lookup/MultiGet", RepeatedKeyRequest("", 30000000), &response);
  EXPECT_EQ(huge.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(huge.error_message().rfind("Received message larger than max (", 0),
            0u)
      << huge.error_message();
  // Under the request limit, but with 200 times --max-batch keys.
  EXPECT_TRUE(
      IsError(server.RawCall("/roost.v1.Lookup/MultiGet",
                             RepeatedKeyRequest("", 2000000), &response),
              StatusCode::INVALID_ARGUMENT,
              "MultiGet of 2000000 keys exceeds --max-batch 10000"));
  // A small request, compressed: refused, whatever it would unpack to.
  const grpc::Status gzip = server.RawCall(
      "/roost.v1.Lookup/MultiGet", RepeatedKeyRequest("k", 3), &response,
      /*admin=*/false, GRPC_COMPRESS_GZIP);
  EXPECT_EQ(gzip.error_code(), StatusCode::UNIMPLEMENTED)
      << gzip.error_message();
  ASSERT_OK(server.RawCall("/roost.v1.Lookup/MultiGet",
                           RepeatedKeyRequest("k", 3), &response));
  v1::MultiGetResponse m;
  ASSERT_TRUE(m.ParseFromString(response));
  ASSERT_EQ(m.results_size(), 3);
  EXPECT_EQ(m.results(2).value(), "v");
  // The 30 million keys never became 30 million strings.
  EXPECT_LT(MemoryOf(server.pid()).peak_rss, uint64_t{600} << 20);
}

// Defect 2: responses waiting on clients that do not read were bounded by
// nothing. They now count against --max-response-memory, past which others
// are refused until memory is free again, and a stream whose client has
// taken no response for --send-timeout is cancelled.
TEST_F(LimitsTest, ResponsesInFlightAreBoundedAndStalledStreamsCutOff) {
  ASSERT_NE(BuildTable(data_, "t", BigValues(30, 1 << 20)), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-response-memory", std::to_string(48 << 20),
                 "--send-timeout", "2"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  std::vector<std::string> keys;
  for (int i = 0; i < 30; ++i) keys.push_back(StrCat("k", i));

  // A stream asks for 30 MiB and never reads the answer.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(60));
  auto stream = server.lookup().StreamMultiGet(&context);
  v1::MultiGetRequest request;
  request.set_table("t");
  for (const std::string& k : keys) request.add_keys(k);
  ASSERT_TRUE(stream->Write(request));
  ASSERT_TRUE(WaitFor([&] {
    return MetricOr(server.ScrapeMetrics(), "roost_response_memory_bytes") >=
           30 << 20;
  }));
  // Meanwhile another 20 MiB cannot be had.
  v1::MultiGetResponse m;
  const std::vector<std::string> twenty(keys.begin(), keys.begin() + 20);
  EXPECT_TRUE(IsError(
      server.MultiGet("t", twenty, &m), StatusCode::RESOURCE_EXHAUSTED,
      StrCat("the server is out of response memory (--max-response-memory ",
             48 << 20, " bytes, all held by responses in flight); retry")));
  // Until the stream is cut off.
  ASSERT_TRUE(server.WaitForLog(
      "cancelled 1 StreamMultiGet call whose client took no response"));
  ASSERT_TRUE(WaitFor([&] { return server.MultiGet("t", twenty, &m).ok(); }));
  EXPECT_EQ(m.results_size(), 20);
  v1::MultiGetResponse never;
  EXPECT_FALSE(stream->Read(&never));
  EXPECT_EQ(stream->Finish().error_code(), StatusCode::CANCELLED);
  const Metrics metrics = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(metrics, "roost_streams_cancelled_total"), 1);
  EXPECT_GE(MetricOr(metrics, "roost_responses_refused_total"), 1);
}

// Defect 2: one MultiGet of 1,000 values of 1 MiB took the server's memory
// from 253 to 1,160 MiB for good: glibc raised its mmap threshold after the
// first large block it freed, and kept what came after. Response buffers of
// 1 MiB or more are now mapped and unmapped whole (and since a response is
// one block, glibc maps it anyway); what this checks is the outcome, that
// the response's memory comes back, whatever the means.
TEST_F(LimitsTest, MemoryOfALargeResponseIsGivenBack) {
  if (UnderSanitizers()) {
    GTEST_SKIP() << "AddressSanitizer's allocator keeps freed memory in "
                    "quarantine";
  }
  ASSERT_NE(BuildTable(data_, "t", BigValues(20, 1 << 20)), "");
  ServerFlags flags = Flags();
  flags.extra = {"--max-message-size",    "400000000",
                 "--max-response-memory", "800000000",
                 "--resident-refresh",    "1"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  // Anonymous memory only: the mapped table's pages count in RSS too.
  const auto anon = [&] {
    const std::string status =
        ReadFile(StrCat("/proc/", server.pid(), "/status"));
    const size_t at = status.find("RssAnon:");
    return at == std::string::npos
               ? uint64_t{0}
               : std::strtoull(status.c_str() + at + 8, nullptr, 10) << 10;
  };
  // 300 MiB: far above the 64 MiB allowed to stay, and small enough to
  // cross loopback well within the call's 10 s deadline on a loaded
  // machine (with 1 GiB the test failed once under ctest -j2, its message
  // not kept; the status is printed now).
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) keys.push_back(StrCat("k", i % 20));
  v1::MultiGetResponse m;
  ASSERT_OK(server.MultiGet("t", {keys[0]}, &m));
  const uint64_t before = anon();
  const grpc::Status s = server.MultiGet("t", keys, &m);
  ASSERT_OK(s) << s.error_code() << ": " << s.error_message();
  ASSERT_EQ(m.results_size(), 300);
  EXPECT_EQ(m.results(299).value().size(), 1u << 20);
  m.Clear();
  uint64_t now = 0;
  EXPECT_TRUE(WaitFor([&] {
    now = anon();
    return now < before + (64 << 20);
  })) << "anonymous memory grew from "
      << (before >> 20) << " MiB to " << (now >> 20) << " MiB and stayed";
}

// Defect 5: a 1 MiB table name came back whole in NOT_FOUND (the client
// got a metadata-size error instead).
TEST_F(LimitsTest, EchoedInputIsBounded) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  v1::GetResponse g;
  const grpc::Status s = server.Get(std::string(1 << 20, 'x'), "k", &g);
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), StrCat("no table \"", std::string(128, 'x'),
                                      "\"... (1048576 "
                                      "bytes)"));
  // Bytes that are not text come back escaped.
  EXPECT_TRUE(IsError(server.Get(std::string("a\nb"), "k", &g),
                      StatusCode::NOT_FOUND, "no table \"a\\x0ab\""));
}

// Defect 6: a request that did not parse answered UNIMPLEMENTED with no
// message, was not counted, and wrote a libprotobuf line to the log each
// time.
TEST_F(LimitsTest, MalformedRequestsAreInvalidArgumentCountedAndQuiet) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  std::string out;
  const std::string not_utf8_table("\x0a\x02\xc3\x28", 4);
  EXPECT_TRUE(
      IsError(server.RawCall("/roost.v1.Lookup/Get", "\xff\xff\xff", &out),
              StatusCode::INVALID_ARGUMENT,
              "malformed request: not a roost.v1.GetRequest"));
  EXPECT_TRUE(IsError(server.RawCall("/roost.v1.Lookup/MultiGet",
                                     "\x12\x05"
                                     "ab",
                                     &out),
                      StatusCode::INVALID_ARGUMENT,
                      "malformed request: not a roost.v1.MultiGetRequest"));
  EXPECT_TRUE(
      IsError(server.RawCall("/roost.v1.Lookup/Get", not_utf8_table, &out),
              StatusCode::INVALID_ARGUMENT, "table name is not valid UTF-8"));
  EXPECT_TRUE(
      IsError(server.RawCall("/roost.v1.Lookup/ListTables", "\xff", &out),
              StatusCode::INVALID_ARGUMENT,
              "malformed request: not a roost.v1.ListTablesRequest"));
  EXPECT_TRUE(IsError(server.RawCall("/roost.v1.Admin/Rollback", not_utf8_table,
                                     &out, /*admin=*/true),
                      StatusCode::INVALID_ARGUMENT,
                      "malformed request: not a roost.v1.RollbackRequest"));
  // A flood of them: every one answered and counted, few logged.
  for (int i = 0; i < 300; ++i) {
    ASSERT_EQ(server.RawCall("/roost.v1.Lookup/Get", "\xff", &out).error_code(),
              StatusCode::INVALID_ARGUMENT);
  }
  const Metrics metrics = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(metrics,
                     "grpc_server_handled_total{grpc_code=\"InvalidArgument\","
                     "grpc_method=\"Get\",grpc_service=\"roost.v1.Lookup\","
                     "grpc_type=\"unary\"}"),
            302);
  EXPECT_LE(server.CountLogLines("malformed request"), 10) << server.Log();
  EXPECT_EQ(server.CountLogLines("libprotobuf"), 0) << server.Log();
  v1::GetResponse g;
  ASSERT_OK(server.Get("t", "k", &g));
  EXPECT_EQ(g.value(), "v");
}

// A health Watch of the server ("") that reads every status sent.
class HealthWatch final
    : public grpc::ClientReadReactor<grpc::health::v1::HealthCheckResponse> {
 public:
  explicit HealthWatch(grpc::health::v1::Health::Stub* stub) {
    stub->async()->Watch(&context_, &request_, this);
    StartRead(&response_);
    StartCall();
  }
  // The call must end before its context goes.
  ~HealthWatch() {
    context_.TryCancel();
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    statuses_.fetch_add(1);
    StartRead(&response_);
  }
  void OnDone(const grpc::Status& status) override {
    std::lock_guard lock(mu_);
    status_ = status;
    done_ = true;
    cv_.notify_all();
  }
  void Cancel() { context_.TryCancel(); }
  // Statuses received so far.
  int statuses() const { return statuses_.load(); }
  std::optional<grpc::Status> status() {
    std::lock_guard lock(mu_);
    return done_ ? std::optional(status_) : std::nullopt;
  }
  // The call's status, or UNKNOWN "still open" when it does not end
  // within kWaitTimeout.
  grpc::Status Await() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, kWaitTimeout, [this] { return done_; })) {
      return grpc::Status(StatusCode::UNKNOWN, "still open");
    }
    return status_;
  }

 private:
  grpc::ClientContext context_;
  grpc::health::v1::HealthCheckRequest request_;
  grpc::health::v1::HealthCheckResponse response_;
  std::atomic<int> statuses_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  grpc::Status status_;
};

// Issue 30, defect 5: health Watch streams were bounded by nothing: 60,000
// of them, no credentials needed, took the server's RSS from 86 to 1,075
// MiB with --grpc-memory 256M. They now have a limit of their own,
// --max-health-watches (100 by default), past which a Watch is refused.
TEST_F(LimitsTest, HealthWatchesPastTheirLimitAreRefused) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  // Two connections: one has at most 100 calls open
  // (--max-concurrent-streams).
  std::vector<std::unique_ptr<grpc::health::v1::Health::Stub>> stubs;
  for (int i = 0; i < 2; ++i) {
    stubs.push_back(grpc::health::v1::Health::NewStub(
        CreateTestChannel(server.lookup_address())));
  }
  std::vector<std::unique_ptr<HealthWatch>> watches;
  for (int i = 0; i < 100; ++i) {
    watches.push_back(std::make_unique<HealthWatch>(stubs[i % 2].get()));
  }
  ASSERT_TRUE(WaitFor([&] {
    return std::all_of(watches.begin(), watches.end(),
                       [](const auto& w) { return w->statuses() > 0; });
  }));
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(), "roost_health_watches_open"), 100);

  // The 101st is refused, saying why.
  HealthWatch refused(stubs[0].get());
  EXPECT_TRUE(IsError(refused.Await(), StatusCode::RESOURCE_EXHAUSTED,
                      "too many health Watch calls open "
                      "(--max-health-watches 100); retry later"));
  EXPECT_EQ(refused.statuses(), 0);
  EXPECT_EQ(
      MetricOr(server.ScrapeMetrics(), "roost_health_watches_refused_total"),
      1);
  // Check still answers.
  grpc::health::v1::HealthCheckResponse::ServingStatus status;
  ASSERT_OK(server.HealthCheck("", &status));
  EXPECT_EQ(status, grpc::health::v1::HealthCheckResponse::SERVING);

  // When one ends, another gets in.
  watches[0]->Cancel();
  EXPECT_EQ(watches[0]->Await().error_code(), StatusCode::CANCELLED);
  ASSERT_TRUE(WaitFor([&] {
    return MetricOr(server.ScrapeMetrics(), "roost_health_watches_open") == 99;
  }));
  HealthWatch next(stubs[0].get());
  EXPECT_TRUE(WaitFor([&] { return next.statuses() > 0; }));
  EXPECT_FALSE(next.status().has_value());
  next.Cancel();
  next.Await();
  for (auto& w : watches) w->Cancel();
  for (auto& w : watches) w->Await();
}

// A reflection stream (grpc.reflection.v1alpha) on a generic stub: it
// sends `request` (none when empty) and reads what comes.
class ReflectionStream final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  ReflectionStream(grpc::GenericStub* stub, const std::string& request) {
    stub->PrepareBidiStreamingCall(
        &context_,
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        grpc::StubOptions(), this);
    StartRead(&response_);
    if (!request.empty()) {
      grpc::Slice slice(request);
      request_ = grpc::ByteBuffer(&slice, 1);
      StartWriteLast(&request_, grpc::WriteOptions());
    }
    StartCall();
  }
  ~ReflectionStream() {
    context_.TryCancel();
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    std::vector<grpc::Slice> slices;
    if (response_.Dump(&slices).ok()) {
      std::lock_guard lock(mu_);
      for (const grpc::Slice& s : slices) {
        answer_.append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
    StartRead(&response_);
  }
  void OnDone(const grpc::Status& status) override {
    std::lock_guard lock(mu_);
    status_ = status;
    done_ = true;
    cv_.notify_all();
  }
  std::optional<grpc::Status> status() {
    std::lock_guard lock(mu_);
    return done_ ? std::optional(status_) : std::nullopt;
  }
  std::string answer() {
    std::lock_guard lock(mu_);
    return answer_;
  }

 private:
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  grpc::Status status_;
  std::string answer_;
};

// Issue 30, defect 5's kin: reflection is gRPC's own synchronous service,
// which took a thread for each call for as long as it was open; 200 idle
// reflection streams, no credentials needed, made 200 threads. Its threads
// are bounded now; calls past them are refused, and reflection works again
// once they are gone.
TEST_F(LimitsTest, IdleReflectionStreamsAreBounded) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  const auto threads = [&] {
    return std::distance(
        fs::directory_iterator(StrCat("/proc/", server.pid(), "/task")),
        fs::directory_iterator());
  };
  const auto before = threads();
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  for (int i = 0; i < 3; ++i) {
    stubs.push_back(std::make_unique<grpc::GenericStub>(
        CreateTestChannel(server.lookup_address())));
  }
  std::vector<std::unique_ptr<ReflectionStream>> idle;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<ReflectionStream>(stubs[i % 3].get(), ""));
  }
  const auto refused = [&] {
    return std::count_if(idle.begin(), idle.end(), [](auto& stream) {
      const auto s = stream->status();
      return s.has_value() && s->error_code() == StatusCode::RESOURCE_EXHAUSTED;
    });
  };
  EXPECT_TRUE(WaitFor([&] { return refused() >= 160; }))
      << refused() << " of 200 refused";
  EXPECT_LT(threads(), before + 40);
  idle.clear();
  // Reflection answers again: list the services.
  std::string answer;
  EXPECT_TRUE(WaitFor([&] {
    ReflectionStream list(stubs[0].get(), std::string("\x3a\x00", 2));
    if (!WaitFor([&] { return list.status().has_value(); })) return false;
    answer = list.answer();
    return list.status()->ok() &&
           answer.find("roost.v1.Lookup") != std::string::npos;
  })) << answer;
}

}  // namespace
}  // namespace roost::testing
