// ChannelSocket: a channel's socket stage — the current connection (a Stream), whether the channel
// counts as connected or is closed for good, its descriptor (for hasUnreadInput()) and the two
// ways bytes reach the kernel (a direct write, or a uv_write whose completion goes to the
// Stream's owner). Private to net/.
//
// Thread rule: the loop thread, except isConnected(), isClosed() and markClosed() (atomics, any
// thread) and hasUnreadInput() (any thread: the descriptor is read and changed under a one-byte
// spin lock, so the loop cannot close it while another thread asks the kernel about it).
#pragma once

#include "../stream.h"

#include <atomic>
#include <cstddef>
#include <string>

namespace wheelbeat::net::detail {

class ChannelSocket {
public:
  [[nodiscard]] Stream* current() const noexcept { return stream_; }
  // A connection to write to: current and not closing.
  [[nodiscard]] bool writable() const noexcept {
    return stream_ != nullptr && !stream_->isClosing();
  }
  // A connecting stream becomes the current one before it is attached.
  void setCurrent(Stream* stream) noexcept { stream_ = stream; }
  // Makes `stream` the current connection: no Nagle delay, reading started, its descriptor
  // recorded and the channel connected. On a libuv error nothing but the current stream changed
  // (the caller closes it).
  [[nodiscard]] NetError attach(Stream& stream) noexcept;
  // Closes `stream`; the current one stops counting as connected at once.
  void close(Stream& stream, CloseReason why) noexcept;
  // Closes the current stream, if any; false if there was none.
  bool closeCurrent(CloseReason why) noexcept;
  // The stream's close callback: the current one leaves (the channel is disconnected).
  void released(Stream& stream) noexcept;
  // `stream` is about to close its descriptor: hasUnreadInput() stops using it first (a new
  // socket could get the same number).
  void forgetDescriptor(Stream& stream) noexcept;

  // Bytes in the socket's receive buffer the loop has not read yet (FIONREAD). Any thread.
  [[nodiscard]] bool hasUnreadInput() const noexcept;
  [[nodiscard]] bool isConnected() const noexcept {
    return connected_.load(std::memory_order_acquire);
  }
  [[nodiscard]] bool isClosed() const noexcept { return closed_.load(std::memory_order_acquire); }
  // Marks the channel closed for good; true for the first call only. Any thread.
  bool markClosed() noexcept { return !closed_.exchange(true, std::memory_order_acq_rel); }

  // Writes what the current stream takes now (the common case: libuv holds nothing queued for
  // this socket, so the bytes go out in one write(2) right here, with no write request and no
  // POLLOUT re-arm; uv_try_write keeps the order behind queued writes): the bytes written, or a
  // negative libuv error (UV_EAGAIN / UV_ENOSYS: libuv still queues writes, nothing was written).
  // Needs writable().
  [[nodiscard]] int tryWrite(char* data, std::size_t size) noexcept {
    uv_buf_t buf = uv_buf_init(data, static_cast<unsigned>(size));
    return uv_try_write(asStream(stream_->tcp()), &buf, 1);
  }
  // One uv_write of `data` on the current stream, kept alive until its callback, which calls the
  // stream owner's written(). Returns the libuv error (0: queued). Needs writable().
  [[nodiscard]] int queueWrite(std::string&& data) noexcept;

private:
  void setDescriptor(int fd) noexcept;

  Stream* stream_ = nullptr;
  int fd_ = -1;  // under fdLock_
  mutable std::atomic<bool> fdLock_{false};
  std::atomic<bool> connected_{false};
  std::atomic<bool> closed_{false};
};

}  // namespace wheelbeat::net::detail
