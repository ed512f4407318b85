// roost-server under a flood: thousands of streams (most never read their
// answers), 100 MB requests and connections that send half an HTTP/2
// preface and stop, all at once, while a well-behaved client keeps calling.
// Asserted is only what is stable on a shared two-core machine: the server
// lives, its memory stays under a stated bound, floods past the caps are
// refused with RESOURCE_EXHAUSTED, and the good client gets answers. Its
// success rate and latency, and the server's peak RSS, are printed (and
// recorded as test properties) for the closing note, not asserted.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <thread>

#include "tests/harness/pki.h"
#include "tests/harness/server_harness.h"
#include "tests/harness/stalled_http2_client.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using Clock = std::chrono::steady_clock;

// A StreamMultiGet that writes `writes` requests and never reads an answer.
class Hog final : public grpc::ClientBidiReactor<v1::MultiGetRequest,
                                                 v1::MultiGetResponse> {
 public:
  Hog(v1::Lookup::Stub* stub, const v1::MultiGetRequest& request, int writes)
      : request_(request), left_(writes) {
    stub->async()->StreamMultiGet(&context_, this);
    StartWrite(&request_);
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (ok && --left_ > 0) StartWrite(&request_);
  }
  void OnDone(const grpc::Status& status) override {
    std::lock_guard lock(mu_);
    status_ = status;
    done_ = true;
    cv_.notify_all();
  }
  void Cancel() { context_.TryCancel(); }
  bool done() {
    std::lock_guard lock(mu_);
    return done_;
  }
  grpc::Status Await() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    return status_;
  }

 private:
  grpc::ClientContext context_;
  const v1::MultiGetRequest request_;
  int left_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  grpc::Status status_;
};

// A TCP connection to 127.0.0.1:`port` that sends `bytes` and then nothing.
int HalfOpen(int port, std::string_view bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) < 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// `calls` Gets of `request` on one new connection to 127.0.0.1:`port`,
// whose responses the server can never send. Closing the client cancels
// the calls.
std::unique_ptr<StalledHttp2Client> StalledGets(int port,
                                                const v1::GetRequest& request,
                                                int calls) {
  auto client = StalledHttp2Client::Connect(port);
  if (client == nullptr) return nullptr;
  for (int i = 0; i < calls; ++i) {
    if (!client->Call("/roost.v1.Lookup/Get", request.SerializeAsString())) {
      return nullptr;
    }
  }
  return client;
}

// Polls the server's metrics until `done` holds of them or 20 s pass.
template <typename Done>
Metrics AwaitMetrics(ServerProcess& server, Done done) {
  const Clock::time_point end = Clock::now() + std::chrono::seconds(20);
  Metrics m = server.ScrapeMetrics();
  while (!done(m) && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    m = server.ScrapeMetrics();
  }
  return m;
}

bool UnderSanitizers() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#endif
#endif
  return false;
}

class OverloadTest : public ServerFixture {};

