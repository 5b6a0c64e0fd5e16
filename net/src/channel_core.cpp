#include "channel_core.h"

#include "channel/ports.h"

namespace wheelbeat::net::detail {
namespace {

std::atomic<std::uint64_t> nextChannelId{1};
// Ids of the READONLY events sent, shared by every channel of the process (an id need only be
// unique on its connection; READONLY goes out once per connection at a server's shutdown).
std::atomic<std::uint64_t> nextReadOnlyEventId{1};

}  // namespace

ChannelCore::ChannelCore(const ChannelConfig& config)
    : loop_(config.loop),
      timer_(config.timer),
      id_(nextChannelId.fetch_add(1, std::memory_order_relaxed)),
      metrics_(config.metrics ? config.metrics : processChannelMetrics()),
      outbox_(config.maxSendQueue),
      inbound_(config.codec, config.handler),
      probe_(config.heartbeat) {
  stampBoth();
}

std::string ChannelCore::logName() const {
  if (remote_.host.find(':') != std::string::npos) {  // IPv6: brackets keep the port apart
    return fmt::format("channel {} from [{}]:{}", id_, remote_.host, remote_.port);
  }
  return fmt::format("channel {} from {}:{}", id_, remote_.host, remote_.port);
}

void ChannelCore::stampBoth() noexcept {
  const std::int64_t now = timer_.now().count();
  inbound_.stamp(now);
  outbox_.stampWrite(now);
}

// Send path. Inside its own read callback the channel flushes once at the read's end (answers
// leave in one write) and counts the read's frames once (the counters are shared by every loop).
template <typename Encode>
[[gnu::always_inline]] inline SendResult ChannelCore::enqueue(std::size_t bytes, Encode&& encode,
                                                              bool readPathOk) {
  if (!isConnected()) return SendResult::NotConnected;
  const bool inRead = inOwnRead();
  ReadOutbox* box = inRead && readPathOk ? &readOutbox(loop_.native()) : nullptr;
  const auto hold = [this] { return std::shared_ptr<void>(shared_from_this()); };
  return counted(outbox_.enqueue(bytes, encode, box, this, inRead, hold), inRead);
}

SendResult ChannelCore::counted(Enqueued where, bool inRead) noexcept {
  if (where == Enqueued::QueueFull) return SendResult::QueueFull;
  if (inRead) {
    inbound_.frameOut();
  } else {
    metrics_->framesOut.fetch_add(1, std::memory_order_relaxed);
    if (where == Enqueued::Posted) postFlush();
  }
  return SendResult::Queued;
}

// The channel is its own flush node (loop_internal.h): posting a flush is one compare-and-swap on
// the loop's list, with no closure to build, queue, call and destroy. The outbox's hold keeps the
// channel alive until the posted flush ran; the loop runs every node it accepted.
void ChannelCore::postFlush() noexcept {
  if (postFlushNode(loop_.native(), this)) return;
  (void)outbox_.cancelPost();  // released after the outbox's lock: nothing will run that flush
}

void runFlushNode(FlushNode* node) noexcept {
  std::shared_ptr<void> hold;  // alive until the flush returns
  static_cast<ChannelCore&>(*node).flush(&hold);
}

SendResult ChannelCore::send(std::uint8_t flags, std::uint8_t status, std::uint64_t id,
                             std::string_view body) {
  if (body.size() > codec().maxBody) return SendResult::BodyTooLarge;
  const SendResult r = enqueue(
      kHeaderSize + body.size(),
      [&](std::string& out) { encodeFrame(out, flags, status, id, body, codec().maxBody); }, true);
  // A response leaves (queued or not: either way that request will not be answered again).
  if ((flags & (flag::kRequest | flag::kEvent)) == 0 && inbound_.stages().handler.answeredOne()) {
    unansweredChanged(-1);
  }
  return r;
}

SendResult ChannelCore::sendReadOnly() noexcept {
  const std::uint64_t eventId = nextReadOnlyEventId.fetch_add(1, std::memory_order_relaxed);
  return enqueue(
      kReadOnlyFrameBytes, [eventId](std::string& out) { encodeReadOnlyEvent(out, eventId); },
      true);
}

void ChannelCore::sendHeartbeat() {
  const std::int64_t decidedAt = timer_.now().count();
  SendResult r = SendResult::NotConnected;
  if (isConnected()) {
    const bool inRead = inOwnRead();
    const auto hold = [this] { return std::shared_ptr<void>(shared_from_this()); };
    r = counted(probe_.send(outbox_, decidedAt, inRead, hold), inRead);
  }
  if (r != SendResult::Queued) logDebug(*this, "heartbeat not sent: {}", sendResultName(r));
}

RequestResult ChannelCore::request(std::string_view body, std::chrono::nanoseconds timeout,
                                   ResponseCallback done, std::uint8_t serialization) {
  if (!isConnected()) return {SendResult::NotConnected, 0};
  if (body.size() > codec().maxBody) return {SendResult::BodyTooLarge, 0};
  const auto flags = static_cast<std::uint8_t>(flag::kRequest | flag::kTwoWay |
                                               (serialization & flag::kSerializationMask));
  return inbound_.stages()
      .tracker.getOrCreate(loop_, timer_)
      .start(std::move(done), timeout, [&](std::uint64_t id) { return send(flags, 0, id, body); });
}

// Write path

ReadOutbox* ChannelCore::ownReadOutbox() const noexcept {
  ReadOutbox& box = readOutbox(loop_.native());
  return box.owner == this ? &box : nullptr;
}

void ChannelCore::flush(std::shared_ptr<void>* postedHold) noexcept {
  WirePort wire(*this);
  outbox_.flush(wire, ownReadOutbox(), postedHold);
}

void ChannelCore::written(Stream& stream, std::size_t bytes, int status) noexcept {
  outbox_.written(bytes, status == 0, status == 0 ? timer_.now().count() : 0);
  if (status == 0) {
    metrics_->bytesOut.fetch_add(bytes, std::memory_order_relaxed);
  } else if (status != UV_ECANCELED) {
    closeStream(stream, reasonFromError(NetError(status), false, "write"));
  }
}

// Read path

void ChannelCore::onRead(Stream& stream, std::string_view data) noexcept {
  if (&stream != current() || stream.isClosing()) return;
  const auto now = timer_.now();
  inbound_.stamp(now.count());
  metrics_->bytesIn.fetch_add(data.size(), std::memory_order_relaxed);
  probe_.fed(now);
  const DecodeError error = inbound_.read(data, stream.decoder(), *this);
  const bool answered = inbound_.countFrames(*metrics_);
  if (error != DecodeError::None && !stream.isClosing()) {
    metrics_->countDecodeError(error);
    closeStream(stream, Inbound::decodeFailure(stream.decoder()));
  }
  // Only this read's own frames wait for this flush: a frame queued from another thread, or
  // outside a read, posted a flush of its own.
  if (answered) flush();
}

void ChannelCore::onReadError(Stream& stream, NetError error) noexcept {
  closeStream(stream, Inbound::readFailure(error, stream.decoder(), *metrics_));
}

bool ChannelCore::onFrame(const FrameView& frame) {
  FramePort port(*this);
  inbound_.dispatch(frame, port);
  return socket_.writable();  // the handler may have closed us
}

// Connect / close path

void ChannelCore::attach(Stream* stream) noexcept {
  inbound_.stages().readOnly.reset();  // a new connection: writable until told
  stampBoth();
  probe_.restart(timer_.now());  // a new connection: its own history, starting now
  if (NetError e = socket_.attach(*stream)) {
    closeStream(*stream, reasonFromError(e, false, "start reading"));
    return;
  }
  attached();
  const ChannelHandler* handler = inbound_.stages().handler.handler();
  if (handler && handler->onConnected) safely("onConnected", [&] { handler->onConnected(*this); });
}

void ChannelCore::streamClosed(Stream& stream, const CloseReason& reason) noexcept {
  socket_.released(stream);
  outbox_.dropAll();
  if (RequestTracker* pending = inbound_.stages().tracker.get()) {
    safely("failing pending requests", [&] { pending->failAll(fmt::format("{}", reason)); });
  }
}

void ChannelCore::notifyClosed(const CloseReason& reason) noexcept {
  const ChannelHandler* handler = inbound_.stages().handler.handler();
  if (handler && handler->onClosed) safely("onClosed", [&] { handler->onClosed(*this, reason); });
}

}  // namespace wheelbeat::net::detail
