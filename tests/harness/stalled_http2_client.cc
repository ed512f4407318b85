#include "tests/harness/stalled_http2_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace roost::testing {
namespace {

constexpr uint8_t kData = 0, kHeaders = 1, kRstStream = 3, kSettings = 4,
                  kPing = 6, kGoaway = 7;
constexpr uint8_t kAck = 1, kEndStream = 1, kEndHeaders = 4;

std::string Frame(uint8_t type, uint8_t flags, uint32_t stream,
                  std::string_view payload) {
  std::string f;
  f.push_back(static_cast<char>(payload.size() >> 16));
  f.push_back(static_cast<char>(payload.size() >> 8));
  f.push_back(static_cast<char>(payload.size()));
  f.push_back(static_cast<char>(type));
  f.push_back(static_cast<char>(flags));
  for (int shift = 24; shift >= 0; shift -= 8) {
    f.push_back(static_cast<char>(stream >> shift));
  }
  f.append(payload);
  return f;
}

// A header block of literal fields without indexing; names and values
// under 127 bytes.
std::string HeaderBlock(
    std::initializer_list<std::pair<std::string_view, std::string_view>>
        fields) {
  std::string block;
  for (const auto& [name, value] : fields) {
    block.push_back('\0');
    block.push_back(static_cast<char>(name.size()));
    block.append(name);
    block.push_back(static_cast<char>(value.size()));
    block.append(value);
  }
  return block;
}

bool ReadFull(int fd, char* out, size_t n) {
  while (n > 0) {
    const ssize_t got = ::recv(fd, out, n, 0);
    if (got <= 0) return false;
    out += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

std::unique_ptr<StalledHttp2Client> StalledHttp2Client::Connect(
    int port, bool ack_settings) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return nullptr;
  }
  auto client = std::unique_ptr<StalledHttp2Client>(
      new StalledHttp2Client(fd, ack_settings));
  // SETTINGS_INITIAL_WINDOW_SIZE (4) = 0: no stream may be sent a byte.
  // The preface goes before the reader starts, which may acknowledge the
  // server's SETTINGS: nothing may come before the preface.
  if (!client->Send(
          std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
          Frame(kSettings, 0, 0, std::string("\x00\x04\x00\x00\x00\x00", 6)))) {
    return nullptr;
  }
  client->reader_ = std::thread([c = client.get()] { c->Read(); });
  return client;
}

StalledHttp2Client::StalledHttp2Client(int fd, bool ack_settings)
    : fd_(fd), ack_settings_(ack_settings) {}

StalledHttp2Client::~StalledHttp2Client() {
  ::shutdown(fd_, SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
  ::close(fd_);
}

int StalledHttp2Client::streams_ended() const {
  std::lock_guard lock(ended_mu_);
  return static_cast<int>(ended_.size());
}

bool StalledHttp2Client::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool StalledHttp2Client::Call(std::string_view path, std::string_view message) {
  std::string body(5, '\0');  // not compressed, then the length
  for (int i = 0; i < 4; ++i) {
    body[1 + i] = static_cast<char>(message.size() >> (8 * (3 - i)));
  }
  body.append(message);
  std::lock_guard lock(send_mu_);
  const uint32_t stream = next_stream_;
  next_stream_ += 2;
  const std::string frames =
      Frame(kHeaders, kEndHeaders, stream,
            HeaderBlock({{":method", "POST"},
                         {":scheme", "http"},
                         {":path", path},
                         {":authority", "roost"},
                         {"content-type", "application/grpc"},
                         {"te", "trailers"}})) +
      Frame(kData, kEndStream, stream, body);
  if (!Send(frames)) return false;
  streams_started_.fetch_add(1);
  return true;
}

void StalledHttp2Client::Read() {
  char header[9];
  std::string payload;
  while (ReadFull(fd_, header, sizeof(header))) {
    const size_t length = (size_t{static_cast<uint8_t>(header[0])} << 16) |
                          (size_t{static_cast<uint8_t>(header[1])} << 8) |
                          static_cast<uint8_t>(header[2]);
    const uint8_t type = static_cast<uint8_t>(header[3]);
    const uint8_t flags = static_cast<uint8_t>(header[4]);
    const uint32_t stream = ((uint32_t{static_cast<uint8_t>(header[5])} << 24) |
                             (uint32_t{static_cast<uint8_t>(header[6])} << 16) |
                             (uint32_t{static_cast<uint8_t>(header[7])} << 8) |
                             static_cast<uint8_t>(header[8])) &
                            0x7fffffff;
    payload.resize(length);
    if (length > 0 && !ReadFull(fd_, payload.data(), length)) break;
    bool sent = true;
    if (type == kSettings && (flags & kAck) == 0 && ack_settings_) {
      std::lock_guard lock(send_mu_);
      sent = Send(Frame(kSettings, kAck, 0, ""));
    } else if (type == kPing && (flags & kAck) == 0) {
      std::lock_guard lock(send_mu_);
      sent = Send(Frame(kPing, kAck, 0, payload));
      pings_answered_.fetch_add(1);
    } else if (type == kRstStream ||
               (type == kHeaders && (flags & kEndStream) != 0)) {
      std::lock_guard lock(ended_mu_);
      ended_.insert(stream);
    } else if (type == kGoaway) {
      break;
    }
    if (!sent) break;
  }
  closed_.store(true);
}

}  // namespace roost::testing
