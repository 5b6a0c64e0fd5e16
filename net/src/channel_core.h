// ChannelCore: what server and client channels share — timestamps, the bounded outbox, the read
// path (decode, answer heartbeats, claim responses, hand the rest to the handler), the write
// path (one write per flush, whole frames only) and the close path. Private to net/.
//
// Threads: the public (net::Channel) methods follow channel.h. Methods marked "loop" run on the
// loop thread only.
#pragma once

#include "request_tracker.h"
#include "stream.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/tasks/failure_detector.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>

#include <any>
#include <atomic>
#include <memory>
#include <mutex>
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
  ~ChannelCore() override;
  ChannelCore(const ChannelCore&) = delete;
  ChannelCore& operator=(const ChannelCore&) = delete;

  // tasks::Channel (any thread).
  [[nodiscard]] std::chrono::nanoseconds lastRead() const noexcept override;
  [[nodiscard]] std::chrono::nanoseconds lastWrite() const noexcept override;
  [[nodiscard]] bool isConnected() const noexcept override;
  [[nodiscard]] bool isClosed() const noexcept override;
  // Bytes in the socket's receive buffer the loop has not read yet (FIONREAD on the connected
  // socket, under outMutex_ so the loop cannot close the descriptor meanwhile).
  [[nodiscard]] bool hasUnreadInput() const noexcept override;
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
  [[nodiscard]] std::chrono::nanoseconds lastHeartbeatRtt() const noexcept override;
  [[nodiscard]] std::chrono::nanoseconds lastHeartbeatSendWait() const noexcept override;
  [[nodiscard]] std::size_t queuedBytes() const noexcept override;
  [[nodiscard]] std::uint64_t heartbeatsAnswered() const noexcept override;
  [[nodiscard]] const tasks::PhiAccrualDetector* phiDetector() const noexcept override {
    return detector_.get();
  }
  [[nodiscard]] bool isReadOnly() const noexcept override {
    return readOnly_.load(std::memory_order_acquire);
  }
  [[nodiscard]] std::int64_t unanswered() const noexcept override {
    return unanswered_.load(std::memory_order_acquire);
  }
  [[nodiscard]] std::size_t pendingRequests() const noexcept override;
  // Where this channel counts (never null). Any thread.
  [[nodiscard]] ChannelMetrics& metrics() const noexcept { return *metrics_; }
  // Queues Dubbo's READONLY event (codec.h) with a fresh id. Any thread.
  SendResult sendReadOnly() noexcept;

  // Read path (loop): called by the current Stream.
  void onRead(Stream& stream, std::string_view data) noexcept;
  void onReadError(Stream& stream, NetError error) noexcept;
  [[nodiscard]] static CloseReason decodeFailure(Stream& stream) noexcept;
  bool onFrame(const FrameView& frame) override;
  // Write path (loop): writes the whole outbox, then the frames this channel queued in its
  // current read callback (if called inside one, or at its end), directly when the socket takes
  // them (the usual case), otherwise with one uv_write. A posted flush (postFlush()) passes
  // `postedHold`: it receives the channel's self-reference when this was the last posted flush
  // pending.
  void flush(std::shared_ptr<ChannelCore>* postedHold = nullptr) noexcept;
  // Close path (loop): the stream's close callback (the socket is fully closed).
  virtual void streamClosed(Stream& stream, const CloseReason& reason) noexcept;
  // Close path (loop): `stream` is about to close its descriptor; hasUnreadInput() must stop
  // using it first (a new socket could get the same number).
  void forgetDescriptor(Stream& stream) noexcept;

protected:
  // Makes `stream` the connection (loop): stamps both times, starts reading, marks connected,
  // calls attached() and then onConnected. A stream that fails to start reading is closed
  // instead (neither is called).
  void attach(Stream* stream) noexcept;
  // Loop, inside attach(): the channel already accepts frames, no callback has run yet.
  virtual void attached() noexcept {}
  // Closes the current stream, if any (loop). Returns false if there was none.
  bool closeCurrent(CloseReason why) noexcept;
  // Closes `stream` (loop); the current one stops counting as connected at once.
  void closeStream(Stream& stream, CloseReason why) noexcept;
  // A connecting stream becomes the current one before it is attached (loop).
  void setCurrent(Stream* stream) noexcept;
  // Marks the channel closed for good; true for the first call only. Any thread.
  bool markClosed() noexcept { return !closed_.exchange(true, std::memory_order_acq_rel); }
  void stampBoth() noexcept;
  void notifyClosed(const CloseReason& reason) noexcept;
  // Loop: the peer's READONLY event arrived (the flag is already set).
  virtual void readOnlyReceived() noexcept {}
  // A two-way request arrived (loop) / a response was queued (any thread): `delta` +1 / -1 of
  // unanswered(), applied before the call.
  virtual void unansweredChanged(std::int64_t delta) noexcept { (void)delta; }
  // Zeroes unanswered() (the connection is gone) and returns what it was. Loop.
  std::int64_t dropUnanswered() noexcept {
    return unanswered_.exchange(0, std::memory_order_acq_rel);
  }
  template <typename Fn>
  void safely(std::string_view what, Fn&& fn) noexcept;

  [[nodiscard]] EventLoop& loop() const noexcept { return loop_; }
  [[nodiscard]] core::HashedWheelTimer& timer() const noexcept { return timer_; }
  [[nodiscard]] const CodecOptions& codec() const noexcept { return codec_; }
  [[nodiscard]] Stream* current() const noexcept { return stream_; }
  void setRemote(Endpoint remote) { remote_ = std::move(remote); }

