// roost-server's Redis front end (--redis-listen, server/redis_front.h), end
// to end: the real roost-server, tables built by the real roost-load, and
// hiredis (a real Redis client), redis-cli over TLS (Debian's hiredis has
// no TLS), or a raw socket for what no client sends.
// Every answer is checked against the pairs the loader was given and
// against the gRPC Get of the same key.

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/harness/server_harness.h"
#include "tests/server/security_fixture.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A reply reduced to what the tests compare: its type and text, or its
// elements.
struct Reply {
  int type = 0;  // REDIS_REPLY_*
  std::string str;
  long long integer = 0;
  std::vector<Reply> elements;
};

Reply Convert(const redisReply* r) {
  Reply out;
  out.type = r->type;
  if (r->str != nullptr) out.str.assign(r->str, r->len);
  out.integer = r->integer;
  for (size_t i = 0; i < r->elements; ++i) {
    out.elements.push_back(Convert(r->element[i]));
  }
  return out;
}

// A hiredis connection to a roost-server's Redis port.
class RedisConnection {
 public:
  explicit RedisConnection(int port) {
    timeval timeout{10, 0};
    context_.reset(redisConnectWithTimeout("127.0.0.1", port, timeout));
    if (context_ != nullptr && context_->err == 0) {
      redisSetTimeout(context_.get(), timeout);
    }
  }
  bool ok() const { return context_ != nullptr && context_->err == 0; }
  std::string error() const {
    return context_ == nullptr ? "no context" : context_->errstr;
  }

  // One command, its arguments as bytes.
  std::optional<Reply> Command(const std::vector<std::string>& args) {
    Append(args);
    return Next();
  }
  // Sends a command without waiting for its reply (pipelining).
  void Append(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    redisAppendCommandArgv(context_.get(), static_cast<int>(args.size()),
                           argv.data(), lengths.data());
  }
  // The next reply; nullopt when the connection failed or closed.
  std::optional<Reply> Next() {
    void* raw = nullptr;
    if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) {
      return std::nullopt;
    }
    Reply out = Convert(static_cast<redisReply*>(raw));
    freeReplyObject(raw);
    return out;
  }

 private:
  struct Free {
    void operator()(redisContext* c) const { redisFree(c); }
  };
  std::unique_ptr<redisContext, Free> context_;
};

// A socket connected to 127.0.0.1:`port`, or -1.
int ConnectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// What the server sends back to `bytes` until it closes the connection
// (or 10 s pass), over a plain socket: for input no client would send.
// With `half_close` the client shuts its sending side after the bytes.
std::string RawExchange(int port, const std::string& bytes,
                        bool half_close = false) {
  const int fd = ConnectLoopback(port);
  std::string out;
  if (fd < 0 || ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) !=
                    static_cast<ssize_t>(bytes.size())) {
    if (fd >= 0) ::close(fd);
    return "(connect or send failed)";
  }
  if (half_close) ::shutdown(fd, SHUT_WR);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buffer[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      ::close(fd);
      return out;
    }
    out.append(buffer, n);
  }
  ::close(fd);
  return out + "(still open after 10 s)";
}

class RedisFrontTest : public ServerFixture {
 protected:
  // A server of data_ with the Redis front end on, and `more` flags.
  std::unique_ptr<ServerProcess> Start(std::vector<std::string> more = {}) {
    ServerFlags flags = Flags();
    flags.metrics_listen = "127.0.0.1:0";
    flags.extra = {"--redis-listen", "127.0.0.1:0"};
    flags.extra.insert(flags.extra.end(), more.begin(), more.end());
    auto server = std::make_unique<ServerProcess>(flags, LogFile());
    EXPECT_TRUE(server->WaitReady());
    EXPECT_TRUE(server->WaitForLog("Redis front end listening on"));
    port_ = server->redis_port();
    EXPECT_NE(port_, 0) << server->Log();
    return server;
  }

  static std::string Error(const std::optional<Reply>& r) {
    if (!r) return "(no reply)";
    return r->type == REDIS_REPLY_ERROR ? r->str : "(not an error)";
  }

  int port_ = 0;
};

