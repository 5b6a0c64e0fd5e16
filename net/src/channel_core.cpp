#include "channel_core.h"

#include <wheelbeat/tasks/error_names.h>

#include <sys/ioctl.h>

#include <new>
#include <utility>

namespace wheelbeat::net {

std::string_view sendResultName(SendResult result) noexcept {
  switch (result) {
    case SendResult::Queued: return "queued";
    case SendResult::QueueFull: return "queue-full";
    case SendResult::NotConnected: return "not-connected";
    case SendResult::BodyTooLarge: return "body-too-large";
  }
  return "unknown";
}

std::string_view callStatusName(CallStatus status) noexcept {
  switch (status) {
    case CallStatus::Ok: return "ok";
    case CallStatus::Timeout: return "timeout";
    case CallStatus::Closed: return "closed";
  }
  return "unknown";
}

std::string_view errorName(SendResult result) noexcept {
  switch (result) {
    case SendResult::Queued: return {};
    case SendResult::QueueFull: return tasks::errors::kOverloaded;
    case SendResult::NotConnected: return tasks::errors::kDisconnected;
    case SendResult::BodyTooLarge: return tasks::errors::kBadRequest;
  }
  return tasks::errors::kDisconnected;
}

std::string_view errorName(const CallResult& result) noexcept {
  namespace errors = tasks::errors;
  if (result.status == CallStatus::Timeout) return errors::kTimeout;
  if (result.status == CallStatus::Closed) return errors::kDisconnected;
  // Dubbo 2's response status codes (org.apache.dubbo.remoting.exchange.Response).
  switch (result.frameStatus) {
    case kStatusOk: return {};
    case 30:
    case 31: return errors::kTimeout;
    case 35: return errors::kDisconnected;
    case 40:
    case 90: return errors::kBadRequest;
    case 100: return errors::kOverloaded;
    default: return errors::kRejected;
  }
}

namespace detail {
namespace {

std::atomic<std::uint64_t> nextChannelId{1};
// Ids of the READONLY events sent, shared by every channel of the process (an id need only be
// unique on its connection; READONLY goes out once per connection at a server's shutdown): a
// counter per channel cost every connection 8 bytes.
std::atomic<std::uint64_t> nextReadOnlyEventId{1};
constexpr std::size_t kHeartbeatFrameBytes = kHeartbeatFrameSize;  // codec.h

// One uv_write: the bytes stay alive until libuv's write callback.
struct WriteReq {
  uv_write_t req{};
  std::string data;
  ChannelCore* channel = nullptr;
};

}  // namespace

ChannelCore::ChannelCore(const ChannelConfig& config)
    : loop_(config.loop),
      timer_(config.timer),
      handler_(config.handler),
      codec_(config.codec),
      maxSendQueueBytes_(config.maxSendQueue),
      id_(nextChannelId.fetch_add(1, std::memory_order_relaxed)),
      detector_(config.heartbeat.detector == tasks::DetectorKind::Phi
                    ? std::make_unique<tasks::PhiAccrualDetector>(config.heartbeat.phi,
                                                                  config.heartbeat.interval)
                    : nullptr),
      metrics_(config.metrics ? config.metrics : processChannelMetrics()) {
  stampBoth();
}

ChannelCore::~ChannelCore() { delete tracker_.load(std::memory_order_acquire); }

std::chrono::nanoseconds ChannelCore::lastRead() const noexcept {
  return std::chrono::nanoseconds(lastRead_.load(std::memory_order_acquire));
}
std::chrono::nanoseconds ChannelCore::lastWrite() const noexcept {
  return std::chrono::nanoseconds(lastWrite_.load(std::memory_order_acquire));
}
bool ChannelCore::isConnected() const noexcept {
  return connected_.load(std::memory_order_acquire);
}
bool ChannelCore::isClosed() const noexcept { return closed_.load(std::memory_order_acquire); }
bool ChannelCore::hasUnreadInput() const noexcept {
  std::lock_guard lock(outMutex_);
  int unread = 0;
  return fd_ >= 0 && ::ioctl(fd_, FIONREAD, &unread) == 0 && unread > 0;
}
std::chrono::nanoseconds ChannelCore::lastHeartbeatRtt() const noexcept {
  return std::chrono::nanoseconds(heartbeatRtt_.load(std::memory_order_relaxed));
}
std::chrono::nanoseconds ChannelCore::lastHeartbeatSendWait() const noexcept {
  return std::chrono::nanoseconds(heartbeatSendWait_.load(std::memory_order_relaxed));
}
std::size_t ChannelCore::queuedBytes() const noexcept {
  return queued_.load(std::memory_order_relaxed);
}
std::uint64_t ChannelCore::heartbeatsAnswered() const noexcept {
  return answered_.load(std::memory_order_relaxed);
}

std::string ChannelCore::logName() const {
  if (remote_.host.find(':') != std::string::npos) {  // IPv6: brackets keep the port apart
    return fmt::format("channel {} from [{}]:{}", id_, remote_.host, remote_.port);
  }
  return fmt::format("channel {} from {}:{}", id_, remote_.host, remote_.port);
}

void ChannelCore::stampBoth() noexcept {
  const std::int64_t now = timer_.now().count();
  lastRead_.store(now, std::memory_order_release);
  lastWrite_.store(now, std::memory_order_release);
}

// Send path

namespace {
constexpr std::size_t kReadOutboxKeepUpTo = std::size_t{64} << 10;
}  // namespace

// `encode(out)` appends the frame to `out`: the outbox (under outMutex_), or in a read callback
// the read's buffer, if `readPathOk` (an encoder that touches state under outMutex_ passes false).
template <typename Encode>
SendResult ChannelCore::enqueue(std::size_t bytes, Encode&& encode, bool readPathOk) {
  if (!isConnected()) return SendResult::NotConnected;
  if (queued_.fetch_add(bytes, std::memory_order_acq_rel) + bytes > maxSendQueueBytes_) {
    queued_.fetch_sub(bytes, std::memory_order_acq_rel);
    return SendResult::QueueFull;
  }
  // Inside a read callback the read path flushes once at its end (answers leave in one write),
  // and counts the read's frames once: the counters are the process's, shared by every loop.
  const bool inRead = loop_.isLoopThread() && inRead_;
  ReadOutbox* box = inRead && readPathOk ? &readOutbox(loop_.native()) : nullptr;
  if (box != nullptr && (box->owner == nullptr || box->owner == this)) {
    try {
      encode(box->data);
    } catch (...) {
      queued_.fetch_sub(bytes, std::memory_order_acq_rel);
      throw;
    }
    box->owner = this;
    ++framesOutInRead_;
    return SendResult::Queued;
  }
  bool post = false;
  {
    std::lock_guard lock(outMutex_);
    // Else a flush is on its way: a posted one not run yet, or the read's.
    const bool wake = outbox_.empty() && !hasAside_ && !inRead;
    encode(outbox_);
    if (wake && !flushPosted_) {
      flushPosted_ = true;
      flushHold_ = shared_from_this();
      post = true;
    }
  }
  if (inRead) {
    ++framesOutInRead_;
  } else {
    metrics_->framesOut.fetch_add(1, std::memory_order_relaxed);
    if (post) postFlush();
  }
  return SendResult::Queued;
}

// The channel is its own flush node (loop_internal.h): posting a flush is one compare-and-swap on
// the loop's list, with no closure to build, queue under the loop's lock, call and destroy (~130
// instructions per heartbeat on H1's client). flushHold_ keeps the channel alive until the posted
// flush ran; the loop runs every node it accepted, also while stopping.
void ChannelCore::postFlush() noexcept {
  if (postFlushNode(loop_.native(), this)) return;
  std::shared_ptr<ChannelCore> hold;  // released here, after the lock: nothing will run that flush
  std::lock_guard lock(outMutex_);
  hold = takeFlushHold();
}

void runFlushNode(FlushNode* node) noexcept {
  std::shared_ptr<ChannelCore> hold;  // alive until the flush returns
  static_cast<ChannelCore*>(node)->flush(&hold);
}

std::shared_ptr<ChannelCore> ChannelCore::takeFlushHold() noexcept {
  flushPosted_ = false;
  return std::move(flushHold_);
}

SendResult ChannelCore::send(std::uint8_t flags, std::uint8_t status, std::uint64_t id,
                             std::string_view body) {
  if (body.size() > codec_.maxBody) return SendResult::BodyTooLarge;
  const SendResult r = enqueue(
      kHeaderSize + body.size(),
      [&](std::string& out) { encodeFrame(out, flags, status, id, body, codec_.maxBody); }, true);
  if ((flags & (flag::kRequest | flag::kEvent)) == 0) answeredOne();
  return r;
}

// A response leaves (queued or not: either way that request will not be answered again).
void ChannelCore::answeredOne() noexcept {
  std::int64_t n = unanswered_.load(std::memory_order_acquire);
  while (n > 0) {
    if (unanswered_.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) {
      unansweredChanged(-1);
      return;
    }
  }
}

SendResult ChannelCore::sendReadOnly() noexcept {
  const std::uint64_t eventId = nextReadOnlyEventId.fetch_add(1, std::memory_order_relaxed);
  return enqueue(
      kReadOnlyFrameBytes, [eventId](std::string& out) { encodeReadOnlyEvent(out, eventId); },
      true);
}

void ChannelCore::sendHeartbeat() {
  const std::int64_t decidedAt = timer_.now().count();
  std::uint64_t hbId = 0;
  // Never through the read's buffer: the id and its time change under outMutex_, together, so
  // that the flush that takes this frame reads the time of the heartbeat it writes.
  const SendResult r = enqueue(
      kHeartbeatFrameBytes,
      [&](std::string& out) {
        hbId = heartbeatId_.fetch_add(1, std::memory_order_relaxed) + 1;
        if (out.empty() && !hasAside_) {
          // Alone (the usual case for a heartbeat): the flush writes it from a fixed array, so no
          // buffer is allocated here on the wheel thread and freed on the loop's (two slow-path
          // malloc calls per heartbeat otherwise: the frame is past the string's inline capacity).
          holdAside(hbId);
        } else {
          encodeHeartbeatRequest(out, hbId);
        }
        heartbeatQueued_ = true;
        heartbeatQueuedAt_ = decidedAt;
      },
      false);
  if (r != SendResult::Queued) logDebug(*this, "heartbeat not sent: {}", sendResultName(r));
}

RequestResult ChannelCore::request(std::string_view body, std::chrono::nanoseconds timeout,
                                   ResponseCallback done, std::uint8_t serialization) {
  if (!isConnected()) return {SendResult::NotConnected, 0};
  if (body.size() > codec_.maxBody) return {SendResult::BodyTooLarge, 0};
  const auto flags = static_cast<std::uint8_t>(flag::kRequest | flag::kTwoWay |
                                               (serialization & flag::kSerializationMask));
  return tracker(true)->start(std::move(done), timeout,
                              [&](std::uint64_t id) { return send(flags, 0, id, body); });
}

std::size_t ChannelCore::pendingRequests() const noexcept {
  const RequestTracker* t = tracker_.load(std::memory_order_acquire);
  try {
    return t != nullptr ? t->pending() : 0;
  } catch (...) {  // a lock failure: report nothing pending rather than throw
    return 0;
  }
}

RequestTracker* ChannelCore::tracker(bool create) {
  if (RequestTracker* t = tracker_.load(std::memory_order_acquire); t != nullptr || !create) {
    return t;
  }
  std::lock_guard lock(outMutex_);
  RequestTracker* t = tracker_.load(std::memory_order_relaxed);
  if (t == nullptr) {
    t = new RequestTracker(loop_, timer_);
    tracker_.store(t, std::memory_order_release);
  }
  return t;
}

void ChannelCore::flush(std::shared_ptr<ChannelCore>* postedHold) noexcept {
  if (postedHold == nullptr && flushReadAlone()) return;
  std::string data;
  std::optional<std::uint64_t> aside;  // the id of our heartbeat held aside
  std::optional<std::int64_t> heartbeatDecidedAt;
  {
    std::lock_guard lock(outMutex_);
    // A posted flush counts itself out in the same critical section that takes the outbox.
    if (postedHold != nullptr) *postedHold = takeFlushHold();
    // A heartbeat alone leaves the outbox empty: no swap (~40 instructions per heartbeat).
    if (!outbox_.empty()) data.swap(outbox_);
    if (std::exchange(heartbeatQueued_, false)) heartbeatDecidedAt = heartbeatQueuedAt_;
    if (std::exchange(hasAside_, false)) aside = asideId_;
  }
  std::string* fromRead = takeReadOutbox();
  if (data.empty() && !aside && fromRead == nullptr) return;
  if (stream_ == nullptr || stream_->isClosing()) {
    return dropTaken(data.size() + (aside ? kHeartbeatFrameBytes : 0), fromRead);
  }
  // One clock read stamps both the write (lastWrite_) and a heartbeat's start: its round trip
  // starts here (behind libuv's queue, if any, it leaves in order).
  const std::int64_t now = timer_.now().count();
  if (heartbeatDecidedAt) {
    heartbeatWrittenAt_ = now;
    heartbeatWriteWait_ = now - *heartbeatDecidedAt;
    heartbeatTimed_ = false;
  }
  if (fromRead != nullptr) {
    // The usual case of a read's end: only the read's frames, written from its buffer.
    if (data.empty() && !aside) return writeReadOutbox(*fromRead, now);
    appendReadOutbox(data, *fromRead);  // frames queued before the read's go first
  }
  if (aside && data.empty()) {
    writeHeartbeatAlone(*aside, now);
    return;
  }
  if (aside) appendAside(data, *aside);
  const std::size_t rest = writeNow(data.data(), data.size(), now);
  if (rest == 0) {
    reuseBuffer(std::move(data));
    return;
  }
  data.erase(0, data.size() - rest);
  writeQueued(std::move(data));
}

// A read's end where the read's frames are all that queued_ counts: nothing waits in the outbox
// or aside, so they are written without the lock (~60 instructions a read). A frame another thread
// queues meanwhile finds the outbox empty and posts a flush of its own; one counted by this
// thread (a heartbeat queued inside the read) shows in queued_. False: the full flush is needed.
bool ChannelCore::flushReadAlone() noexcept {
  ReadOutbox* box = ownReadOutbox();
  if (box == nullptr || box->data.empty() ||
      queued_.load(std::memory_order_acquire) != box->data.size()) {
    return false;
  }
  box->owner = nullptr;
  if (stream_ == nullptr || stream_->isClosing()) {
    dropTaken(0, &box->data);
  } else {
    writeReadOutbox(box->data, timer_.now().count());
  }
  return true;
}

// The loop's read buffer if it holds this channel's frames (those of its read callback).
ReadOutbox* ChannelCore::ownReadOutbox() noexcept {
  ReadOutbox& box = readOutbox(loop_.native());
  return box.owner == this ? &box : nullptr;
}

// This channel's frames queued in its read callback (null if none), to be written now.
std::string* ChannelCore::takeReadOutbox() noexcept {
  ReadOutbox* box = ownReadOutbox();
  if (box == nullptr) return nullptr;
  box->owner = nullptr;
  return box->data.empty() ? nullptr : &box->data;
}

// The stream is closing: `bytes` taken from the outbox and the read's frames, if any, are
// dropped and counted out of queued_.
void ChannelCore::dropTaken(std::size_t bytes, std::string* fromRead) noexcept {
  if (fromRead != nullptr) {
    bytes += fromRead->size();
    clearReadOutbox(*fromRead);
  }
  queued_.fetch_sub(bytes, std::memory_order_acq_rel);
}

void ChannelCore::writeReadOutbox(std::string& frames, std::int64_t now) noexcept {
  const std::size_t rest = writeNow(frames.data(), frames.size(), now);
  if (rest != 0) {
    try {
      writeQueued(std::string(frames.data() + frames.size() - rest, rest));
    } catch (const std::bad_alloc&) {  // the frames are lost: account for them as written
      queued_.fetch_sub(rest, std::memory_order_acq_rel);
    }
  }
  clearReadOutbox(frames);
}

void ChannelCore::appendReadOutbox(std::string& data, std::string& frames) noexcept {
  try {
    data.append(frames);
  } catch (const std::bad_alloc&) {  // the read's frames are lost, the others still go
    queued_.fetch_sub(frames.size(), std::memory_order_acq_rel);
  }
  clearReadOutbox(frames);
}

// Emptied for the next read; a buffer grown past kReadOutboxKeepUpTo by a large answer is freed.
void ChannelCore::clearReadOutbox(std::string& frames) noexcept {
  if (frames.capacity() > kReadOutboxKeepUpTo) {
    std::string().swap(frames);
  } else {
    frames.clear();
  }
}

void ChannelCore::writeHeartbeatAlone(std::uint64_t id, std::int64_t now) noexcept {
  auto frame = heartbeatRequestFrame(id);
  const std::size_t rest = writeNow(frame.data(), frame.size(), now);
  if (rest == 0) return;
  try {
    writeQueued(std::string(frame.data() + frame.size() - rest, rest));
  } catch (const std::bad_alloc&) {  // the frame is lost: account for it as written
    queued_.fetch_sub(rest, std::memory_order_acq_rel);
  }
}

void ChannelCore::holdAside(std::uint64_t id) noexcept {
  hasAside_ = true;
  asideId_ = id;
}

// Frames queued after the heartbeat was held aside go first; a heartbeat's place among them
// does not matter to the peer.
void ChannelCore::appendAside(std::string& data, std::uint64_t id) noexcept {
  try {
    encodeHeartbeatRequest(data, id);
  } catch (const std::bad_alloc&) {  // the heartbeat is lost, the frames still go
    queued_.fetch_sub(kHeartbeatFrameBytes, std::memory_order_acq_rel);
  }
}

// A batch of at least kKeepFrom bytes means a busy channel: its buffer, emptied, becomes the
// outbox again (if nothing was queued meanwhile), so a pipelining channel allocates nothing per
// batch; before, each batch grew a new string (~7 allocations for 16 frames of 80 bytes). A
// smaller batch frees it: a channel carrying only heartbeats (17 bytes a second) holds no buffer
// between them, and one that was busy and went quiet frees its buffer at its next small batch.
void ChannelCore::reuseBuffer(std::string&& data) noexcept {
  constexpr std::size_t kKeepFrom = 256;
  constexpr std::size_t kKeepUpTo = std::size_t{64} << 10;
  if (data.size() < kKeepFrom || data.capacity() > kKeepUpTo) return;  // freed with `data`
  data.clear();
  std::lock_guard lock(outMutex_);
  if (outbox_.empty()) outbox_.swap(data);
}

// The common case: libuv holds nothing queued for this socket, so the bytes go out in one
// write(2) right here, with no write request and no POLLOUT re-arm (libuv's uv_write costs an
// epoll_ctl per write once its queue drains). Returns how many bytes are left for uv_write:
// all of them when libuv still has queued writes (uv_try_write keeps the order), 0 on an error
// (the stream is then closing). `now`: the flush's time (timer clock, ns), stamped as the write's.
std::size_t ChannelCore::writeNow(char* data, std::size_t size, std::int64_t now) noexcept {
  uv_buf_t buf = uv_buf_init(data, static_cast<unsigned>(size));
  const int n = uv_try_write(asStream(stream_->tcp()), &buf, 1);
  if (n == UV_EAGAIN || n == UV_ENOSYS) return size;
  if (n < 0) {
    queued_.fetch_sub(size, std::memory_order_acq_rel);
    closeStream(*stream_, reasonFromError(NetError(n), false, "write"));
    return 0;
  }
  const auto written = static_cast<std::size_t>(n);
  queued_.fetch_sub(written, std::memory_order_acq_rel);
  metrics_->bytesOut.fetch_add(written, std::memory_order_relaxed);
  if (written > 0) lastWrite_.store(now, std::memory_order_release);
  return size - written;
}

// The rest of a partial write, or everything behind libuv's queue: one uv_write, which keeps
// the bytes alive until its callback.
void ChannelCore::writeQueued(std::string data) noexcept {
  const std::size_t size = data.size();
  auto* w = new (std::nothrow) WriteReq{{}, std::move(data), this};
  if (w == nullptr) {
    queued_.fetch_sub(size, std::memory_order_acq_rel);
    closeStream(*stream_, reasonFromError(NetError(UV_ENOMEM), false, "write"));
    return;
  }
  w->req.data = w;
  uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(size));
  if (int rc = uv_write(&w->req, asStream(stream_->tcp()), &buf, 1, &ChannelCore::onWritten);
      rc != 0) {
    queued_.fetch_sub(size, std::memory_order_acq_rel);
    delete w;
    closeStream(*stream_, reasonFromError(NetError(rc), false, "write"));
  }
}

void ChannelCore::onWritten(uv_write_t* req, int status) noexcept {
  std::unique_ptr<WriteReq> w(static_cast<WriteReq*>(req->data));
  ChannelCore& self = *w->channel;  // alive: its Stream holds it until the close callback
  self.queued_.fetch_sub(w->data.size(), std::memory_order_acq_rel);
  if (status == 0) {
    self.metrics_->bytesOut.fetch_add(w->data.size(), std::memory_order_relaxed);
    self.lastWrite_.store(self.timer_.now().count(), std::memory_order_release);
  } else if (status != UV_ECANCELED) {
    self.closeStream(*Stream::of(req->handle), reasonFromError(NetError(status), false, "write"));
  }
}

void ChannelCore::dropOutbox() noexcept {
  std::size_t dropped = 0;
  {
    std::lock_guard lock(outMutex_);
    dropped = outbox_.size() + (hasAside_ ? kHeartbeatFrameBytes : 0);
    std::string().swap(outbox_);
    heartbeatQueued_ = false;
    hasAside_ = false;
  }
  queued_.fetch_sub(dropped, std::memory_order_acq_rel);
}

// Read path

void ChannelCore::onRead(Stream& stream, std::string_view data) noexcept {
  if (&stream != stream_ || stream.isClosing()) return;
  const auto now = timer_.now();
  lastRead_.store(now.count(), std::memory_order_release);
  metrics_->bytesIn.fetch_add(data.size(), std::memory_order_relaxed);
  if (detector_) detector_->heartbeat(now);
  inRead_ = true;
  DecodeError error = DecodeError::None;
  try {
    error = stream.decoder().feed(data, *this);
  } catch (const std::bad_alloc&) {
    // Anywhere on the read path (decoding, answering, a handler): this channel ends, not the
    // process. The handler's own exceptions are caught and logged in onFrame.
    error = DecodeError::OutOfMemory;
  }
  inRead_ = false;
  const bool answered = countReadFrames();
  if (error != DecodeError::None && !stream.isClosing()) {
    metrics_->countDecodeError(error);
    closeStream(stream, decodeFailure(stream));
  }
  // Only this read's own frames wait for this flush: a frame queued from another thread, or
  // outside a read, posted a flush of its own.
  if (answered) flush();
}

// One add per read and counter instead of one per frame: a pipelined read carries many frames,
// and the process-wide counters' cache line would otherwise travel between the loops' cores.
// True when the read queued frames of its own.
bool ChannelCore::countReadFrames() noexcept {
  if (framesInRead_ != 0) metrics_->framesIn.fetch_add(framesInRead_, std::memory_order_relaxed);
  const bool sent = framesOutInRead_ != 0;
  if (sent) metrics_->framesOut.fetch_add(framesOutInRead_, std::memory_order_relaxed);
  framesInRead_ = 0;
  framesOutInRead_ = 0;
  return sent;
}

// Why the decoder stopped, as a close reason; built without throwing (an allocation failure
// leaves the text empty rather than the process dead).
CloseReason ChannelCore::decodeFailure(Stream& stream) noexcept {
  const FrameDecoder& decoder = stream.decoder();
  const DecodeError error =
      decoder.error() == DecodeError::None ? DecodeError::OutOfMemory : decoder.error();
  CloseReason why{isResourceError(error) ? CloseKind::Resource : CloseKind::Protocol, {}, {}};
  try {
    if (isResourceError(error)) {
      why.text = decoder.reason().empty() ? "out of memory on the read path" : decoder.reason();
    } else {
      why.text = fmt::format("{}: {}", decodeErrorName(error), decoder.reason());
    }
  } catch (const std::bad_alloc&) {
    why.text.clear();
  }
  return why;
}

void ChannelCore::onReadError(Stream& stream, NetError error) noexcept {
  if (error.code() != UV_EOF) {
    closeStream(stream, reasonFromError(error, false, "read"));
    return;
  }
  if (stream.decoder().finish() == DecodeError::TruncatedAtEof) {
    metrics_->countDecodeError(DecodeError::TruncatedAtEof);
    closeStream(stream,
                CloseReason{CloseKind::Protocol, error,
                            fmt::format("truncated-at-eof: {}", stream.decoder().reason())});
  } else {
    closeStream(stream, CloseReason{CloseKind::Eof, error, "peer closed the connection"});
  }
}

bool ChannelCore::onFrame(const FrameView& frame) {
  ++framesInRead_;  // counted at the end of the read (countReadFrames())
  if (frame.isReadOnlyEvent()) {
    metrics_->readOnlyReceived.fetch_add(1, std::memory_order_relaxed);
    if (!readOnly_.exchange(true, std::memory_order_acq_rel)) readOnlyReceived();
  } else if (frame.isHeartbeat()) {
    if (frame.isRequest()) {
      answerHeartbeat(frame.id);
    } else {
      heartbeatAnswered(frame.id);
    }
  } else if (frame.isRequest() || !claimed(frame)) {
    if (frame.isRequest() && frame.isTwoWay() && !frame.isEvent()) {
      unanswered_.fetch_add(1, std::memory_order_acq_rel);
      unansweredChanged(1);
    }
    if (handler_ && handler_->onFrame) {
      try {
        handler_->onFrame(*this, frame);
      } catch (const std::bad_alloc&) {
        throw;  // ends this channel in onRead (decoder stopped), see there
      } catch (...) {
        safely("onFrame", [] { throw; });  // rethrown there: logged like any handler exception
      }
    }
  }
  return stream_ != nullptr && !stream_->isClosing();  // the handler may have closed us
}

bool ChannelCore::claimed(const FrameView& frame) {
  RequestTracker* pending = tracker(false);
  return pending != nullptr && pending->complete(frame);
}

void ChannelCore::answerHeartbeat(std::uint64_t id) noexcept {
  // Called in a read: the answer joins the read's buffer, which is kept per loop thread, so no
  // buffer is allocated and freed per answer (H1's server allocated one of ~32 bytes per
  // heartbeat, a quarter of its user-space instructions per heartbeat, before answers waited).
  const SendResult r = enqueue(
      kHeartbeatFrameBytes, [id](std::string& out) { encodeHeartbeatResponse(out, id); }, true);
  if (r == SendResult::Queued) {
    answered_.fetch_add(1, std::memory_order_relaxed);
    metrics_->heartbeatsAnswered.fetch_add(1, std::memory_order_relaxed);
  }
}

// Without the send lock: only the last heartbeat queued is timed (an answer to an older one, or
// to none of ours, is not), and the peer can only answer it once it was written, by this loop,
// which stamped its write. Timed once.
void ChannelCore::heartbeatAnswered(std::uint64_t id) noexcept {
  if (heartbeatTimed_ || id != heartbeatId_.load(std::memory_order_relaxed)) return;
  heartbeatTimed_ = true;
  // lastRead_: stamped by the read that brought the answer (this callback; the loop writes it).
  const std::int64_t rtt = lastRead_.load(std::memory_order_relaxed) - heartbeatWrittenAt_;
  heartbeatRtt_.store(rtt, std::memory_order_relaxed);
  heartbeatSendWait_.store(heartbeatWriteWait_, std::memory_order_relaxed);
  metrics_->heartbeatRtt.record(std::chrono::nanoseconds(rtt));
  logDebug(*this, "heartbeat {} answered in {}", id, core::human(std::chrono::nanoseconds(rtt)));
}

// Connect / close path

void ChannelCore::setCurrent(Stream* stream) noexcept { stream_ = stream; }

void ChannelCore::attach(Stream* stream) noexcept {
  stream_ = stream;
  readOnly_.store(false, std::memory_order_release);  // a new connection: writable until told
  stampBoth();
  if (detector_) {  // a new connection: its own history, starting now
    detector_->reset();
    detector_->heartbeat(timer_.now());
  }
  uv_tcp_nodelay(stream->tcp(), 1);  // heartbeats and small frames must not wait for Nagle
  if (NetError e = stream->startReading()) {
    closeStream(*stream, reasonFromError(e, false, "start reading"));
    return;
  }
  if (uv_os_fd_t fd{}; uv_fileno(asHandle(stream->tcp()), &fd) == 0) {
    std::lock_guard lock(outMutex_);
    fd_ = fd;
  }
  connected_.store(true, std::memory_order_release);
  attached();
  if (handler_ && handler_->onConnected) {
    safely("onConnected", [&] { handler_->onConnected(*this); });
  }
}

void ChannelCore::closeStream(Stream& stream, CloseReason why) noexcept {
  if (&stream == stream_) connected_.store(false, std::memory_order_release);
  stream.close(std::move(why));
}

void ChannelCore::forgetDescriptor(Stream& stream) noexcept {
  uv_os_fd_t fd{};
  if (uv_fileno(asHandle(stream.tcp()), &fd) != 0) return;
  std::lock_guard lock(outMutex_);
  if (fd_ == fd) fd_ = -1;
}

bool ChannelCore::closeCurrent(CloseReason why) noexcept {
  if (stream_ == nullptr) return false;
  closeStream(*stream_, std::move(why));
  return true;
}

void ChannelCore::streamClosed(Stream& stream, const CloseReason& reason) noexcept {
  if (&stream == stream_) {
    stream_ = nullptr;
    connected_.store(false, std::memory_order_release);
  }
  dropOutbox();
  if (RequestTracker* pending = tracker(false)) {
    safely("failing pending requests", [&] { pending->failAll(fmt::format("{}", reason)); });
  }
}

void ChannelCore::notifyClosed(const CloseReason& reason) noexcept {
  if (handler_ && handler_->onClosed) {
    safely("onClosed", [&] { handler_->onClosed(*this, reason); });
  }
}

}  // namespace detail
}  // namespace wheelbeat::net