TEST_F(OverloadTest, AFloodIsRefusedFastAndAGoodClientKeepsGettingAnswers) {
  // 2,000 keys of 4 KiB values: a MultiGet of 200 of them answers 800 KB.
  KeyValues kvs;
  std::vector<std::string> keys;
  for (int i = 0; i < 2000; ++i) {
    keys.push_back("key" + std::to_string(i));
    kvs[keys.back()] = std::string(4096, static_cast<char>('a' + i % 26));
  }
  ASSERT_NE(BuildTable(data_, "t", kvs), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-streams", "1000",           "--max-concurrent-streams",
                 "100",           "--send-timeout", "3",
                 "--grpc-memory", "268435456",      "--max-response-memory",
                 "268435456"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  const std::string addr = server.lookup_address();
  const uint64_t rss_before = MemoryOf(server.pid()).rss;

  std::atomic<bool> stop{false};
  // The good client: one Get after another on a connection of its own.
  std::vector<double> latencies_ms;
  int good_ok = 0;
  int good_failed = 0;
  std::string first_failure;
  std::thread good([&] {
    auto stub = v1::Lookup::NewStub(CreateTestChannel(addr));
    for (int i = 0; !stop.load(); ++i) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::seconds(2));
      v1::GetRequest request;
      request.set_table("t");
      request.set_key(keys[i % keys.size()]);
      v1::GetResponse response;
      const Clock::time_point start = Clock::now();
      const grpc::Status s = stub->Get(&context, request, &response);
      latencies_ms.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - start)
              .count());
      if (s.ok() && response.found() &&
          response.value() == kvs[keys[i % keys.size()]]) {
        ++good_ok;
      } else {
        if (first_failure.empty()) first_failure = s.error_message();
        ++good_failed;
      }
    }
  });

  // Half HTTP/2 prefaces: 300 connections that say "PRI * HTTP/2.0" and
  // stop.
  std::vector<int> half_open;
  for (int i = 0; i < 300; ++i) {
    const int fd = HalfOpen(server.lookup_port(), "PRI * HTTP/2.0\r\n");
    if (fd >= 0) half_open.push_back(fd);
  }

  // 100 MB requests, refused by --max-request-size before they are read.
  std::atomic<int> big_refused{0};
  std::atomic<int> big_answered{0};
  std::atomic<int> big_sent{0};
  std::thread big([&] {
    v1::MultiGetRequest request;
    request.set_table("t");
    request.add_keys(std::string(100 << 20, 'x'));
    while (!stop.load() && big_sent.load() < 8) {
      auto stub = v1::Lookup::NewStub(CreateTestChannel(addr));
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::seconds(20));
      v1::MultiGetResponse response;
      const grpc::Status s = stub->MultiGet(&context, request, &response);
      big_sent.fetch_add(1);
      if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        big_refused.fetch_add(1);
      }
      if (s.ok()) big_answered.fetch_add(1);
    }
  });

  // 3,000 streams over 30 connections (100 each, --max-concurrent-streams),
  // each writing 20 MultiGets of 200 keys and reading nothing: 3x
  // --max-streams.
  v1::MultiGetRequest hog_request;
  hog_request.set_table("t");
  for (int i = 0; i < 200; ++i) hog_request.add_keys(keys[i]);
  std::vector<std::unique_ptr<v1::Lookup::Stub>> hog_stubs;
  std::vector<std::unique_ptr<Hog>> hogs;
  for (int c = 0; c < 30; ++c) {
    hog_stubs.push_back(v1::Lookup::NewStub(CreateTestChannel(addr)));
    for (int s = 0; s < 100; ++s) {
      hogs.push_back(
          std::make_unique<Hog>(hog_stubs.back().get(), hog_request, 20));
    }
  }

  // The flood runs for 8 s; the server's memory is sampled meanwhile.
  uint64_t peak_rss = 0;
  const Clock::time_point flood_end = Clock::now() + std::chrono::seconds(8);
  while (Clock::now() < flood_end) {
    peak_rss = std::max(peak_rss, MemoryOf(server.pid()).rss);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const Metrics during = server.ScrapeMetrics();
  stop.store(true);
  good.join();
  big.join();
  int refused = 0;
  int cancelled = 0;
  std::string other;
  for (auto& hog : hogs) hog->Cancel();
  for (auto& hog : hogs) {
    const grpc::Status s = hog->Await();
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++refused;
    } else if (s.error_code() == grpc::StatusCode::CANCELLED) {
      ++cancelled;
    } else if (other.empty()) {
      other = std::to_string(s.error_code()) + " " + s.error_message();
    }
  }
  for (int fd : half_open) ::close(fd);
  peak_rss = std::max(peak_rss, MemoryOf(server.pid()).peak_rss);

  std::sort(latencies_ms.begin(), latencies_ms.end());
  const auto percentile = [&](double p) {
    return latencies_ms.empty()
               ? 0.0
               : latencies_ms[std::min(
                     latencies_ms.size() - 1,
                     static_cast<size_t>(p * latencies_ms.size()))];
  };
  const int good_total = good_ok + good_failed;
  std::printf(
      "flood: good client %d calls, %.1f%% answered, p50 %.2f ms, p99 %.2f "
      "ms; streams refused %d and cancelled %d of %zu; 100 MB requests "
      "refused %d of %d; half-open connections %zu; server RSS %.0f MiB "
      "before, peak %.0f MiB\n",
      good_total, good_total ? 100.0 * good_ok / good_total : 0.0,
      percentile(0.5), percentile(0.99), refused, cancelled, hogs.size(),
      big_refused.load(), big_sent.load(), half_open.size(),
      rss_before / 1048576.0, peak_rss / 1048576.0);
  RecordProperty("good_calls", good_total);
  RecordProperty("good_answered", good_ok);
  RecordProperty("peak_rss_mib", static_cast<int>(peak_rss >> 20));

  EXPECT_TRUE(server.Running()) << server.Log();
  // The good client got answers, right ones, throughout: most of its calls
  // were answered. (How many calls it makes in the 8 s depends on the
  // machine: 15 under the sanitizers on a busy 2-core CI machine, where it
  // once fell short of a fixed 20.)
  EXPECT_GE(good_ok, 5) << "first failure: " << first_failure;
  EXPECT_GE(2 * good_ok, good_total) << "first failure: " << first_failure;
  // Streams past --max-streams, or whose answers found the response memory
  // held, were refused, not queued; the others were still open when the
  // client cancelled them.
  // Which bound refuses first depends on timing: on a quick machine the
  // response memory fills before 1,000 streams are open at once, and no
  // stream meets --max-streams (its own test is below).
  EXPECT_EQ(other, "");
  EXPECT_GT(refused, 0);
  EXPECT_GT(MetricOr(during, "roost_streams_refused_total") +
                MetricOr(during, "roost_responses_refused_total"),
            0);
  EXPECT_LE(MetricOr(during, "roost_streams_open", 0), 1000);
  // No 100 MB request got in (refused as RESOURCE_EXHAUSTED, or the
  // connection reset while the client was still sending).
  EXPECT_EQ(big_answered.load(), 0);
  EXPECT_GE(big_refused.load(), 1);
  // Memory: responses in flight are bounded by --max-response-memory (256
  // MiB here) and gRPC's own by --grpc-memory (256 MiB); the bound stated
  // here leaves room for the sanitizers' shadow memory.
  const uint64_t bound = (UnderSanitizers() ? 2048ull : 1024ull) << 20;
  EXPECT_LT(peak_rss, bound);
  // And afterwards it still answers.
  v1::GetResponse response;
  EXPECT_OK(server.Get("t", keys[0], &response));
}

