// The few pieces the raw-epoll roles (raw_roles.cpp) are made of: an owned descriptor, a
// level-triggered epoll set, loopback TCP sockets set up like wheelbeat's (non-blocking,
// TCP_NODELAY), the 17-byte heartbeat frames cut out of a byte stream, and the driver's command
// lines read from stdin inside the same epoll loop. No libuv, no timer wheel: plain syscalls.
#pragma once

#include <netinet/in.h>
#include <sys/epoll.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace wheelbeat::bench::netbench::raw {

// "what: strerror(errno)".
std::runtime_error sysError(std::string_view what);

class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
  void reset() noexcept;

private:
  int fd_ = -1;
};

// What an epoll event belongs to, packed into its 64-bit user data.
enum class Kind : std::uint32_t { Stdin, Timer, Listener, Conn };
struct Tag {
  Kind kind;
  std::uint32_t index;  // listener or connection number
};

class Epoll {
public:
  Epoll();
  // Level-triggered: an fd with unread bytes is reported again on the next wait, so a handler
  // does one read per event and the loop stays fair between connections.
  void add(int fd, std::uint32_t events, Tag tag);
  void modify(int fd, std::uint32_t events, Tag tag);
  // The ready events, waiting at most timeoutMs (-1: until one). A signal: none.
  std::span<const epoll_event> wait(int timeoutMs);
  static Tag tagOf(const epoll_event& event) noexcept;

private:
  UniqueFd fd_;
  std::array<epoll_event, 256> events_{};
};

sockaddr_in loopbackAddress(const std::string& address, int port);
// A non-blocking listener on address:0 (SO_REUSEADDR, like libuv's bind); `port` gets the port
// the kernel picked.
UniqueFd listenOn(const std::string& address, int backlog, int& port);
// Accepts one pending connection (non-blocking, TCP_NODELAY); empty when none is pending.
UniqueFd acceptOne(int listener);
// A non-blocking socket with TCP_NODELAY whose connect() to `to` is started (or done).
UniqueFd startConnect(const sockaddr_in& to);
// The result of a connect() once the socket turned writable: 0 or an errno value.
int connectResult(int fd);
// A periodic CLOCK_MONOTONIC timerfd: fires at `first` (steady_clock is CLOCK_MONOTONIC), then
// every periodMs.
UniqueFd periodicTimer(int periodMs, std::chrono::steady_clock::time_point first);
// Expirations since the last call (0 if none).
std::uint64_t readExpirations(int timerFd);

// The heartbeat frames are fixed-size: a stream of them is cut every kFrameSize bytes.
inline constexpr std::size_t kFrameSize = 17;

// Frames split across reads wait here for their rest; several frames in one read are all cut.
// Fixed-size frames only: kSize bytes each (the heartbeats' 17, R1's 80).
template <std::size_t kSize>
class FixedFrameCutter {
public:
  // Calls onFrame(std::string_view frame) per complete frame, in order; stops and returns false
  // as soon as onFrame returns false (the caller then closes the connection).
  template <class OnFrame>
  bool feed(std::string_view data, OnFrame&& onFrame) {
    while (!data.empty()) {
      if (have_ == 0 && data.size() >= kSize) {
        if (!onFrame(data.substr(0, kSize))) return false;
        data.remove_prefix(kSize);
        continue;
      }
      const std::size_t take = std::min(kSize - have_, data.size());
      std::memcpy(partial_.data() + have_, data.data(), take);
      have_ += take;
      data.remove_prefix(take);
      if (have_ == kSize) {
        have_ = 0;
        if (!onFrame(std::string_view(partial_.data(), kSize))) return false;
      }
    }
    return true;
  }

private:
  std::array<char, kSize> partial_{};
  std::size_t have_ = 0;
};
using FrameCutter = FixedFrameCutter<kFrameSize>;

// Recognises and makes the heartbeat frames with wheelbeat::net's encoders (pure functions), so
// the bytes on the wire are exactly wheelbeat's. `scratch_` keeps its capacity: no allocation per
// frame after the first.
class HeartbeatFrames {
public:
  // The frame's id if it is a heartbeat request (resp. response), byte for byte.
  std::optional<std::uint64_t> requestId(std::string_view frame);
  std::optional<std::uint64_t> responseId(std::string_view frame);
  std::string_view request(std::uint64_t id);
  std::string_view response(std::uint64_t id);

private:
  std::string scratch_;
};

// Writes one whole frame with one write(). A 17-byte write falls short only if the peer stopped
// reading for long enough to fill its socket buffers: the run is broken then, so the caller
// closes the connection (and counts it) rather than queueing. Returns false on any failure.
bool writeFrame(int fd, std::string_view frame);

// The driver's commands: stdin is a pipe in the epoll set; one read per readiness event.
class CommandReader {
public:
  // Reads what is there and calls onLine(std::string_view) per complete line. False at EOF.
  template <class OnLine>
  bool readAvailable(OnLine&& onLine) {
    if (!readSome()) return false;
    for (auto nl = buffer_.find('\n'); nl != std::string::npos; nl = buffer_.find('\n')) {
      const std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      onLine(std::string_view(line));
    }
    return true;
  }

private:
  bool readSome();
  std::string buffer_;
};

}  // namespace wheelbeat::bench::netbench::raw