// Random pairs: binary keys of 1 to 30 bytes (colons, zeros and CRLF
// among them) and values of 0 to 200 bytes.
KeyValues RandomPairs(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  KeyValues kvs = {{std::string("a:b\r\n\0", 6), "colon, CRLF and zero"},
                   {"empty value", ""}};
  while (kvs.size() < n) {
    kvs.emplace(RandomBytes(rng, 1 + rng() % 30),
                RandomBytes(rng, rng() % 200));
  }
  return kvs;
}

TEST_F(RedisFrontTest, GetMGetAndExistsAnswerWhatTheLoaderWasGiven) {
  const KeyValues kvs = RandomPairs(7, 300);
  ASSERT_NE(BuildTable(data_, "cuckoo", kvs, "cuckoo"), "");
  ASSERT_NE(BuildTable(data_, "block", kvs, "block", {"--block-size", "512"}),
            "");
  auto server = Start();
  RedisConnection redis(port_);
  ASSERT_TRUE(redis.ok()) << redis.error();
  for (const std::string table : {"cuckoo", "block"}) {
    SCOPED_TRACE(table);
    std::vector<std::string> mget = {"MGET"};
    std::vector<std::string> exists = {"EXISTS"};
    std::vector<std::optional<std::string>> want;
    for (const auto& [key, value] : kvs) {
      const std::string name = table + ":" + key;
      auto r = redis.Command({"GET", name});
      ASSERT_TRUE(r);
      ASSERT_EQ(r->type, REDIS_REPLY_STRING) << r->str;
      EXPECT_EQ(r->str, value);
      v1::GetResponse grpc;
      ASSERT_TRUE(server->Get(table, key, &grpc).ok());
      EXPECT_EQ(grpc.value(), r->str);
      mget.push_back(name);
      exists.push_back(name);
      want.push_back(value);
      // A miss after every key, and the key again (duplicates count).
      mget.push_back(name + "-missing");
      exists.push_back(name);
      want.push_back(std::nullopt);
    }
    auto r = redis.Command({"GET", table + ":not a key"});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->type, REDIS_REPLY_NIL);

    auto all = redis.Command(mget);
    ASSERT_TRUE(all);
    ASSERT_EQ(all->type, REDIS_REPLY_ARRAY) << all->str;
    ASSERT_EQ(all->elements.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i]) {
        ASSERT_EQ(all->elements[i].type, REDIS_REPLY_STRING) << i;
        EXPECT_EQ(all->elements[i].str, *want[i]) << i;
      } else {
        EXPECT_EQ(all->elements[i].type, REDIS_REPLY_NIL) << i;
      }
    }
    auto count = redis.Command(exists);
    ASSERT_TRUE(count);
    ASSERT_EQ(count->type, REDIS_REPLY_INTEGER) << count->str;
    EXPECT_EQ(count->integer, static_cast<long long>(2 * kvs.size()));
  }

  // One MGET over both tables answers in order.
  const auto& [key, value] = *kvs.begin();
  auto mixed =
      redis.Command({"MGET", "block:" + key, "cuckoo:nope", "cuckoo:" + key});
  ASSERT_TRUE(mixed);
  ASSERT_EQ(mixed->elements.size(), 3u);
  EXPECT_EQ(mixed->elements[0].str, value);
  EXPECT_EQ(mixed->elements[1].type, REDIS_REPLY_NIL);
  EXPECT_EQ(mixed->elements[2].str, value);
}

TEST_F(RedisFrontTest, PipelinedCommandsAreAnsweredInOrder) {
  KeyValues kvs;
  for (int i = 0; i < 2000; ++i) {
    kvs.emplace(StrCat("key", i), std::string(100 + i % 50, 'a' + i % 26));
  }
  ASSERT_NE(BuildTable(data_, "t", kvs), "");
  auto server = Start();
  RedisConnection redis(port_);
  ASSERT_TRUE(redis.ok()) << redis.error();
  // 20,000 commands sent before a reply is read: far past the 1 MiB of
  // unsent replies at which the server stops reading, so it must resume.
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 2000; ++i) redis.Append({"GET", StrCat("t:key", i)});
  }
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 2000; ++i) {
      auto r = redis.Next();
      ASSERT_TRUE(r) << "reply " << round * 2000 + i;
      ASSERT_EQ(r->str, kvs.at(StrCat("key", i))) << round << " " << i;
    }
  }
}