// A client that sends Gets and never takes their responses keeps them in
// flight; past --max-in-flight further calls, from anyone, are refused at
// once with a retryable RESOURCE_EXHAUSTED, and when the client goes its
// calls are cancelled and the slots come back.
TEST_F(OverloadTest, UnaryCallsPastMaxInFlightAreRefusedUntilSlotsFree) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "a value"}}), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-in-flight", "8", "--max-client-in-flight", "8"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  v1::GetRequest request;
  request.set_table("t");
  request.set_key("k");
  auto stalled = StalledGets(server.lookup_port(), request, 20);
  ASSERT_NE(stalled, nullptr);
  // 8 are held, 12 refused.
  const Metrics held = AwaitMetrics(server, [](const Metrics& m) {
    return MetricOr(m, "roost_calls_refused_total", 0) >= 12;
  });
  EXPECT_EQ(MetricOr(held, "roost_calls_in_flight"), 8);
  EXPECT_EQ(MetricOr(held, "roost_calls_refused_total"), 12);

  // Another client is refused too, fast and saying why.
  v1::GetResponse response;
  const grpc::Status refused = server.Get("t", "k", &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(refused.error_message(),
            "too many calls in flight (--max-in-flight 8); retry later");

  // The stalled client goes: its calls end, and the slots are free again.
  stalled.reset();
  const Metrics after = AwaitMetrics(server, [](const Metrics& m) {
    return MetricOr(m, "roost_calls_in_flight", -1) == 0;
  });
  EXPECT_EQ(MetricOr(after, "roost_calls_in_flight"), 0);
  const grpc::Status ok = server.Get("t", "k", &response);
  EXPECT_OK(ok) << ok.error_message();
  EXPECT_EQ(response.value(), "a value");
  // That call's slot is freed when the server is done with it, which can
  // be just after its answer reached the client.
  AwaitMetrics(server, [](const Metrics& m) {
    return MetricOr(m, "roost_calls_in_flight", -1) == 0;
  });

  // An empty response (a missing key) holds its call's slot as well.
  request.set_key("absent");
  stalled = StalledGets(server.lookup_port(), request, 20);
  ASSERT_NE(stalled, nullptr);
  const Metrics held_empty = AwaitMetrics(server, [](const Metrics& m) {
    return MetricOr(m, "roost_calls_refused_total", 0) >= 25;
  });
  EXPECT_EQ(MetricOr(held_empty, "roost_calls_in_flight"), 8);
  EXPECT_EQ(MetricOr(held_empty, "roost_calls_refused_total"), 25);
  stalled.reset();
  EXPECT_EQ(MetricOr(AwaitMetrics(server,
                                  [](const Metrics& m) {
                                    return MetricOr(m, "roost_calls_in_flight",
                                                    -1) == 0;
                                  }),
                     "roost_calls_in_flight"),
            0);
  EXPECT_TRUE(server.Running()) << server.Log();
}

