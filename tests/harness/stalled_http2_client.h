// StalledHttp2Client: a misbehaving HTTP/2 client written by hand, for the
// tests of what one client can hold on the server. It sets
// SETTINGS_INITIAL_WINDOW_SIZE to 0 and never sends a WINDOW_UPDATE, so the
// server can never send it a byte of a response; it answers the server's
// PINGs, so keepalive never closes the connection. A thread reads what the
// server sends and counts the streams the server ended (RST_STREAM, or
// HEADERS with END_STREAM: a status without a message).
//
// HTTP/2 (RFC 9113) just far enough for that: the preface, SETTINGS and its
// ACK, PING ACKs, and gRPC calls as one HEADERS frame (HPACK literals
// without indexing, RFC 7541 6.2.2) and one DATA frame each.
//
// Example:
//   auto client = StalledHttp2Client::Connect(server.lookup_port());
//   ASSERT_NE(client, nullptr);
//   client->Call("/roost.v1.Lookup/MultiGet", request.SerializeAsString());
//   ... the server holds the response; later:
//   EXPECT_TRUE(WaitFor([&] { return client->streams_ended() == 1; }));
//
// Thread-safe.
#ifndef ROOST_TESTS_HARNESS_STALLED_HTTP2_CLIENT_H_
#define ROOST_TESTS_HARNESS_STALLED_HTTP2_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

namespace roost::testing {

class StalledHttp2Client {
 public:
  // A connection to 127.0.0.1:`port`, its preface and SETTINGS sent. With
  // `ack_settings` false the server's SETTINGS are never acknowledged (so
  // they never bind this client, SETTINGS_MAX_CONCURRENT_STREAMS among
  // them). Null when the connection fails.
  static std::unique_ptr<StalledHttp2Client> Connect(int port,
                                                     bool ack_settings = true);
  ~StalledHttp2Client();  // closes the connection: its calls are cancelled
  StalledHttp2Client(const StalledHttp2Client&) = delete;
  StalledHttp2Client& operator=(const StalledHttp2Client&) = delete;

  // Starts a unary gRPC call of `path` ("/roost.v1.Lookup/Get") with
  // `message` as its request, on a new stream; false when the send fails.
  bool Call(std::string_view path, std::string_view message);

  // Calls started, and those the server has ended since.
  int streams_started() const { return streams_started_.load(); }
  int streams_ended() const;
  // PINGs from the server answered.
  int pings_answered() const { return pings_answered_.load(); }
  // Whether the server sent GOAWAY or closed the connection.
  bool closed() const { return closed_.load(); }

 private:
  StalledHttp2Client(int fd, bool ack_settings);
  void Read();
  bool Send(std::string_view bytes);

  const int fd_;
  const bool ack_settings_;
  std::mutex send_mu_;
  uint32_t next_stream_ = 1;  // guarded by send_mu_
  std::atomic<int> streams_started_{0};
  mutable std::mutex ended_mu_;
  std::set<uint32_t> ended_;  // guarded by ended_mu_
  std::atomic<int> pings_answered_{0};
  std::atomic<bool> closed_{false};
  std::thread reader_;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_STALLED_HTTP2_CLIENT_H_
