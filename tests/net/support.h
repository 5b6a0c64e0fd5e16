// Helpers of the net tests: a real-time wheel (10 ms tick) and an event loop per test whose
// shutdown must end with uv_loop_close() == 0, waitFor() (conditions with a deadline, never a
// sleep as synchronisation), short heartbeat options, a recorder of channel events, raw
// blocking POSIX sockets to play a hand-written peer.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/net/net.h>
#include <wheelbeat/tasks/failback.h>

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace wbnet {

using namespace std::chrono_literals;
using namespace wheelbeat::net;
using wheelbeat::core::HashedWheelTimer;
using wheelbeat::core::WheelOptions;
using ns = std::chrono::nanoseconds;
using Clock = std::chrono::steady_clock;

// Polls `pred` every millisecond until it holds or `timeout` passes; returns its last value.
inline bool waitFor(const std::function<bool()>& pred, ns timeout = 10s) {
  const auto deadline = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// One wheel and one loop per test. The destructor checks the clean shutdown.
struct Env {
  HashedWheelTimer timer{WheelOptions{.tickDuration = 10ms, .ticksPerWheel = 512}};
  EventLoop loop{"wb-net-test"};

  ~Env() { CHECK(loop.stop() == 0); }
};

// heartbeat 100 ms (checks every 33 ms), idle 300 ms, reconnect backoff 50 ms .. 200 ms.
inline wheelbeat::tasks::HeartbeatOptions fastHeartbeat() {
  wheelbeat::tasks::HeartbeatOptions o;
  o.interval = 100ms;
  o.reconnect.initialDelay = 50ms;
  o.reconnect.maxDelay = 200ms;
  o.reconnect.multiplier = 2.0;
  o.seed = 42;
  return o;
}

// Registry calls retried every 50 ms, check = false (a failed first attempt is retried, not
// reported).
inline wheelbeat::tasks::FailbackOptions fastFailback() {
  wheelbeat::tasks::FailbackOptions o;
  o.check = false;
  o.registryRetry.initialDelay = 50ms;
  o.registryRetry.maxDelay = 50ms;
  return o;
}

inline ServerOptions serverOptions(std::uint16_t port = 0) {
  ServerOptions o;
  o.listen = Endpoint{"127.0.0.1", port};
  o.heartbeat = fastHeartbeat();
  o.heartbeat.closeTimeout = 5s;  // tests that want idle closes lower it
  return o;
}

inline ClientOptions clientOptions(std::uint16_t port) {
  ClientOptions o;
  o.server = Endpoint{"127.0.0.1", port};
  o.connectTimeout = 1s;
  o.heartbeat = fastHeartbeat();
  return o;
}

// A client with 16 KiB bodies at most and a 64 KiB send queue, which holds three frames of the
// largest body (a fourth's header goes past it): tests of the queue's bound.
inline ClientOptions queueBoundClientOptions(std::uint16_t port) {
  ClientOptions o = clientOptions(port);
  o.codec.maxBody = 16 << 10;
  o.maxSendQueue = 64 << 10;
  return o;
}

// Everything a handler saw, thread-safe.
struct Recorder {
  std::mutex mutex;
  std::vector<std::string> frames;  // bodies of onFrame
  std::vector<CloseReason> closes;
  std::atomic<int> connected{0};
  std::atomic<int> closed{0};
  std::vector<ClientState> states;

  ChannelHandler handler(std::function<void(Channel&, const FrameView&)> onFrame = {}) {
    return ChannelHandler{
        .onConnected = [this](Channel&) { ++connected; },
        .onFrame =
            [this, onFrame](Channel& ch, const FrameView& f) {
              {
                std::lock_guard lock(mutex);
                frames.emplace_back(f.body);
              }
              if (onFrame) onFrame(ch, f);
            },
        .onClosed =
            [this](Channel&, const CloseReason& r) {
              {
                std::lock_guard lock(mutex);
                closes.push_back(r);
              }
              ++closed;
            },
    };
  }
  TcpClient::StateCallback stateCallback() {
    return [this](ClientState, ClientState to) {
      std::lock_guard lock(mutex);
      states.push_back(to);
    };
  }
  std::size_t frameCount() {
    std::lock_guard lock(mutex);
    return frames.size();
  }
  std::vector<CloseReason> closeReasons() {
    std::lock_guard lock(mutex);
    return closes;
  }
  std::vector<ClientState> stateList() {
    std::lock_guard lock(mutex);
    return states;
  }
};

// A blocking loopback socket: the hand-written peer.
class RawSocket {
public:
  explicit RawSocket(int fd = -1) : fd_(fd) {}
  ~RawSocket() { close(); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  static sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }
  bool connect(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in a = loopback(port);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return ::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0;
  }
  bool sendAll(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  // Reads exactly n bytes, or fewer if the peer closes or `timeout` passes.
  std::string recvExactly(std::size_t n, ns timeout = 5s) {
    std::string out;
    const auto deadline = Clock::now() + timeout;
    while (out.size() < n && Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      char buf[4096];
      const ssize_t r = ::recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (r <= 0) break;
      out.append(buf, static_cast<std::size_t>(r));
    }
    return out;
  }
  // True once the peer has closed (recv returns 0 or an error) within `timeout`.
  bool waitPeerClosed(ns timeout = 5s) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      char buf[4096];
      if (::recv(fd_, buf, sizeof(buf), 0) <= 0) return true;
    }
    return false;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  [[nodiscard]] int fd() const { return fd_; }

private:
  int fd_;
};

// A blocking listener on 127.0.0.1 (port 0 = ephemeral): plays a server the test controls.
class RawListener {
public:
  explicit RawListener(std::uint16_t port = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a = RawSocket::loopback(port);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~RawListener() { ::close(fd_); }
  RawListener(const RawListener&) = delete;
  RawListener& operator=(const RawListener&) = delete;

  // Accepts one connection within `timeout` (-1 fd if none).
  int accept(ns timeout = 5s) {
    pollfd p{fd_, POLLIN, 0};
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
    if (::poll(&p, 1, static_cast<int>(ms)) <= 0) return -1;
    return ::accept(fd_, nullptr, nullptr);
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }

private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

inline std::string heartbeatRequest(std::uint64_t id) {
  std::string s;
  encodeHeartbeatRequest(s, id);
  return s;
}
inline std::string heartbeatResponse(std::uint64_t id) {
  std::string s;
  encodeHeartbeatResponse(s, id);
  return s;
}
inline std::string frame(std::uint8_t flags, std::uint8_t status, std::uint64_t id,
                         std::string_view body) {
  std::string s;
  encodeFrame(s, flags, status, id, body);
  return s;
}

// Holds `loop` inside one posted callback from construction until release() (or destruction):
// nothing is flushed or read meanwhile, so what the test queues stays queued, exactly.
class LoopHold {
public:
  explicit LoopHold(EventLoop& loop) {
    auto released = release_.get_future().share();
    loop.post([this, released] {
      held_.set_value();
      released.wait();
    });
    held_.get_future().wait();
  }
  ~LoopHold() { release(); }
  LoopHold(const LoopHold&) = delete;
  LoopHold& operator=(const LoopHold&) = delete;
  void release() {
    if (!released_) release_.set_value();
    released_ = true;
  }

private:
  std::promise<void> held_;
  std::promise<void> release_;
  bool released_ = false;
};

// A server that answers every request with "<body>!", except "silent" (no answer) and
// "close-me" (closes the channel).
inline ChannelHandler echoHandler(Recorder& rec) {
  return rec.handler([](Channel& ch, const FrameView& f) {
    if (!f.isRequest() || !f.isTwoWay() || f.body == "silent") return;
    if (f.body == "close-me") {
      ch.close("asked to");
      return;
    }
    CHECK(ch.send(f.serialization(), kStatusOk, f.id, std::string(f.body) + "!") ==
          SendResult::Queued);
  });
}

// Collects request() outcomes from any thread.
struct Calls {
  std::mutex mutex;
  std::vector<CallResult> results;
  ResponseCallback callback() {
    return [this](const CallResult& r) {
      std::lock_guard lock(mutex);
      results.push_back(r);
    };
  }
  std::size_t size() {
    std::lock_guard lock(mutex);
    return results.size();
  }
  CallResult at(std::size_t i) {
    std::lock_guard lock(mutex);
    return results.at(i);
  }
};

}  // namespace wbnet
