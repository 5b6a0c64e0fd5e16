// Outbox: a channel's outbox stage — frames accepted by send() and not yet written, bounded by
// maxSendQueue; the heartbeat fast path (a heartbeat request that comes alone waits aside and is
// written from a fixed array: no buffer allocated on the wheel thread and freed on the loop's);
// the flush (one write for everything waiting, the frames of the current read callback
// included); write completion. Private to net/.
//
// Thread rule: enqueue*() on any thread, under the outbox's lock (or, inside the channel's own
// read callback, into the loop's read buffer with no lock); everything else on the loop thread.
//
// The flush writes through a Wire, a type with these members (ChannelCore::WirePort over the
// socket stage in production, a fake in the tests; a template parameter, so nothing is a virtual
// call):
//   bool writable();                          a connection to write to
//   std::int64_t now();                       the write's time (timer clock, ns)
//   int tryWrite(char*, std::size_t);         ChannelSocket::tryWrite()
//   int queueWrite(std::string&&);            ChannelSocket::queueWrite()
//   void failed(NetError);                    a write failed: close the connection
//   void wrote(std::size_t bytes);            bytes accepted by the kernel (metrics)
//   void heartbeatWritten(std::int64_t now, std::int64_t decidedAt);  our heartbeat request left
#pragma once

#include "../loop_internal.h"

#include <wheelbeat/net/codec.h>
#include <wheelbeat/net/error.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace wheelbeat::net::detail {

// Where enqueue() put a frame.
enum class Enqueued : std::uint8_t {
  QueueFull,  // over maxSendQueue: not queued
  InRead,     // the loop's read buffer: the read's end flushes it
  Queued,     // the outbox, with a flush on its way already
  Posted,     // the outbox, and this call posted the flush (hold() was taken)
};

class Outbox {
public:
  explicit Outbox(std::size_t maxBytes) noexcept : maxBytes_(maxBytes) {}

  // Counts `bytes` in, then `encode(out)` appends the frame: to `box` (the loop's read buffer,
  // when the caller runs in the read callback of `owner` and the frame may go there, else null),
  // or to the outbox under its lock. A frame that finds the outbox empty outside a read, with no
  // flush posted, marks one posted and stores `hold()` (what keeps the channel alive until the
  // flush ran): the caller posts it (Posted).
  template <typename Encode, typename Hold>
  Enqueued enqueue(std::size_t bytes, Encode&& encode, ReadOutbox* box, const void* owner,
                   bool inRead, Hold&& hold);
  // The heartbeat fast path: our heartbeat request `nextId()` (called under the lock, so that the
  // flush that takes the frame reads the time of the heartbeat it writes), decided at
  // `decidedAt`; alone, it waits aside. Never through the read buffer.
  template <typename NextId, typename Hold>
  Enqueued enqueueHeartbeat(std::int64_t decidedAt, bool inRead, NextId&& nextId, Hold&& hold);

  // Writes the whole outbox, then `read`'s frames (the loop's read buffer if it holds this
  // channel's frames, else null), directly when the socket takes them, otherwise with one
  // uv_write. A posted flush passes `postedHold`: it receives the hold, counted out under the
  // lock that takes the outbox. Loop.
  template <typename Wire>
  void flush(Wire& wire, ReadOutbox* read, std::shared_ptr<void>* postedHold) noexcept;
  // The posted flush will not run (the loop is stopping): the hold, to release after the lock.
  [[nodiscard]] std::shared_ptr<void> cancelPost() noexcept;
  // A uv_write of `bytes` completed (`ok`: written at `now`). Loop.
  void written(std::size_t bytes, bool ok, std::int64_t now) noexcept;
  // The connection is gone: whatever waits is dropped and counted out. Loop.
  void dropAll() noexcept;

