// Stream: one libuv TCP socket of a channel — the uv_tcp_t, the decoder of its byte stream
// (charging the loop's PartialFrameBudget), and the reason it is closing with. A channel
// (ChannelCore) uses one Stream per connection; a client gets a new one for each (re)connect, so
// a half-read frame never leaks into the next connection. Private to net/.
//
// Lifetime: created with `new` on the loop thread; deletes itself in libuv's close callback,
// right after telling its owner (ChannelCore::streamClosed). It holds its owner by shared_ptr
// until then, so an owner always outlives its sockets' callbacks. Loop thread only.
#pragma once

#include "loop_internal.h"

#include <wheelbeat/net/codec.h>
#include <wheelbeat/net/error.h>

#include <uv.h>

#include <memory>

namespace wheelbeat::net::detail {

class ChannelCore;

// Deletes itself in its close callback (as every LoopHandle): its destructor is private.
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor)
class Stream final : public LoopHandle {
public:
  // uv_tcp_init + registration with the loop. Throws std::runtime_error if uv_tcp_init fails
  // (then nothing is left behind).
  static Stream* create(uv_loop_t* loop, std::shared_ptr<ChannelCore> owner,
                        const CodecOptions& codec);

  // Starts reading into the loop's shared buffer. Returns the libuv error, if any.
  NetError startReading() noexcept;
  // Starts closing (idempotent: the first reason wins). The owner hears of it in the close
  // callback, after libuv has cancelled pending writes.
  void close(CloseReason why) noexcept;
  void closeForShutdown() noexcept override;

  [[nodiscard]] bool isClosing() const noexcept { return closing_; }
  [[nodiscard]] uv_tcp_t* tcp() noexcept { return &tcp_; }
  [[nodiscard]] FrameDecoder& decoder() noexcept { return decoder_; }
  [[nodiscard]] ChannelCore& owner() const noexcept { return *owner_; }
  [[nodiscard]] static Stream* of(uv_handle_t* handle) noexcept {
    return static_cast<Stream*>(static_cast<LoopHandle*>(handle->data));
  }
  [[nodiscard]] static Stream* of(uv_stream_t* stream) noexcept { return of(asHandle(stream)); }

private:
  Stream(std::shared_ptr<ChannelCore> owner, const CodecOptions& codec, PartialFrameBudget& budget);
  // Private: a Stream frees itself in its close callback, never from outside.
  ~Stream() override = default;  // NOLINT(cppcoreguidelines-virtual-class-destructor)
  static void onAlloc(uv_handle_t* handle, std::size_t suggested, uv_buf_t* buf) noexcept;
  static void onRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept;
  static void onClose(uv_handle_t* handle) noexcept;

  uv_tcp_t tcp_{};
  FrameDecoder decoder_;
  std::shared_ptr<ChannelCore> owner_;
  CloseReason reason_;
  bool closing_ = false;
};

}  // namespace wheelbeat::net::detail
