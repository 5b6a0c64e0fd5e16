// RequestTracker: the pending requests of one channel, each with a timeout on the shared wheel
// (its task is 16 bytes, inline in the wheel's entry: no allocation per request for it).
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
#include <optional>
#include <unordered_map>

namespace wheelbeat::net::detail {

class RequestTracker {
public:
  RequestTracker(EventLoop& loop, core::HashedWheelTimer& timer);
  // Timeouts still on the wheel find no tracker afterwards (they do nothing). Any thread, the
  // wheel's included: a running timeout holds the link's lock only while it takes its entry out
  // of the map (no callback runs under it), so the destructor waits for that at most.
  ~RequestTracker();
  RequestTracker(const RequestTracker&) = delete;
  RequestTracker& operator=(const RequestTracker&) = delete;

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
    std::chrono::nanoseconds after;  // the timeout asked for, for the Timeout message
  };
  // What a timeout takes out of the map: the callback goes to the loop.
  struct Expired {
    ResponseCallback done;
    std::chrono::nanoseconds after;
    EventLoop* loop;
  };
  class Link;
  class LinkRef;
  class ExpiryTask;
  // Wheel thread: removes `id` for its timeout (nullopt: answered or failed first).
  std::optional<Expired> take(std::uint64_t id);
  static void postTimeout(Expired expired, std::uint64_t id);
  static void run(const ResponseCallback& done, const CallResult& result) noexcept;

  Link* link_;  // shared with the timeouts' tasks (one reference is ours)
  EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  std::atomic<std::uint64_t> nextId_{1};
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, Pending> pending_;
};

}  // namespace wheelbeat::net::detail