TEST_F(RedisFrontTest, RedisTableServesBareKeys) {
  ASSERT_NE(BuildTable(data_, "users", {{"u1", "alice"}, {"t:x", "colon"}}),
            "");
  auto server = Start({"--redis-table", "users"});
  RedisConnection redis(port_);
  ASSERT_TRUE(redis.ok()) << redis.error();
  auto r = redis.Command({"MGET", "u1", "t:x", "u2"});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->elements.size(), 3u);
  EXPECT_EQ(r->elements[0].str, "alice");
  EXPECT_EQ(r->elements[1].str, "colon");
  EXPECT_EQ(r->elements[2].type, REDIS_REPLY_NIL);
}

TEST_F(RedisFrontTest, BadCommandsAreRefusedByNameAndTheConnectionGoesOn) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  auto server = Start({"--max-batch", "3", "--max-key-size", "10"});
  RedisConnection redis(port_);
  ASSERT_TRUE(redis.ok()) << redis.error();
  EXPECT_EQ(Error(redis.Command({"GET", "nope:k"})), "ERR no table \"nope\"");
  EXPECT_THAT(Error(redis.Command({"GET", "k"})),
              HasSubstr("names no table: write TABLE:KEY"));
  EXPECT_THAT(Error(redis.Command({"SET", "t:k", "x"})),
              HasSubstr("READONLY roost serves tables published in batch"));
  EXPECT_THAT(Error(redis.Command({"del", "t:k"})), HasSubstr("READONLY"));
  EXPECT_THAT(Error(redis.Command({"FLUSHALL"})), HasSubstr("READONLY"));
  EXPECT_THAT(Error(redis.Command({"KEYS", "*"})),
              HasSubstr("ERR unknown command \"KEYS\""));
  EXPECT_EQ(Error(redis.Command({"GET", "t:k", "t:k"})),
            "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(Error(redis.Command({"MGET"})),
            "ERR wrong number of arguments for 'mget' command");
  EXPECT_EQ(Error(redis.Command({"MGET", "t:a", "t:b", "t:c", "t:d"})),
            "ERR a command of 4 keys exceeds --max-batch 3");
  EXPECT_EQ(Error(redis.Command({"GET", "t:12345678901"})),
            "ERR key 1 is 11 bytes, more than --max-key-size 10");
  EXPECT_THAT(Error(redis.Command({"SELECT", "1"})),
              HasSubstr("DB index is out of range"));
  EXPECT_THAT(Error(redis.Command({"HELLO", "3"})), HasSubstr("NOPROTO"));
  EXPECT_THAT(Error(redis.Command({"AUTH", "x"})),
              HasSubstr("has no --access-policy"));
  // The connection still answers.
  auto r = redis.Command({"GET", "t:k"});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->str, "v");
  auto pong = redis.Command({"PING"});
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->str, "PONG");
  auto hello = redis.Command({"HELLO", "2"});
  ASSERT_TRUE(hello);
  ASSERT_EQ(hello->type, REDIS_REPLY_ARRAY);
  EXPECT_EQ(hello->elements.at(1).str, "roost");
  EXPECT_EQ(redis.Command({"SELECT", "0"})->str, "OK");
  EXPECT_EQ(redis.Command({"CLIENT", "SETINFO", "LIB-NAME", "x"})->str, "OK");
  // What redis-benchmark asks on connecting: nothing is saved, no log is
  // appended. Other parameters match nothing.
  auto config = redis.Command({"CONFIG", "GET", "appendonly", "save"});
  ASSERT_TRUE(config);
  ASSERT_EQ(config->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(config->elements.size(), 4u);
  EXPECT_EQ(config->elements[0].str, "save");
  EXPECT_EQ(config->elements[1].str, "");
  EXPECT_EQ(config->elements[2].str, "appendonly");
  EXPECT_EQ(config->elements[3].str, "no");
  auto other = redis.Command({"config", "get", "maxmemory"});
  ASSERT_TRUE(other);
  ASSERT_EQ(other->type, REDIS_REPLY_ARRAY);
  EXPECT_TRUE(other->elements.empty());
}

