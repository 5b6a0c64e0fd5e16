// RequestTracker: the pending requests of one channel, each with a timeout on the shared wheel.
// Exactly one of three things completes an entry, and whichever comes first removes it under the
// lock, so the others find nothing: the response (loop thread; the wheel timeout is cancelled),
// the timeout (wheel thread; the callback is posted to the loop), or the connection's close
// (loop thread; every entry fails with the close reason). Private to net/.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/codec.h>
#include <wheelbeat/net/event_loop.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace wheelbeat::net::detail {

class RequestTracker : public std::enable_shared_from_this<RequestTracker> {
public:
  RequestTracker(EventLoop& loop, core::HashedWheelTimer& timer) : loop_(loop), timer_(timer) {}

  // Registers `done` under a fresh id and arms its timeout. Any thread. Throws what
  // newTimeout() throws (the entry is then removed again).
  std::uint64_t add(ResponseCallback done, std::chrono::nanoseconds timeout);
  // Forgets `id` without calling its callback (its request was refused). Any thread.
  void drop(std::uint64_t id) noexcept;
  // Completes the entry `frame.id` with the frame, if there is one. Loop thread.
  bool complete(const FrameView& frame);
  // Fails every entry with CallStatus::Closed and `error`. Loop thread.
  void failAll(const std::string& error);
  [[nodiscard]] std::size_t pending() const;

private:
  struct Pending {
    ResponseCallback done;
    core::Timeout timeout;
  };
  void expire(std::uint64_t id, std::chrono::nanoseconds after);
  static void run(const ResponseCallback& done, const CallResult& result) noexcept;

  EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  std::atomic<std::uint64_t> nextId_{1};
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, Pending> pending_;
};

}  // namespace wheelbeat::net::detail