  // Accepted, not yet written. Any thread.
  [[nodiscard]] std::size_t queuedBytes() const noexcept {
    return queued_.load(std::memory_order_relaxed);
  }
  // The last write's time (timer clock, ns). Any thread.
  [[nodiscard]] std::int64_t lastWrite() const noexcept {
    return lastWrite_.load(std::memory_order_acquire);
  }
  void stampWrite(std::int64_t now) noexcept { lastWrite_.store(now, std::memory_order_release); }

private:
  template <typename Wire>
  bool flushReadAlone(Wire& wire, ReadOutbox* read) noexcept;
  template <typename Wire>
  std::size_t writeNow(Wire& wire, char* data, std::size_t size, std::int64_t now) noexcept;
  template <typename Wire>
  void writeQueued(Wire& wire, std::string data) noexcept;
  template <typename Wire>
  void writeBorrowed(Wire& wire, char* data, std::size_t size, std::int64_t now) noexcept;
  static std::string* take(ReadOutbox* read) noexcept;
  void dropTaken(std::size_t bytes, std::string* fromRead) noexcept;
  void appendRead(std::string& data, std::string& frames) noexcept;
  void appendAside(std::string& data, std::uint64_t id) noexcept;
  // Emptied for the next read; a buffer grown past 64 KiB by a large answer is freed.
  static void clearRead(std::string& frames) noexcept {
    if (frames.capacity() > (std::size_t{64} << 10)) {
      std::string().swap(frames);
    } else {
      frames.clear();
    }
  }
  void reuseBuffer(std::string&& data) noexcept;
  void countOut(std::size_t bytes) noexcept { queued_.fetch_sub(bytes, std::memory_order_acq_rel); }

  mutable std::mutex mutex_;  // guards data_, the heartbeat and aside fields, the flush hold
  std::string data_;          // whole frames not yet handed to the socket
  std::atomic<std::size_t> queued_{0};  // accepted, not yet written (data_, aside, read, libuv)
  const std::size_t maxBytes_;
  std::atomic<std::int64_t> lastWrite_{0};
  std::int64_t heartbeatQueuedAt_ = 0;  // decidedAt of the heartbeat request waiting
  std::uint64_t asideId_ = 0;           // the heartbeat request held aside (hasAside_)
  std::shared_ptr<void> flushHold_;     // while flushPosted_: keeps the channel alive
  bool heartbeatQueued_ = false;        // a heartbeat request to time waits for the flush
  bool hasAside_ = false;               // our heartbeat request asideId_ waits outside data_
  bool flushPosted_ = false;            // a posted flush has not run yet
};

// Inlined: on the read path (a heartbeat's answer) a call costs a fifth of the function.
template <typename Encode, typename Hold>
inline __attribute__((always_inline)) Enqueued Outbox::enqueue(std::size_t bytes, Encode&& encode,
                                                               ReadOutbox* box, const void* owner,
                                                               bool inRead, Hold&& hold) {
  if (queued_.fetch_add(bytes, std::memory_order_acq_rel) + bytes > maxBytes_) {
    countOut(bytes);
    return Enqueued::QueueFull;
  }
  if (box != nullptr && (box->owner == nullptr || box->owner == owner)) {
    try {
      encode(box->data);
    } catch (...) {
      countOut(bytes);
      throw;
    }
    box->owner = owner;
    return Enqueued::InRead;
  }
  std::lock_guard lock(mutex_);
  // Else a flush is on its way: a posted one not run yet, or the read's.
  const bool wake = data_.empty() && !hasAside_ && !inRead;
  try {
    encode(data_);
  } catch (...) {
    countOut(bytes);
    throw;
  }
  if (!wake || flushPosted_) return Enqueued::Queued;
  flushHold_ = hold();
  flushPosted_ = true;
  return Enqueued::Posted;
}

template <typename NextId, typename Hold>
Enqueued Outbox::enqueueHeartbeat(std::int64_t decidedAt, bool inRead, NextId&& nextId,
                                  Hold&& hold) {
  const auto encode = [&](std::string& out) {
    const std::uint64_t id = nextId();
    if (out.empty() && !hasAside_) {
      hasAside_ = true;  // written by the flush from a fixed array
      asideId_ = id;
    } else {
      encodeHeartbeatRequest(out, id);
    }
    heartbeatQueued_ = true;
    heartbeatQueuedAt_ = decidedAt;
  };
  return enqueue(kHeartbeatFrameSize, encode, nullptr, this, inRead, std::forward<Hold>(hold));
}

