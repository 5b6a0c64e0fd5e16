// The two views of a ChannelCore its stages work through, each a thin set of inline calls:
// FramePort for the frame stages (frame_stages.h), WirePort for the outbox's flush (outbox.h).
// Included by channel_core.cpp only. Private to net/.
#pragma once

#include "../channel_core.h"

namespace wheelbeat::net::detail {

// What the frame stages reach of the channel (frame_stages.h).
class ChannelCore::FramePort {
public:
  explicit FramePort(ChannelCore& c) noexcept : c_(c) {}
  ChannelMetrics& metrics() noexcept { return *c_.metrics_; }
  void readOnlyReceived() noexcept { c_.readOnlyReceived(); }
  // In a read: the answer joins the loop's read buffer (no allocation per answer).
  bool answerHeartbeat(std::uint64_t id) noexcept {
    const auto encode = [id](std::string& out) { encodeHeartbeatResponse(out, id); };
    return c_.enqueue(kHeartbeatFrameSize, encode, true) == SendResult::Queued;
  }
  void heartbeatAnswered(std::uint64_t id) noexcept {
    const auto rtt = c_.probe_.answered(id, c_.inbound_.lastRead());
    if (!rtt) return;
    c_.metrics_->heartbeatRtt.record(std::chrono::nanoseconds(*rtt));
    logDebug(c_, "heartbeat {} answered in {}", id, core::human(std::chrono::nanoseconds(*rtt)));
  }
  void unansweredChanged(std::int64_t delta) noexcept { c_.unansweredChanged(delta); }
  Channel& channel() noexcept { return c_; }
  void handlerThrew() noexcept {
    c_.safely("onFrame", [] { throw; });  // in the catch block: logged like any handler's
  }

private:
  ChannelCore& c_;
};

// What the outbox's flush writes through (outbox.h): the socket, the clock, the metrics, the
// heartbeat probe.
class ChannelCore::WirePort {
public:
  explicit WirePort(ChannelCore& c) noexcept : c_(c) {}
  bool writable() const noexcept { return c_.socket_.writable(); }
  std::int64_t now() const noexcept { return c_.timer_.now().count(); }
  int tryWrite(char* data, std::size_t size) noexcept { return c_.socket_.tryWrite(data, size); }
  int queueWrite(std::string&& data) noexcept { return c_.socket_.queueWrite(std::move(data)); }
  void failed(NetError e) noexcept {
    c_.closeStream(*c_.socket_.current(), reasonFromError(e, false, "write"));
  }
  void wrote(std::size_t bytes) noexcept {
    c_.metrics_->bytesOut.fetch_add(bytes, std::memory_order_relaxed);
  }
  void heartbeatWritten(std::int64_t now, std::int64_t decidedAt) noexcept {
    c_.probe_.written(now, decidedAt);
  }

private:
  ChannelCore& c_;
};

}  // namespace wheelbeat::net::detail