TEST_F(RedisFrontTest, InputThatIsNotRespClosesItsConnectionWithAReason) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  auto server = Start({"--max-request-size", "1048576"});
  struct Case {
    std::string bytes, reply;
  };
  const std::vector<Case> cases = {
      {"*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
      {"*2\r\n$3\r\nGET\r\n:5\r\n",
       "-ERR Protocol error: expected '$', got ':'\r\n"},
      {"*z\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
      {"*1\r\n$4\r\nPINGxx",
       "-ERR Protocol error: a bulk string does not "
       "end with CRLF\r\n"},
      {"*2\r\n$3\r\nGET\r\n$2000000\r\n",
       "-ERR Protocol error: a command of more than 1048576 bytes "
       "(--max-request-size)\r\n"},
      {"*99999999\r\n",
       "-ERR Protocol error: a command of 99999999 arguments; at most 10001 "
       "are taken\r\n"},
      {"GET \"t:k\"\r\n",
       "-ERR Protocol error: quoted inline arguments are not supported; send "
       "the command as a RESP array\r\n"},
      // Commands before the bad one are answered first.
      {"PING\r\nGET t:k\r\n*1\r\n$-5\r\n",
       "+PONG\r\n$1\r\nv\r\n-ERR Protocol error: invalid bulk length\r\n"},
      {"QUIT\r\nPING\r\n", "+OK\r\n"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RawExchange(port_, c.bytes), c.reply) << c.bytes;
  }
  // A client that shuts its side after its commands (`nc -N`) gets their
  // answers, then the end.
  EXPECT_EQ(RawExchange(port_, "GET t:k\r\nEXISTS t:k t:x\r\n", true),
            "$1\r\nv\r\n:1\r\n");
  // A line that never ends, past the inline limit.
  EXPECT_EQ(RawExchange(port_, std::string(70000, 'x')),
            "-ERR Protocol error: too big inline request (over 65536 "
            "bytes)\r\n");
  RedisConnection redis(port_);
  auto r = redis.Command({"GET", "t:k"});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->str, "v");
  EXPECT_EQ(server->CountLogLines("AddressSanitizer"), 0);
}

TEST_F(RedisFrontTest, ANewVersionIsReadWithoutReconnecting) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v1"}}), "");
  auto server = Start();
  RedisConnection redis(port_);
  ASSERT_EQ(redis.Command({"GET", "t:k"})->str, "v1");
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v2"}}), "");
  EXPECT_TRUE(WaitFor([&] {
    return redis.Command({"GET", "t:k"})->str == "v2";
  })) << server->Log();
}

TEST_F(RedisFrontTest, CommandsAndLookupsAreCounted) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  auto server = Start();
  RedisConnection redis(port_);
  redis.Command({"GET", "t:k"});
  redis.Command({"GET", "t:missing"});
  redis.Command({"MGET", "t:k", "t:k", "t:x"});
  redis.Command({"EXISTS", "t:k"});
  redis.Command({"GET", "nope:k"});
  const Metrics m = server->ScrapeMetrics();
  // grpc_server_handled_total of one command and code.
  const auto handled = [&m](const std::string& command,
                            const std::string& code) {
    return MetricOr(m, "grpc_server_handled_total{grpc_code=\"" + code +
                           "\",grpc_method=\"" + command +
                           "\",grpc_service=\"redis\",grpc_type=\"unary\"}");
  };
  EXPECT_EQ(handled("GET", "OK"), 2);
  EXPECT_EQ(handled("GET", "NotFound"), 1);
  EXPECT_EQ(handled("MGET", "OK"), 1);
  EXPECT_EQ(handled("EXISTS", "OK"), 1);
  EXPECT_EQ(MetricOr(m, R"(roost_request_keys_sum{grpc_method="MGET"})"), 3);
  EXPECT_EQ(MetricOr(m, R"(roost_lookups_total{result="hit",table="t"})"), 4);
  EXPECT_EQ(MetricOr(m, R"(roost_lookups_total{result="miss",table="t"})"), 2);
}