TEST_F(OverloadTest, StreamsPastMaxStreamsAreRefusedUntilOneEnds) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "a value"}}), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-streams", "3"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  auto stub = v1::Lookup::NewStub(CreateTestChannel(server.lookup_address()));
  using Stream =
      grpc::ClientReaderWriter<v1::MultiGetRequest, v1::MultiGetResponse>;
  v1::MultiGetRequest request;
  request.set_table("t");
  request.add_keys("k");

  // Three streams open and idle: a stream is open from its start, whether
  // or not it has asked anything yet.
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<Stream>> open;
  for (int i = 0; i < 3; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    open.push_back(stub->StreamMultiGet(contexts.back().get()));
  }
  const Metrics full = AwaitMetrics(server, [](const Metrics& m) {
    return MetricOr(m, "roost_streams_open", 0) >= 3;
  });
  EXPECT_EQ(MetricOr(full, "roost_streams_open"), 3);

  // The fourth is refused at once, saying why.
  {
    grpc::ClientContext context;
    auto fourth = stub->StreamMultiGet(&context);
    v1::MultiGetResponse response;
    fourth->Write(request);
    EXPECT_FALSE(fourth->Read(&response));
    const grpc::Status s = fourth->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(s.error_message(),
              "too many StreamMultiGet calls open (--max-streams 3); retry "
              "later");
  }
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(), "roost_streams_refused_total"), 1);

  // The open ones still answer; when one ends, a new stream gets in.
  v1::MultiGetResponse response;
  ASSERT_TRUE(open[0]->Write(request));
  ASSERT_TRUE(open[0]->Read(&response));
  EXPECT_EQ(response.results(0).value(), "a value");
  open[0]->WritesDone();
  EXPECT_OK(open[0]->Finish());
  AwaitMetrics(server, [](const Metrics& m) {
    return MetricOr(m, "roost_streams_open", -1) == 2;
  });
  grpc::ClientContext context;
  auto next = stub->StreamMultiGet(&context);
  ASSERT_TRUE(next->Write(request));
  ASSERT_TRUE(next->Read(&response));
  EXPECT_EQ(response.results(0).value(), "a value");
  next->WritesDone();
  EXPECT_OK(next->Finish());
  for (size_t i = 1; i < open.size(); ++i) {
    open[i]->WritesDone();
    EXPECT_OK(open[i]->Finish());
  }
  EXPECT_TRUE(server.Running()) << server.Log();
}

// grpc_server_handled_total of MultiGet with `code` ("OK").
double MultiGetsHandled(const Metrics& m, const std::string& code) {
  return MetricOr(m, "grpc_server_handled_total{grpc_code=\"" + code +
                         "\",grpc_method=\"MultiGet\",grpc_service=\"roost."
                         "v1.Lookup\",grpc_type=\"unary\"}");
}

// A table "t" of `n` keys "k0".."k{n-1}" with values of `size` bytes, and a
// MultiGet of all of them.
v1::MultiGetRequest BigValuesTable(const std::string& data, int n,
                                   size_t size) {
  KeyValues kvs;
  v1::MultiGetRequest request;
  request.set_table("t");
  for (int i = 0; i < n; ++i) {
    const std::string key = StrCat("k", i);
    kvs[key] = std::string(size, static_cast<char>('a' + i % 26));
    request.add_keys(key);
  }
  EXPECT_NE(BuildTable(data, "t", kvs), "");
  return request;
}

