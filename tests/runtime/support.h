// Helpers of the runtime suite: waiting on a condition with a generous bound, a blocking HTTP GET
// of a loopback /metrics, and the value of one sample line of a Prometheus text.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

namespace runtime_test {

using namespace std::chrono_literals;

// Polls `condition` until it holds or `limit` passes (a bound for a failing test, not a delay).
template <typename F>
bool waitUntil(F condition, std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// GET http://127.0.0.1:port/metrics; the body of a 200 answer, "" otherwise.
inline std::string scrape(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return {};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      ssize_t n = 0;
      while ((n = ::read(fd, buffer, sizeof buffer)) > 0) answer.append(buffer, std::size_t(n));
    }
  }
  ::close(fd);
  if (!answer.starts_with("HTTP/1.1 200")) return {};
  const auto body = answer.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : answer.substr(body + 4);
}

// The value of the sample line `series` ("name" or "name{label=\"v\"}") in `text`; nullopt when
// no such line.
inline std::optional<double> sample(const std::string& text, std::string_view series) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() > series.size() && line.starts_with(series) && line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

}  // namespace runtime_test