TEST_F(RedisFrontTest, IdleAndNonReadingClientsAreCutOff) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", std::string(100000, 'v')}}), "");
  auto server = Start({"--max-connection-idle", "1", "--send-timeout", "1"});
  // Idle: closed after about a second; the next command finds it closed.
  RedisConnection idle(port_);
  ASSERT_EQ(idle.Command({"PING"})->str, "PONG");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_FALSE(idle.Command({"PING"}));

  // A client that sends 200 GETs of 100 KB values and reads nothing: the
  // server stops reading it past 1 MiB of replies, and closes it when the
  // replies wait past --send-timeout.
  const int fd = ConnectLoopback(port_);
  ASSERT_GE(fd, 0);
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  // A server that never closes it fails the test instead of hanging it.
  const timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  std::string commands;
  for (int i = 0; i < 200; ++i) commands += "GET t:k\r\n";
  ASSERT_EQ(::send(fd, commands.data(), commands.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(commands.size()));
  std::this_thread::sleep_for(std::chrono::seconds(4));
  // Closed by the server: reading drains what was sent, then ends (or the
  // connection was reset).
  char buffer[65536];
  size_t read = 0;
  int last_error = 0;
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0) last_error = errno;
    if (n <= 0) break;
    read += n;
  }
  ::close(fd);
  EXPECT_NE(last_error, EAGAIN) << "the connection was still open";
  EXPECT_LT(read, 200u * 100000u) << "every reply was sent";
  // The server is fine.
  RedisConnection redis(port_);
  EXPECT_EQ(redis.Command({"GET", "t:k"})->str.size(), 100000u);
}

TEST_F(RedisFrontTest, CommandsBeingReceivedAreHeldToTheMemoryBudget) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  auto server = Start({"--grpc-memory", "16777216"});
  // Six clients each send 3 MB of a GET of a 4 MB key, and wait: each
  // command holds about 4 MiB of room while it is received, and 16 MiB
  // hold three or four of them.
  const std::string part =
      "*2\r\n$3\r\nGET\r\n$4000000\r\n" + std::string(3000000, 'x');
  std::vector<int> fds;
  for (int i = 0; i < 6; ++i) {
    fds.push_back(ConnectLoopback(port_));
    ASSERT_GE(fds.back(), 0);
    // Fails (EPIPE, ECONNRESET) once the server has closed it.
    ::send(fds.back(), part.data(), part.size(), MSG_NOSIGNAL);
  }
  const std::string kRefusal =
      "-ERR the server's memory for commands being received is full "
      "(--grpc-memory 16777216 bytes); retry\r\n";
  int refused = 0;
  int waiting = 0;
  for (int fd : fds) {
    // A refused client reads why, then the end; a held one reads nothing.
    std::string got;
    bool closed = false;
    char buffer[4096];
    pollfd p{fd, POLLIN, 0};
    while (!closed && ::poll(&p, 1, 2000) > 0) {
      const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) closed = true;
      if (n > 0) got.append(buffer, n);
    }
    if (closed && got == kRefusal) ++refused;
    if (!closed && got.empty()) ++waiting;
  }
  EXPECT_GE(refused, 2);
  EXPECT_GE(waiting, 3);
  EXPECT_EQ(refused + waiting, 6);
  Metrics m = server->ScrapeMetrics();
  EXPECT_EQ(MetricOr(m, "roost_redis_inputs_refused_total"), refused);
  EXPECT_GE(MetricOr(m, "roost_redis_input_bytes"), 3 * 3000000);
  EXPECT_LE(MetricOr(m, "roost_redis_input_bytes"), 16777216);
  // Their room goes back as they close.
  for (int fd : fds) ::close(fd);
  EXPECT_TRUE(WaitFor([&] {
    return MetricOr(server->ScrapeMetrics(), "roost_redis_input_bytes") < 65536;
  }));
  RedisConnection redis(port_);
  EXPECT_EQ(redis.Command({"GET", "t:k"})->str, "v");
}

class RedisSecurityTest : public SecurityTest {};

