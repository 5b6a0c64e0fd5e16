#include "stream.h"

#include "channel_core.h"

#include <stdexcept>
#include <utility>

namespace wheelbeat::net::detail {

Stream::Stream(std::shared_ptr<ChannelCore> owner, const CodecOptions& codec,
               PartialFrameBudget& budget)
    : decoder_(codec, &budget), owner_(std::move(owner)) {}

Stream* Stream::create(uv_loop_t* loop, std::shared_ptr<ChannelCore> owner,
                       const CodecOptions& codec) {
  auto* s = new Stream(std::move(owner), codec, partialBudget(loop));
  if (int rc = uv_tcp_init(loop, &s->tcp_); rc != 0) {
    delete s;
    throw std::runtime_error(fmt::format("wheelbeat: uv_tcp_init: {}", NetError(rc)));
  }
  s->tcp_.data = static_cast<LoopHandle*>(s);
  registerHandle(loop, s);
  return s;
}

NetError Stream::startReading() noexcept {
  return NetError(uv_read_start(asStream(&tcp_), &Stream::onAlloc, &Stream::onRead));
}

void Stream::close(CloseReason why) noexcept {
  if (closing_) return;
  closing_ = true;
  reason_ = std::move(why);
  owner_->forgetDescriptor(*this);  // uv_close() closes the descriptor right away
  uv_read_stop(asStream(&tcp_));
  uv_close(asHandle(&tcp_), &Stream::onClose);
}

void Stream::closeForShutdown() noexcept {
  close(CloseReason{CloseKind::LoopStopped, {}, "the channel was still open"});
}

void Stream::onAlloc(uv_handle_t* handle, std::size_t /*suggested*/, uv_buf_t* buf) noexcept {
  // The loop's one shared buffer: read_cb consumes it before the next alloc_cb can run.
  *buf = uv_buf_init(readBuffer(handle->loop), static_cast<unsigned>(kReadBufferSize));
}

void Stream::onRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept {
  Stream* self = of(stream);
  if (nread > 0) {
    self->owner_->onRead(*self, std::string_view(buf->base, static_cast<std::size_t>(nread)));
  } else if (nread < 0) {
    self->owner_->onReadError(*self, NetError(static_cast<int>(nread)));
  }  // 0: EAGAIN, nothing read
}

void Stream::onClose(uv_handle_t* handle) noexcept {
  Stream* self = of(handle);
  unregisterHandle(handle->loop, self);
  std::shared_ptr<ChannelCore> owner = std::move(self->owner_);
  owner->streamClosed(*self, self->reason_);  // may already start the next connection
  delete self;
}

}  // namespace wheelbeat::net::detail