private:
  template <typename Encode>
  SendResult enqueue(std::size_t bytes, Encode&& encode, bool readPathOk);
  // The frames this channel queued in its current read callback (loop): taken by flush().
  std::string* takeReadOutbox() noexcept;
  ReadOutbox* ownReadOutbox() noexcept;
  bool flushReadAlone() noexcept;
  void dropTaken(std::size_t bytes, std::string* fromRead) noexcept;
  void writeReadOutbox(std::string& frames, std::int64_t now) noexcept;
  void appendReadOutbox(std::string& data, std::string& frames) noexcept;
  static void clearReadOutbox(std::string& frames) noexcept;
  void dropOutbox() noexcept;
  void answerHeartbeat(std::uint64_t id) noexcept;
  void heartbeatAnswered(std::uint64_t id) noexcept;
  void answeredOne() noexcept;
  bool countReadFrames() noexcept;
  bool claimed(const FrameView& frame);
  // The channel's tracker, created by the first request() (create); null before that. Any thread.
  RequestTracker* tracker(bool create);
  // After a flush wrote `data` whole (loop): hands it back to the outbox, or frees it.
  void reuseBuffer(std::string&& data) noexcept;
  // Posts a flush that keeps this channel alive until it ran (flushPosted_ and flushHold_ set
  // already).
  void postFlush() noexcept;
  // The posted flush is running (or was refused): no longer posted; the hold. Under outMutex_.
  [[nodiscard]] std::shared_ptr<ChannelCore> takeFlushHold() noexcept;
  // Writes what the socket takes now; returns how many bytes are left (see the definition).
  std::size_t writeNow(char* data, std::size_t size, std::int64_t now) noexcept;
  // Our heartbeat request `id`, queued alone (see hasAside_).
  void holdAside(std::uint64_t id) noexcept;  // under outMutex_, with nothing held aside yet
  void writeHeartbeatAlone(std::uint64_t id, std::int64_t now) noexcept;
  void appendAside(std::string& data, std::uint64_t id) noexcept;
  void writeQueued(std::string data) noexcept;
  static void onWritten(uv_write_t* req, int status) noexcept;

  EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const std::shared_ptr<const ChannelHandler> handler_;
  const CodecOptions codec_;
  const std::size_t maxSendQueueBytes_;
  const std::uint64_t id_;
  Endpoint remote_;
  std::any attachment_;
  const std::unique_ptr<tasks::PhiAccrualDetector> detector_;  // Phi only: fed by every read
  const std::shared_ptr<ChannelMetrics> metrics_;              // never null

  std::atomic<std::int64_t> lastRead_{0};   // ns on the timer's clock
  std::atomic<std::int64_t> lastWrite_{0};  // ns on the timer's clock
  // Loop: the write of the last heartbeat request (heartbeatId_'s, once written) and how long it
  // waited from sendHeartbeat() to that write.
  std::int64_t heartbeatWrittenAt_ = 0;
  std::int64_t heartbeatWriteWait_ = 0;
  std::atomic<std::int64_t> heartbeatRtt_{0};
  std::atomic<std::int64_t> heartbeatSendWait_{0};
  std::atomic<std::uint64_t> heartbeatId_{0};  // the last heartbeat request (under outMutex_)
  std::atomic<std::uint64_t> answered_{0};
  std::atomic<std::int64_t> unanswered_{0};
  std::atomic<std::size_t> queued_{0};  // accepted by send(), not yet written
  std::atomic<bool> readOnly_{false};
  std::atomic<bool> connected_{false};
  std::atomic<bool> closed_{false};
  bool heartbeatTimed_ = true;  // loop: the last heartbeat written was answered (or none was)

  mutable std::mutex outMutex_;  // guards outbox_, heartbeat*_, *aside*_, the flush hold, fd_,
                                 // tracker_'s creation
  std::string outbox_;           // whole frames not yet handed to uv_write
  std::int64_t heartbeatQueuedAt_ = 0;  // sendHeartbeat()'s time of heartbeat heartbeatId_
  std::uint64_t asideId_ = 0;           // see hasAside_
  // While a posted flush has not run (flushPosted_), this channel (postFlush()).
  std::shared_ptr<ChannelCore> flushHold_;
  // Created by the first request() (under the lock), owned, never replaced, deleted with the
  // channel: the request and response paths read it without the lock.
  std::atomic<RequestTracker*> tracker_{nullptr};
  int fd_ = -1;                   // the connected socket, for hasUnreadInput()
  bool heartbeatQueued_ = false;  // a heartbeat request to time waits for the flush
  // A heartbeat frame that came alone waits outside outbox_ (the flush writes it from a fixed
  // array): our request asideId_.
  bool hasAside_ = false;
  bool flushPosted_ = false;  // the channel is in its loop's list of flushes (postFlush())
  bool inRead_ = false;       // loop: inside onRead() (read only after an isLoopThread() check)

  Stream* stream_ = nullptr;  // loop: the open connection, if any
  // Loop: frames in and out during the current read, added to the metrics at its end.
  std::uint32_t framesInRead_ = 0;
  std::uint32_t framesOutInRead_ = 0;
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