TEST_F(RedisSecurityTest, AnAccessPolicyIsKeptThroughAuth) {
  ASSERT_NE(BuildTable(data_, "public", {{"k", "public"}}), "");
  ASSERT_NE(BuildTable(data_, "secret", {{"k", "secret"}}), "");
  const std::string policy = scratch_.File("policy.json");
  WriteFile(policy, R"({"clients": [{"name": "job", "token_sha256": ")" +
                        Sha256Hex("s3cret") +
                        R"(", "tables": ["secret"]}],
                        "anonymous_tables": ["public"]})");
  ServerFlags flags = Flags();
  flags.extra = {"--redis-listen", "127.0.0.1:0", "--access-policy", policy};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(server.WaitForLog("Redis front end listening on"));
  RedisConnection redis(server.redis_port());
  EXPECT_EQ(redis.Command({"GET", "public:k"})->str, "public");
  EXPECT_EQ(redis.Command({"GET", "secret:k"})->str,
            "NOAUTH Authentication required to read table \"secret\": AUTH "
            "with a token of the access policy");
  EXPECT_EQ(redis.Command({"AUTH", "wrong"})->str,
            "WRONGPASS the token is not in the access policy");
  EXPECT_EQ(redis.Command({"AUTH", "default", "s3cret"})->str, "OK");
  EXPECT_EQ(redis.Command({"GET", "secret:k"})->str, "secret");
  EXPECT_EQ(redis.Command({"MGET", "secret:k", "t:k"})->str,
            "NOPERM this token may not read table \"t\"");
  // HELLO 2 AUTH, as redis-py and Lettuce send it.
  RedisConnection hello(server.redis_port());
  auto r = hello.Command({"HELLO", "2", "AUTH", "default", "s3cret"});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->type, REDIS_REPLY_ARRAY) << r->str;
  EXPECT_EQ(hello.Command({"GET", "secret:k"})->str, "secret");
}

// redis-cli (a real Redis client) over TLS: the server verified against
// CA `ca`, with client certificate `client` when not empty; its output
// has one line per reply.
ProcessResult RedisCliTls(Pki& pki, int port, const std::string& ca,
                          const std::string& client,
                          const std::vector<std::string>& command) {
  std::vector<std::string> argv = {
      "/usr/bin/redis-cli", "-h",    "127.0.0.1", "-p",
      std::to_string(port), "--tls", "--cacert",  pki.Pem(ca)};
  if (!client.empty()) {
    argv.insert(argv.end(),
                {"--cert", pki.Pem(client), "--key", pki.Key(client)});
  }
  argv.insert(argv.end(), command.begin(), command.end());
  return RunProcess(argv);
}

TEST_F(RedisSecurityTest, TlsClientsReadAndOthersAreClosed) {
  // Values large enough that a reply takes many TLS records and writes.
  KeyValues big;
  for (int i = 0; i < 20; ++i) {
    big[StrCat("k", i)] = std::string(100000, static_cast<char>('a' + i));
  }
  ASSERT_NE(BuildTable(data_, "big", big), "");
  ServerFlags flags = TlsFlags(
      false, {"--redis-listen", "127.0.0.1:0", "--handshake-timeout", "1"});
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(server.WaitForLog("Redis front end listening on"));
  EXPECT_TRUE(
      server.WaitForLog("TLS on the lookup and admin services, the "
                        "Redis front end"));
  const int port = server.redis_port();

  ProcessResult r = RedisCliTls(pki_, port, "ca", "", {"GET", "t:k"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "v\n");
  r = RedisCliTls(pki_, port, "ca", "", {"EXISTS", "t:k", "t:absent", "t:k"});
  EXPECT_EQ(r.out, "2\n") << r.err;
  std::vector<std::string> mget = {"MGET"};
  std::string expected;
  for (const auto& [key, value] : big) {
    mget.push_back("big:" + key);
    expected += value + "\n";
  }
  r = RedisCliTls(pki_, port, "ca", "", mget);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.size(), expected.size());
  EXPECT_TRUE(r.out == expected) << "the 2 MB MGET reply differs";

  // A client that does not trust the server's CA refuses it.
  r = RedisCliTls(pki_, port, "other-ca", "", {"GET", "t:k"});
  EXPECT_NE(r.out, "v\n");
  EXPECT_THAT(r.out + r.err, HasSubstr("certificate verify failed"));
  // A plaintext client gets no reply: its command is no handshake.
  RedisConnection plain(port);
  ASSERT_TRUE(plain.ok()) << plain.error();
  EXPECT_FALSE(plain.Command({"GET", "t:k"}));
  // A connection that never starts its handshake is closed after
  // --handshake-timeout (RawExchange gives up after 10 s).
  EXPECT_EQ(RawExchange(port, ""), "");
  // The server is fine.
  r = RedisCliTls(pki_, port, "ca", "", {"GET", "t:k"});
  EXPECT_EQ(r.out, "v\n") << r.err;
}

