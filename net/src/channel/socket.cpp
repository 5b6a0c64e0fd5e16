#include "socket.h"

#include "../channel_core.h"

#include <sys/ioctl.h>

#include <memory>
#include <new>
#include <thread>
#include <utility>

namespace wheelbeat::net::detail {
namespace {

// The descriptor's lock: held for a store on the loop, or one ioctl on the asking thread.
class SpinGuard {
public:
  explicit SpinGuard(std::atomic<bool>& flag) noexcept : flag_(flag) {
    while (flag_.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
  }
  ~SpinGuard() { flag_.store(false, std::memory_order_release); }
  SpinGuard(const SpinGuard&) = delete;
  SpinGuard& operator=(const SpinGuard&) = delete;

private:
  std::atomic<bool>& flag_;
};

// One uv_write: the bytes stay alive until libuv's write callback.
struct WriteReq {
  uv_write_t req{};
  std::string data;
};

void onWritten(uv_write_t* req, int status) noexcept {
  std::unique_ptr<WriteReq> w(static_cast<WriteReq*>(req->data));
  Stream& stream = *Stream::of(req->handle);
  // The owner is alive: its Stream holds it until the close callback, which comes after this.
  stream.owner().written(stream, w->data.size(), status);
}

}  // namespace

NetError ChannelSocket::attach(Stream& stream) noexcept {
  stream_ = &stream;
  uv_tcp_nodelay(stream.tcp(), 1);  // heartbeats and small frames must not wait for Nagle
  if (NetError e = stream.startReading()) return e;
  if (uv_os_fd_t fd{}; uv_fileno(asHandle(stream.tcp()), &fd) == 0) setDescriptor(fd);
  connected_.store(true, std::memory_order_release);
  return {};
}

void ChannelSocket::close(Stream& stream, CloseReason why) noexcept {
  if (&stream == stream_) connected_.store(false, std::memory_order_release);
  stream.close(std::move(why));
}

bool ChannelSocket::closeCurrent(CloseReason why) noexcept {
  if (stream_ == nullptr) return false;
  close(*stream_, std::move(why));
  return true;
}

void ChannelSocket::released(Stream& stream) noexcept {
  if (&stream != stream_) return;
  stream_ = nullptr;
  connected_.store(false, std::memory_order_release);
}

void ChannelSocket::forgetDescriptor(Stream& stream) noexcept {
  uv_os_fd_t fd{};
  if (uv_fileno(asHandle(stream.tcp()), &fd) != 0) return;
  SpinGuard lock(fdLock_);
  if (fd_ == fd) fd_ = -1;
}

void ChannelSocket::setDescriptor(int fd) noexcept {
  SpinGuard lock(fdLock_);
  fd_ = fd;
}

bool ChannelSocket::hasUnreadInput() const noexcept {
  SpinGuard lock(fdLock_);
  int unread = 0;
  return fd_ >= 0 && ::ioctl(fd_, FIONREAD, &unread) == 0 && unread > 0;
}

int ChannelSocket::queueWrite(std::string&& data) noexcept {
  auto* w = new (std::nothrow) WriteReq{{}, {}};
  if (w == nullptr) return UV_ENOMEM;
  w->data = std::move(data);
  w->req.data = w;
  uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
  const int rc = uv_write(&w->req, asStream(stream_->tcp()), &buf, 1, &onWritten);
  if (rc != 0) delete w;
  return rc;
}

}  // namespace wheelbeat::net::detail
