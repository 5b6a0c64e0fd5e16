// ChannelCore: what server and client channels share, as a pipeline of stages it owns
// (net/src/channel/): the socket (ChannelSocket), the outbox (Outbox: enqueue, flush, the
// heartbeat fast path, write completion), the inbound path (Inbound: decode, then the frame
// stages READONLY, heartbeat responder, request tracker, handler) and the heartbeat probe
// (HeartbeatProbe: send, RTT and wait timing, the φ feed). The channel implements
// tasks::Channel and net::Channel by delegating to them. Private to net/.
//
// Threads: the public (net::Channel) methods follow channel.h. Methods marked "loop" run on the
// loop thread only; each stage's header gives its own rule.
#pragma once

#include "channel/heartbeat_probe.h"
#include "channel/inbound.h"
#include "channel/outbox.h"
#include "channel/socket.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>

#include <any>
#include <memory>
#include <string>
#include <utility>

namespace wheelbeat::net::detail {

struct ChannelConfig {
  EventLoop& loop;
  core::HashedWheelTimer& timer;
  std::shared_ptr<const ChannelHandler> handler;
  CodecOptions codec;
  std::size_t maxSendQueue;
  // The channel keeps a φ-accrual detector when heartbeat.detector is Phi (read in the
  // constructor only).
  const tasks::HeartbeatOptions& heartbeat;
  // Where the channel counts; null = processChannelMetrics().
  std::shared_ptr<ChannelMetrics> metrics = nullptr;
};

// A Debug line "NAME: message" about `channel` (its logName()), built only when Debug is on.
template <typename... Args>
void logDebug(const tasks::Channel& channel, fmt::format_string<Args...> format,
              Args&&... args) noexcept {
  if (!core::logEnabled(core::LogLevel::Debug)) return;
  try {
    core::log(core::LogLevel::Debug, "{}: {}", channel.logName(),
              fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory for a log line: no line
  }
}

class ChannelCore : public Channel,
                    public FrameSink,
                    public std::enable_shared_from_this<ChannelCore>,
                    public FlushNode {
public:
  explicit ChannelCore(const ChannelConfig& config);
  ~ChannelCore() override = default;
  ChannelCore(const ChannelCore&) = delete;
  ChannelCore& operator=(const ChannelCore&) = delete;

  // tasks::Channel (any thread).
  [[nodiscard]] std::chrono::nanoseconds lastRead() const noexcept override {
    return std::chrono::nanoseconds(inbound_.lastRead());
  }
  [[nodiscard]] std::chrono::nanoseconds lastWrite() const noexcept override {
    return std::chrono::nanoseconds(outbox_.lastWrite());
  }
  [[nodiscard]] bool isConnected() const noexcept override { return socket_.isConnected(); }
  [[nodiscard]] bool isClosed() const noexcept override { return socket_.isClosed(); }
  [[nodiscard]] bool hasUnreadInput() const noexcept override { return socket_.hasUnreadInput(); }
  void sendHeartbeat() override;
  // "channel 7 from 192.0.2.9:41234" (a client's: "client HOST:PORT").
  [[nodiscard]] std::string logName() const override;

  // net::Channel (any thread).
  [[nodiscard]] SendResult send(std::uint8_t flags, std::uint8_t status, std::uint64_t id,
                                std::string_view body) override;
  RequestResult request(std::string_view body, std::chrono::nanoseconds timeout,
                        ResponseCallback done, std::uint8_t serialization) override;
  [[nodiscard]] std::uint64_t id() const noexcept override { return id_; }
  [[nodiscard]] const Endpoint& remote() const noexcept override { return remote_; }
  [[nodiscard]] std::any& attachment() noexcept override { return attachment_; }
  [[nodiscard]] std::chrono::nanoseconds lastHeartbeatRtt() const noexcept override {
    return probe_.lastRtt();
  }
  [[nodiscard]] std::chrono::nanoseconds lastHeartbeatSendWait() const noexcept override {
    return probe_.lastSendWait();
  }
  [[nodiscard]] std::size_t queuedBytes() const noexcept override { return outbox_.queuedBytes(); }
  [[nodiscard]] std::uint64_t heartbeatsAnswered() const noexcept override {
    return inbound_.stages().heartbeats.answered();
  }
  [[nodiscard]] const tasks::PhiAccrualDetector* phiDetector() const noexcept override {
    return probe_.detector();
  }
  [[nodiscard]] bool isReadOnly() const noexcept override {
    return inbound_.stages().readOnly.isReadOnly();
  }
  [[nodiscard]] std::int64_t unanswered() const noexcept override {
    return inbound_.stages().handler.unanswered();
  }
  [[nodiscard]] std::size_t pendingRequests() const noexcept override {
    return inbound_.stages().tracker.pending();
  }
  // Where this channel counts (never null). Any thread.
  [[nodiscard]] ChannelMetrics& metrics() const noexcept { return *metrics_; }
  // Queues Dubbo's READONLY event (codec.h) with a fresh id. Any thread.
  SendResult sendReadOnly() noexcept;

  // Read path (loop): called by the current Stream.
  void onRead(Stream& stream, std::string_view data) noexcept;
  void onReadError(Stream& stream, NetError error) noexcept;
  bool onFrame(const FrameView& frame) override;
  // Write path (loop): Outbox::flush() through the socket; a posted flush passes `postedHold`.
  void flush(std::shared_ptr<void>* postedHold = nullptr) noexcept;
  // Write path (loop): a uv_write of `bytes` on `stream` completed with libuv's `status`.
  void written(Stream& stream, std::size_t bytes, int status) noexcept;
  // Close path (loop): the stream's close callback (the socket is fully closed).
  virtual void streamClosed(Stream& stream, const CloseReason& reason) noexcept;
  // Close path (loop): see ChannelSocket.
  void forgetDescriptor(Stream& stream) noexcept { socket_.forgetDescriptor(stream); }

protected:
  // Makes `stream` the connection (loop): stamps both times, starts reading, marks connected,
  // calls attached() and then onConnected. A stream that fails to start reading is closed
  // instead (neither is called).
  void attach(Stream* stream) noexcept;
  // Loop, inside attach(): the channel already accepts frames, no callback has run yet.
  virtual void attached() noexcept {}
  // Closes the current stream, if any (loop). Returns false if there was none.
  bool closeCurrent(CloseReason why) noexcept { return socket_.closeCurrent(std::move(why)); }
  // Closes `stream` (loop); the current one stops counting as connected at once.
  void closeStream(Stream& stream, CloseReason why) noexcept {
    socket_.close(stream, std::move(why));
  }
  // A connecting stream becomes the current one before it is attached (loop).
  void setCurrent(Stream* stream) noexcept { socket_.setCurrent(stream); }
  // Marks the channel closed for good; true for the first call only. Any thread.
  bool markClosed() noexcept { return socket_.markClosed(); }
  void stampBoth() noexcept;
  void notifyClosed(const CloseReason& reason) noexcept;
  // Loop: the peer's READONLY event arrived (the flag is already set).
  virtual void readOnlyReceived() noexcept {}
  // A two-way request arrived (loop) / a response was queued (any thread): `delta` +1 / -1 of
  // unanswered(), applied before the call.
  virtual void unansweredChanged(std::int64_t delta) noexcept { (void)delta; }
  // Zeroes unanswered() (the connection is gone) and returns what it was. Loop.
  std::int64_t dropUnanswered() noexcept { return inbound_.stages().handler.dropUnanswered(); }
  template <typename Fn>
  void safely(std::string_view what, Fn&& fn) noexcept;

  [[nodiscard]] EventLoop& loop() const noexcept { return loop_; }
  [[nodiscard]] core::HashedWheelTimer& timer() const noexcept { return timer_; }
  [[nodiscard]] const CodecOptions& codec() const noexcept { return inbound_.codec(); }
  [[nodiscard]] Stream* current() const noexcept { return socket_.current(); }
  void setRemote(Endpoint remote) { remote_ = std::move(remote); }

private:
  class FramePort;  // what the frame stages use (channel/ports.h)
  class WirePort;   // what the outbox's flush writes through (channel/ports.h)
  template <typename Encode>
  SendResult enqueue(std::size_t bytes, Encode&& encode, bool readPathOk);
  SendResult counted(Enqueued where, bool inRead) noexcept;
  [[nodiscard]] bool inOwnRead() const noexcept {
    return loop_.isLoopThread() && inbound_.inRead();
  }
  [[nodiscard]] ReadOutbox* ownReadOutbox() const noexcept;
  void postFlush() noexcept;

  EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const std::uint64_t id_;
  Endpoint remote_;
  std::any attachment_;
  const std::shared_ptr<ChannelMetrics> metrics_;  // never null
  ChannelSocket socket_;
  Outbox outbox_;
  Inbound inbound_;
  HeartbeatProbe probe_;
};

template <typename Fn>
void ChannelCore::safely(std::string_view what, Fn&& fn) noexcept {
  try {
    fn();
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "channel {}: {} threw: {}", id_, what, e.what());
  } catch (...) {
    core::log(core::LogLevel::Error, "channel {}: {} threw", id_, what);
  }
}

}  // namespace wheelbeat::net::detail
