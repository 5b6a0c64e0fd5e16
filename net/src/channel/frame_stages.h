// The frame stages of a channel's inbound stage, in their order: READONLY, heartbeats (answer a
// request, time a response), the request tracker (claims responses to request()), the handler
// (everything else). Each is a class with
//   template <typename Ctx> bool onFrame(const FrameView& frame, Ctx& ctx);
// that returns true when it consumed the frame (the stages after it do not see it). A new frame
// kind is a new stage in Inbound's list (inbound.h): a fixed list, dispatched with no virtual
// call and no allocation. Private to net/.
//
// Ctx (ChannelCore::FramePort in production, a fake in the tests) provides:
//   ChannelMetrics& metrics();
//   void readOnlyReceived();              the connection's first READONLY event
//   bool answerHeartbeat(std::uint64_t);  queues the answer; true if queued
//   void heartbeatAnswered(std::uint64_t);
//   void unansweredChanged(std::int64_t); a two-way request arrived (+1)
//   Channel& channel();                   what the handler is called with
//   void handlerThrew();                  called inside the catch block: logs the exception
// Thread rule: onFrame() on the loop thread (in the read callback); the getters on any thread.
#pragma once

#include "../request_tracker.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/codec.h>
#include <wheelbeat/net/event_loop.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace wheelbeat::net::detail {

// Dubbo's READONLY event: the peer is shutting down. Counted; reported once per connection.
class ReadOnlyStage {
public:
  template <typename Ctx>
  bool onFrame(const FrameView& frame, Ctx& ctx) {
    if (!frame.isReadOnlyEvent()) return false;
    ctx.metrics().readOnlyReceived.fetch_add(1, std::memory_order_relaxed);
    if (!readOnly_.exchange(true, std::memory_order_acq_rel)) ctx.readOnlyReceived();
    return true;
  }
  [[nodiscard]] bool isReadOnly() const noexcept {
    return readOnly_.load(std::memory_order_acquire);
  }
  // A new connection: writable until told.
  void reset() noexcept { readOnly_.store(false, std::memory_order_release); }

private:
  std::atomic<bool> readOnly_{false};
};

// Heartbeats never reach the handler: a request is answered, a response timed.
class HeartbeatResponder {
public:
  template <typename Ctx>
  bool onFrame(const FrameView& frame, Ctx& ctx) {
    if (!frame.isHeartbeat()) return false;
    if (!frame.isRequest()) {
      ctx.heartbeatAnswered(frame.id);
    } else if (ctx.answerHeartbeat(frame.id)) {
      answered_.fetch_add(1, std::memory_order_relaxed);
      ctx.metrics().heartbeatsAnswered.fetch_add(1, std::memory_order_relaxed);
    }
    return true;
  }
  // The peer's heartbeat requests answered (queued).
  [[nodiscard]] std::uint64_t answered() const noexcept {
    return answered_.load(std::memory_order_relaxed);
  }

private:
  std::atomic<std::uint64_t> answered_{0};
};

// Responses to request(): the pending requests' tracker, created by the first request().
class RequestTrackerStage {
public:
  RequestTrackerStage() = default;
  ~RequestTrackerStage() { delete tracker_.load(std::memory_order_acquire); }
  RequestTrackerStage(const RequestTrackerStage&) = delete;
  RequestTrackerStage& operator=(const RequestTrackerStage&) = delete;

  template <typename Ctx>
  bool onFrame(const FrameView& frame, Ctx& /*ctx*/) {
    if (frame.isRequest()) return false;
    RequestTracker* pending = get();
    return pending != nullptr && pending->complete(frame);
  }
  // The tracker, null before the first request(). Any thread.
  [[nodiscard]] RequestTracker* get() const noexcept {
    return tracker_.load(std::memory_order_acquire);
  }
  // Requests awaiting their response (RequestTracker::pending(); 0 on a lock failure). Any thread.
  [[nodiscard]] std::size_t pending() const noexcept;
  // The tracker, created if needed (never replaced, deleted with the stage: the request and
  // response paths read it without a lock). Any thread. Throws std::bad_alloc.
  RequestTracker& getOrCreate(EventLoop& loop, core::HashedWheelTimer& timer);

private:
  std::atomic<RequestTracker*> tracker_{nullptr};
};

// Everything else goes to the channel's handler; two-way requests are counted until answered.
class HandlerStage {
public:
  explicit HandlerStage(std::shared_ptr<const ChannelHandler> handler) noexcept
      : handler_(std::move(handler)) {}

  template <typename Ctx>
  bool onFrame(const FrameView& frame, Ctx& ctx) {
    if (frame.isRequest() && frame.isTwoWay() && !frame.isEvent()) {
      unanswered_.fetch_add(1, std::memory_order_acq_rel);
      ctx.unansweredChanged(1);
    }
    if (!handler_ || !handler_->onFrame) return true;
    try {
      handler_->onFrame(ctx.channel(), frame);
    } catch (const std::bad_alloc&) {
      throw;  // ends the channel: the decoder stops with OutOfMemory (Inbound::read())
    } catch (...) {
      ctx.handlerThrew();
    }
    return true;
  }
  [[nodiscard]] const ChannelHandler* handler() const noexcept { return handler_.get(); }
  [[nodiscard]] std::int64_t unanswered() const noexcept {
    return unanswered_.load(std::memory_order_acquire);
  }
  // A response left: one request fewer unanswered (none below 0). True if one was counted out.
  bool answeredOne() noexcept;
  // The connection is gone: zeroes the count and returns what it was.
  std::int64_t dropUnanswered() noexcept {
    return unanswered_.exchange(0, std::memory_order_acq_rel);
  }

private:
  const std::shared_ptr<const ChannelHandler> handler_;
  std::atomic<std::int64_t> unanswered_{0};
};

}  // namespace wheelbeat::net::detail