// Issue 30, defect 3: one connection that never opened its flow-control
// window (SETTINGS_INITIAL_WINDOW_SIZE 0), and answered PINGs so that
// keepalive never closed it, held the responses of its unary MultiGets for
// as long as it stayed: 265.7 of 268.4 MB of --max-response-memory, every
// other client refused. A connection now holds at most its share (by
// default a quarter of --max-response-memory, here 32 MiB of 128), and a
// unary call whose response is not taken within --send-timeout is
// cancelled, its memory freed.
TEST_F(OverloadTest, AConnectionThatTakesNoResponseHoldsItsShareForAWhile) {
  // A MultiGet of 16 values of 256 KiB answers 4 MiB.
  const v1::MultiGetRequest request =
      BigValuesTable(data_, 16, size_t{256} << 10);
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-response-memory", std::to_string(128 << 20),
                 "--send-timeout",        "3",
                 "--keepalive",           "1"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  // 40 MultiGets (160 MiB asked for) whose responses can never be sent.
  constexpr int kCalls = 40;
  auto attacker = StalledHttp2Client::Connect(server.lookup_port());
  ASSERT_NE(attacker, nullptr);
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(attacker->Call("/roost.v1.Lookup/MultiGet",
                               request.SerializeAsString()));
  }
  const Clock::time_point sent = Clock::now();
  const Metrics held = AwaitMetrics(server, [](const Metrics& m) {
    return MultiGetsHandled(m, "OK") +
               MultiGetsHandled(m, "ResourceExhausted") >=
           kCalls;
  });
  const double responses_held = MultiGetsHandled(held, "OK");
  EXPECT_GT(responses_held, 0);
  EXPECT_GT(MetricOr(held, "roost_response_memory_bytes"), 0);
  EXPECT_LE(MetricOr(held, "roost_response_memory_bytes"), 32 << 20);

  // Meanwhile a client on a connection of its own is answered, every time.
  auto stub = v1::Lookup::NewStub(CreateTestChannel(server.lookup_address()));
  int answered = 0;
  std::string failure;
  for (int i = 0; i < 10; ++i) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    v1::MultiGetResponse response;
    const grpc::Status s = stub->MultiGet(&context, request, &response);
    if (s.ok() && response.results_size() == 16 &&
        response.results(15).value().size() == size_t{256} << 10) {
      ++answered;
    } else if (failure.empty()) {
      failure = std::to_string(s.error_code()) + " " + s.error_message();
    }
  }
  EXPECT_EQ(answered, 10) << "first failure: " << failure;

  // After --send-timeout the calls it holds are cancelled, although it is
  // still connected and answers the server's pings, and their memory is
  // free again.
  EXPECT_TRUE(WaitFor([&] { return attacker->streams_ended() == kCalls; }))
      << attacker->streams_ended() << " of " << kCalls << " calls ended";
  EXPECT_GE(Clock::now() - sent, std::chrono::seconds(3));
  const Metrics after = AwaitMetrics(server, [](const Metrics& m) {
    return MetricOr(m, "roost_response_memory_bytes", -1) == 0;
  });
  EXPECT_EQ(MetricOr(after, "roost_response_memory_bytes"), 0);
  EXPECT_EQ(MetricOr(after, "roost_calls_cancelled_total"), responses_held);
  EXPECT_FALSE(attacker->closed());
  EXPECT_GT(attacker->pings_answered(), 0);
  EXPECT_TRUE(server.WaitForLog(
      "unary calls (Get, MultiGet, ...) whose client took no response for "
      "--send-timeout 3 s"));
}

