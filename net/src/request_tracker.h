// RequestTracker: the pending requests of one channel, each with a timeout on the shared wheel
// (its task is 16 bytes, inline in the wheel's entry: no allocation per request for it).
//
// The map of pending requests belongs to the loop thread: a request started there, its response
// and its connection's close touch it without a lock, and answered entries' map nodes are reused
// (a mutex and a node allocation per request were a large share of a pipelining client's CPU).
// A request started on another thread goes to a small inbox under a lock instead; the loop moves
// the inbox into the map whenever it misses an id, and before failing everything on a close.
// A timeout runs on the wheel thread, which only posts the id to the loop: the loop takes the
// entry out. Exactly one of the three (response, timeout, close) completes an entry: whichever
// the loop sees first removes it, so the others find nothing. Private to net/.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/codec.h>
#include <wheelbeat/net/event_loop.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wheelbeat::net::detail {

class RequestTracker {
public:
  RequestTracker(EventLoop& loop, core::HashedWheelTimer& timer);
  // Timeouts still on the wheel find no tracker afterwards (they do nothing). Any thread, after
  // the last call on the loop thread: a posted timeout holds the link's lock only while it takes
  // its entry out (no callback runs under it), so the destructor waits for that at most.
  ~RequestTracker();
  RequestTracker(const RequestTracker&) = delete;
  RequestTracker& operator=(const RequestTracker&) = delete;

  // Registers `done` under a fresh id, arms its timeout, then calls `send(id)`, which queues the
  // request's frame and returns its SendResult; the entry is kept only if that is Queued (else
  // `done` is never called). Any thread. Throws what newTimeout() throws (nothing was sent).
  // From another thread the send happens under the inbox lock: the loop may read the response
  // before this returns, and on a miss it takes that lock, so it finds the entry.
  template <typename Send>
  RequestResult start(ResponseCallback done, std::chrono::nanoseconds timeout, Send&& send) {
    const std::uint64_t id = nextId_.fetch_add(1, std::memory_order_relaxed);
    if (loop_.isLoopThread()) {
      insert(id, arm(std::move(done), id, timeout));
      const SendResult r = send(id);
      if (r != SendResult::Queued) erase(id);
      return {r, id};
    }
    std::lock_guard lock(inboxMutex_);
    Pending entry = arm(std::move(done), id, timeout);
    const SendResult r = send(id);
    if (r != SendResult::Queued) {
      entry.timeout.cancel();
      return {r, id};
    }
    inbox_.emplace_back(id, std::move(entry));
    inboxSize_.store(inbox_.size(), std::memory_order_relaxed);
    return {r, id};
  }
  // Completes the entry `frame.id` with the frame, if there is one. Loop thread.
  bool complete(const FrameView& frame);
  // Fails every entry with CallStatus::Closed and `error`. Loop thread.
  void failAll(const std::string& error);
  // Requests awaiting their response. Any thread: exact on the loop thread; elsewhere a snapshot
  // that may count a request the loop is moving out of the inbox twice, for that moment.
  [[nodiscard]] std::size_t pending() const noexcept;

private:
  struct Pending {
    ResponseCallback done;
    core::Timeout timeout;
    std::chrono::nanoseconds after;  // the timeout asked for, for the Timeout message
  };
  using Map = std::unordered_map<std::uint64_t, Pending>;
  class Link;
  class LinkRef;
  class ExpiryTask;

  Pending arm(ResponseCallback done, std::uint64_t id, std::chrono::nanoseconds timeout);
  void insert(std::uint64_t id, Pending entry);         // loop thread
  void erase(std::uint64_t id) noexcept;                // loop thread; cancels the timeout
  Map::iterator find(std::uint64_t id);                 // loop thread; takes in the inbox on a miss
  void takeInbox();                                     // loop thread
  ResponseCallback release(Map::iterator it) noexcept;  // loop thread; keeps the node
  void expire(std::uint64_t id);                        // loop thread, for a timeout
  static void run(const ResponseCallback& done, const CallResult& result) noexcept;
  void noteSize() noexcept { mapSize_.store(pending_.size(), std::memory_order_relaxed); }

  Link* link_;  // shared with the timeouts' tasks (one reference is ours)
  EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  std::atomic<std::uint64_t> nextId_{1};
  Map pending_;                        // loop thread
  std::vector<Map::node_type> spare_;  // loop thread: nodes of answered requests, for reuse
  std::atomic<std::size_t> mapSize_{0};
  std::mutex inboxMutex_;
  std::vector<std::pair<std::uint64_t, Pending>> inbox_;  // guarded by inboxMutex_
  std::atomic<std::size_t> inboxSize_{0};
};

}  // namespace wheelbeat::net::detail