TEST_F(RedisSecurityTest, AClientCertificateIsTheClientToThePolicy) {
  ASSERT_NE(BuildTable(data_, "secret", {{"k", "secret"}}), "");
  const std::string policy = scratch_.File("policy.json");
  WriteFile(policy, R"({"clients": [
      {"name": "a", "certificate_names": ["client-a"], "tables": ["secret"]},
      {"name": "job", "token_sha256": ")" +
                        Sha256Hex("s3cret") + R"(", "tables": ["t"]}],
    "anonymous_tables": []})");
  ServerFlags flags = TlsFlags(
      true, {"--redis-listen", "127.0.0.1:0", "--access-policy", policy});
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(server.WaitForLog("Redis front end listening on"));
  const int port = server.redis_port();

  // client-a's certificate reads its table without AUTH...
  ProcessResult r =
      RedisCliTls(pki_, port, "ca", "client-a", {"GET", "secret:k"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "secret\n");
  // ...and no other.
  r = RedisCliTls(pki_, port, "ca", "client-a", {"GET", "t:k"});
  EXPECT_THAT(r.out, HasSubstr("NOAUTH this client certificate may not read "
                               "table \"t\": AUTH with a token"));
  // client-b's certificate is no client of the policy: AUTH with a token
  // gives it the token's tables.
  r = RedisCliTls(pki_, port, "ca", "client-b", {"GET", "secret:k"});
  EXPECT_THAT(r.out, HasSubstr("NOAUTH this client certificate may not read "
                               "table \"secret\""));
  r = RedisCliTls(pki_, port, "ca", "client-b",
                  {"--user", "default", "--pass", "s3cret", "GET", "t:k"});
  EXPECT_EQ(r.out, "v\n") << r.err;
  // Without a certificate, or with one of another CA or expired (both
  // named client-a), the handshake fails.
  for (const std::string client : {"", "stranger", "expired"}) {
    r = RedisCliTls(pki_, port, "ca", client, {"GET", "secret:k"});
    EXPECT_THAT(r.out, Not(HasSubstr("secret"))) << client;
    EXPECT_NE(r.out + r.err, "") << client;
  }
}

TEST_F(RedisSecurityTest, ARotatedCertificateReachesNewConnections) {
  pki_.Issue("server2", "other-ca", "DNS:localhost,IP:127.0.0.1");
  const std::string dir = RotatableTlsFiles({"server", "server2"});
  ServerFlags flags = Flags();
  flags.extra = {"--tls-cert",     dir + "/current/tls.crt",
                 "--tls-key",      dir + "/current/tls.key",
                 "--tls-refresh",  "1",
                 "--redis-listen", "127.0.0.1:0"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(server.WaitForLog("Redis front end listening on"));
  const int port = server.redis_port();
  EXPECT_EQ(RedisCliTls(pki_, port, "ca", "", {"GET", "t:k"}).out, "v\n");

  RotateTo(dir, "server2");
  EXPECT_TRUE(WaitFor([&] {
    return RedisCliTls(pki_, port, "other-ca", "", {"GET", "t:k"}).out == "v\n";
  })) << server.Log();
  EXPECT_NE(RedisCliTls(pki_, port, "ca", "", {"GET", "t:k"}).out, "v\n");
}

}  // namespace
}  // namespace roost::testing
