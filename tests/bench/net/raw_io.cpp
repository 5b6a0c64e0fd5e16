#include "raw_io.h"

#include <wheelbeat/net/codec.h>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>

namespace wheelbeat::bench::netbench::raw {
namespace {

void setNoDelay(int fd) {
  const int on = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0) {
    throw sysError("setsockopt(TCP_NODELAY)");
  }
}

std::uint64_t idOf(std::string_view frame) noexcept {
  std::uint64_t id = 0;
  for (std::size_t i = 4; i < 12; ++i) id = (id << 8) | static_cast<std::uint8_t>(frame[i]);
  return id;
}

epoll_event eventFor(std::uint32_t events, Tag tag) {
  epoll_event e{};
  e.events = events;
  e.data.u64 = (std::uint64_t{static_cast<std::uint32_t>(tag.kind)} << 32) | tag.index;
  return e;
}

}  // namespace

std::runtime_error sysError(std::string_view what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

void UniqueFd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Epoll::Epoll() : fd_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (!fd_) throw sysError("epoll_create1");
}

void Epoll::add(int fd, std::uint32_t events, Tag tag) {
  epoll_event e = eventFor(events, tag);
  if (::epoll_ctl(fd_.get(), EPOLL_CTL_ADD, fd, &e) != 0) {
    throw sysError(fmt::format("epoll_ctl(ADD, fd {})", fd));
  }
}

void Epoll::modify(int fd, std::uint32_t events, Tag tag) {
  epoll_event e = eventFor(events, tag);
  if (::epoll_ctl(fd_.get(), EPOLL_CTL_MOD, fd, &e) != 0) {
    throw sysError(fmt::format("epoll_ctl(MOD, fd {})", fd));
  }
}

std::span<const epoll_event> Epoll::wait(int timeoutMs) {
  const int n =
      ::epoll_wait(fd_.get(), events_.data(), static_cast<int>(events_.size()), timeoutMs);
  if (n < 0 && errno != EINTR) throw sysError("epoll_wait");
  return {events_.data(), static_cast<std::size_t>(std::max(n, 0))};
}

Tag Epoll::tagOf(const epoll_event& event) noexcept {
  return Tag{static_cast<Kind>(event.data.u64 >> 32), static_cast<std::uint32_t>(event.data.u64)};
}

sockaddr_in loopbackAddress(const std::string& address, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1) {
    throw std::runtime_error(fmt::format("not an IPv4 address: '{}'", address));
  }
  return a;
}

UniqueFd listenOn(const std::string& address, int backlog, int& port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw sysError("socket");
  const int on = 1;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0) {
    throw sysError("setsockopt(SO_REUSEADDR)");
  }
  sockaddr_in a = loopbackAddress(address, 0);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    throw sysError(fmt::format("bind {}:0", address));
  }
  if (::listen(fd.get(), backlog) != 0) throw sysError(fmt::format("listen {}", address));
  socklen_t len = sizeof a;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    throw sysError(fmt::format("getsockname {}", address));
  }
  port = ntohs(a.sin_port);
  return fd;
}

UniqueFd acceptOne(int listener) {
  UniqueFd fd(::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (!fd) {
    // Nothing pending, or a connection that was reset before we took it: neither is a failure.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) {
      return fd;
    }
    throw sysError("accept4");
  }
  setNoDelay(fd.get());
  return fd;
}

UniqueFd startConnect(const sockaddr_in& to) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw sysError("socket");
  setNoDelay(fd.get());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 &&
      errno != EINPROGRESS) {
    char ip[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &to.sin_addr, ip, sizeof ip);
    throw sysError(fmt::format("connect {}:{}", ip, ntohs(to.sin_port)));
  }
  return fd;
}

int connectResult(int fd) {
  int error = 0;
  socklen_t len = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) return errno;
  return error;
}

UniqueFd periodicTimer(int periodMs, std::chrono::steady_clock::time_point first) {
  UniqueFd fd(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!fd) throw sysError("timerfd_create");
  const timespec period{.tv_sec = periodMs / 1000, .tv_nsec = (periodMs % 1000) * 1'000'000L};
  // steady_clock is CLOCK_MONOTONIC (libstdc++): `first` is an absolute time on the timer's clock.
  const auto ns = first.time_since_epoch().count();
  const timespec at{.tv_sec = ns / 1'000'000'000, .tv_nsec = ns % 1'000'000'000};
  const itimerspec spec{.it_interval = period, .it_value = at};
  if (::timerfd_settime(fd.get(), TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
    throw sysError("timerfd_settime");
  }
  return fd;
}

std::uint64_t readExpirations(int timerFd) {
  std::uint64_t n = 0;
  if (::read(timerFd, &n, sizeof n) != static_cast<ssize_t>(sizeof n)) {
    if (errno == EAGAIN || errno == EINTR) return 0;
    throw sysError("read(timerfd)");
  }
  return n;
}

std::optional<std::uint64_t> HeartbeatFrames::requestId(std::string_view frame) {
  const std::uint64_t id = idOf(frame);
  if (request(id) != frame) return std::nullopt;
  return id;
}

std::optional<std::uint64_t> HeartbeatFrames::responseId(std::string_view frame) {
  const std::uint64_t id = idOf(frame);
  if (response(id) != frame) return std::nullopt;
  return id;
}

std::string_view HeartbeatFrames::request(std::uint64_t id) {
  scratch_.clear();
  net::encodeHeartbeatRequest(scratch_, id);
  return scratch_;
}

std::string_view HeartbeatFrames::response(std::uint64_t id) {
  scratch_.clear();
  net::encodeHeartbeatResponse(scratch_, id);
  return scratch_;
}

bool writeFrame(int fd, std::string_view frame) {
  ssize_t n = -1;
  do {
    n = ::write(fd, frame.data(), frame.size());
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(frame.size());
}

bool CommandReader::readSome() {
  char buf[4096];
  ssize_t n = -1;
  do {
    n = ::read(STDIN_FILENO, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return true;
  if (n < 0) throw sysError("read(stdin)");
  if (n == 0) return false;
  buffer_.append(buf, static_cast<std::size_t>(n));
  return true;
}

}  // namespace wheelbeat::bench::netbench::raw