// The same for the call slots: a connection that never acknowledges the
// server's SETTINGS (so that SETTINGS_MAX_CONCURRENT_STREAMS never binds
// it) and takes no response held every one of --max-in-flight. It now
// holds at most a quarter of them.
TEST_F(OverloadTest, AConnectionHoldsOnlyItsShareOfTheCallSlots) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "a value"}}), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-in-flight", "40", "--send-timeout", "2"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  v1::GetRequest request;
  request.set_table("t");
  request.set_key("k");
  auto attacker =
      StalledHttp2Client::Connect(server.lookup_port(), /*ack_settings=*/false);
  ASSERT_NE(attacker, nullptr);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(
        attacker->Call("/roost.v1.Lookup/Get", request.SerializeAsString()));
  }
  const Metrics held = AwaitMetrics(server, [](const Metrics& m) {
    return MetricOr(m,
                    "grpc_server_started_total{grpc_method=\"Get\","
                    "grpc_service=\"roost.v1.Lookup\",grpc_type="
                    "\"unary\"}") >= 100;
  });
  EXPECT_EQ(MetricOr(held, "roost_calls_in_flight"), 10);

  // Another client is answered.
  v1::GetResponse response;
  const grpc::Status s = server.Get("t", "k", &response);
  EXPECT_OK(s);
  EXPECT_EQ(response.value(), "a value");
  // And after --send-timeout the held calls are cancelled, their slots
  // free.
  EXPECT_TRUE(WaitFor([&] { return attacker->streams_ended() == 100; }))
      << attacker->streams_ended() << " of 100 calls ended";
  EXPECT_EQ(MetricOr(AwaitMetrics(server,
                                  [](const Metrics& m) {
                                    return MetricOr(m, "roost_calls_in_flight",
                                                    -1) == 0;
                                  }),
                     "roost_calls_in_flight"),
            0);
}

// With mutual TLS, a client is also its certificate: all the connections
// of one certificate hold one share together, so that opening more
// connections gets a client no more.
TEST_F(OverloadTest, TheConnectionsOfOneCertificateHoldOneShare) {
  Pki pki(scratch_.File("pki"));
  pki.MakeCa("ca");
  pki.Issue("server", "ca", "DNS:localhost,IP:127.0.0.1");
  pki.Issue("client-a", "ca", "DNS:client-a");
  pki.Issue("client-b", "ca", "DNS:client-b");
  // A MultiGet of 16 values of 1 MiB answers 16 MiB.
  const v1::MultiGetRequest request =
      BigValuesTable(data_, 16, size_t{1} << 20);
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--tls-cert",
                 pki.Pem("server"),
                 "--tls-key",
                 pki.Key("server"),
                 "--tls-client-ca",
                 pki.Pem("ca"),
                 "--metrics-tls",
                 "false",
                 "--max-response-memory",
                 std::to_string(128 << 20)};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitListening());

  // client-a: 4 connections of 4 streams each, every stream asking for 16
  // MiB and reading nothing. Each connection's share alone (a quarter, 32
  // MiB) would let the four hold all 128 MiB.
  std::vector<std::unique_ptr<v1::Lookup::Stub>> stubs;
  std::vector<std::unique_ptr<Hog>> hogs;
  for (int c = 0; c < 4; ++c) {
    stubs.push_back(v1::Lookup::NewStub(CreateTestChannel(
        server.lookup_address(), pki.Credentials({"ca"}, "client-a"))));
    for (int i = 0; i < 4; ++i) {
      hogs.push_back(std::make_unique<Hog>(stubs.back().get(), request, 1));
    }
  }
  // Each stream's request is answered: its response held, or refused (the
  // stream ends).
  const auto settled = [&](const Metrics& m) {
    int refused = 0;
    for (auto& hog : hogs) refused += hog->done() ? 1 : 0;
    return refused +
               static_cast<int>(MetricOr(m, "roost_response_memory_bytes") /
                                (16 << 20)) ==
           16;
  };
  const Metrics held = AwaitMetrics(server, settled);
  EXPECT_TRUE(settled(held));
  EXPECT_GT(MetricOr(held, "roost_response_memory_bytes"), 0);
  EXPECT_LE(MetricOr(held, "roost_response_memory_bytes"), 32 << 20);

  // client-b is answered.
  auto stub = v1::Lookup::NewStub(CreateTestChannel(
      server.lookup_address(), pki.Credentials({"ca"}, "client-b")));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  v1::MultiGetResponse response;
  EXPECT_OK(stub->MultiGet(&context, request, &response));
  EXPECT_EQ(response.results_size(), 16);
  for (auto& hog : hogs) hog->Cancel();
  for (auto& hog : hogs) hog->Await();
}

}  // namespace
}  // namespace roost::testing
