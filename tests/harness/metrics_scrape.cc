#include "tests/harness/metrics_scrape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace roost::testing {
namespace {

// Removes HTTP/1.1 chunked transfer encoding.
std::optional<std::string> Dechunk(std::string_view body) {
  std::string out;
  while (true) {
    const size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos) return std::nullopt;
    const size_t size =
        std::strtoul(std::string(body.substr(0, eol)).c_str(), nullptr, 16);
    body.remove_prefix(eol + 2);
    if (size == 0) return out;
    if (body.size() < size + 2) return std::nullopt;
    out.append(body.substr(0, size));
    body.remove_prefix(size + 2);
  }
}

}  // namespace

Metrics ParsePrometheusText(std::string_view text) {
  Metrics out;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (line.empty() || line[0] == '#') continue;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    std::string key(line.substr(0, i));
    std::vector<std::pair<std::string, std::string>> labels;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const size_t eq = line.find('=', i);
        if (eq == std::string_view::npos || eq + 1 >= line.size()) break;
        std::string name(line.substr(i, eq - i));
        std::string value;
        size_t j = eq + 2;  // past ="
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\' && j + 1 < line.size()) {
            ++j;
            value.push_back(line[j] == 'n' ? '\n' : line[j]);
          } else {
            value.push_back(line[j]);
          }
        }
        labels.emplace_back(std::move(name), std::move(value));
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      ++i;  // past }
    }
    std::sort(labels.begin(), labels.end());
    if (!labels.empty()) {
      key += '{';
      for (size_t l = 0; l < labels.size(); ++l) {
        if (l > 0) key += ',';
        key += labels[l].first + "=\"" + labels[l].second + "\"";
      }
      key += '}';
    }
    while (i < line.size() && line[i] == ' ') ++i;
    const std::string value(line.substr(i, line.find(' ', i) - i));
    out[key] = std::strtod(value.c_str(), nullptr);
  }
  return out;
}

double MetricOr(const Metrics& metrics, const std::string& series,
                double fallback) {
  auto it = metrics.find(series);
  return it == metrics.end() ? fallback : it->second;
}

std::optional<std::string> HttpGet(int port, const std::string& path,
                                   std::string* error) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return std::nullopt;
  }
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  const std::string request = "GET " + path +
                              " HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                              "Connection: close\r\n\r\n";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(request.size())) {
    *error = std::string("connect/send: ") + std::strerror(errno);
    ::close(fd);
    return std::nullopt;
  }
  char buf[65536];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) {
    response.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (n < 0) {
    *error = std::string("recv: ") + std::strerror(errno);
    return std::nullopt;
  }
  const size_t end = response.find("\r\n\r\n");
  if (end == std::string::npos || response.find(" 200 ") > end) {
    *error = "not a 200 answer: " + response.substr(0, 200);
    return std::nullopt;
  }
  const std::string headers = response.substr(0, end);
  std::string body = response.substr(end + 4);
  std::string lower = headers;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  if (lower.find("transfer-encoding: chunked") != std::string::npos) {
    auto dechunked = Dechunk(body);
    if (!dechunked) {
      *error = "bad chunked body";
      return std::nullopt;
    }
    body = std::move(*dechunked);
  }
  return body;
}

}  // namespace roost::testing