template <typename Wire>
void Outbox::flush(Wire& wire, ReadOutbox* read, std::shared_ptr<void>* postedHold) noexcept {
  if (postedHold == nullptr && flushReadAlone(wire, read)) return;
  std::string data;
  std::optional<std::uint64_t> aside;
  std::optional<std::int64_t> decidedAt;
  {
    std::lock_guard lock(mutex_);
    if (postedHold != nullptr) {
      flushPosted_ = false;
      *postedHold = std::move(flushHold_);
    }
    // A heartbeat alone leaves data_ empty: no swap.
    if (!data_.empty()) data.swap(data_);
    if (std::exchange(heartbeatQueued_, false)) decidedAt = heartbeatQueuedAt_;
    if (std::exchange(hasAside_, false)) aside = asideId_;
  }
  std::string* fromRead = take(read);
  if (data.empty() && !aside && fromRead == nullptr) return;
  if (!wire.writable()) {
    return dropTaken(data.size() + (aside ? kHeartbeatFrameSize : 0), fromRead);
  }
  // One clock read stamps the write and a heartbeat's start: its round trip starts here.
  const std::int64_t now = wire.now();
  if (decidedAt) wire.heartbeatWritten(now, *decidedAt);
  if (fromRead != nullptr) {
    if (data.empty() && !aside) {  // the usual case of a read's end: written from its buffer
      writeBorrowed(wire, fromRead->data(), fromRead->size(), now);
      return clearRead(*fromRead);
    }
    appendRead(data, *fromRead);  // frames queued before the read's go first
  }
  if (aside && data.empty()) {
    auto frame = heartbeatRequestFrame(*aside);
    return writeBorrowed(wire, frame.data(), frame.size(), now);
  }
  if (aside) appendAside(data, *aside);
  const std::size_t rest = writeNow(wire, data.data(), data.size(), now);
  if (rest == 0) return reuseBuffer(std::move(data));
  data.erase(0, data.size() - rest);
  writeQueued(wire, std::move(data));
}

// A read's end where the read's frames are all that queued_ counts: nothing waits in the outbox
// or aside, so they are written without the lock. A frame another thread queues meanwhile finds
// the outbox empty and posts a flush of its own. False: the full flush is needed.
template <typename Wire>
bool Outbox::flushReadAlone(Wire& wire, ReadOutbox* read) noexcept {
  if (read == nullptr || read->data.empty() ||
      queued_.load(std::memory_order_acquire) != read->data.size()) {
    return false;
  }
  read->owner = nullptr;
  std::string& frames = read->data;
  if (wire.writable()) {
    writeBorrowed(wire, frames.data(), frames.size(), wire.now());
  } else {
    countOut(frames.size());
  }
  clearRead(frames);
  return true;
}

// Returns how many bytes are left for uv_write: all of them when libuv still has queued writes,
// 0 on an error (the connection is then closing).
template <typename Wire>
inline __attribute__((always_inline)) std::size_t Outbox::writeNow(Wire& wire, char* data,
                                                                   std::size_t size,
                                                                   std::int64_t now) noexcept {
  const int n = wire.tryWrite(data, size);
  if (n == UV_EAGAIN || n == UV_ENOSYS) return size;
  if (n < 0) {
    countOut(size);
    wire.failed(NetError(n));
    return 0;
  }
  const auto written = static_cast<std::size_t>(n);
  countOut(written);
  wire.wrote(written);
  if (written > 0) stampWrite(now);
  return size - written;
}

// The rest of a partial write, or everything behind libuv's queue: one uv_write.
template <typename Wire>
void Outbox::writeQueued(Wire& wire, std::string data) noexcept {
  const std::size_t size = data.size();
  if (const int rc = wire.queueWrite(std::move(data)); rc != 0) {
    countOut(size);
    wire.failed(NetError(rc));
  }
}

// Bytes the flush does not own (the read buffer, a heartbeat's array): what the socket does not
// take now is copied for uv_write.
template <typename Wire>
void Outbox::writeBorrowed(Wire& wire, char* data, std::size_t size, std::int64_t now) noexcept {
  const std::size_t rest = writeNow(wire, data, size, now);
  if (rest == 0) return;
  try {
    writeQueued(wire, std::string(data + size - rest, rest));
  } catch (const std::bad_alloc&) {  // the bytes are lost: account for them as written
    countOut(rest);
  }
}

}  // namespace wheelbeat::net::detail
