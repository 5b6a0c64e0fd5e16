// LoopHandle: what code adding its own libuv handles to an EventLoop (the registry engines, net's
// own streams and servers) needs from the loop: a handle the loop closes when it stops.
//
// An owner of libuv handles derives from LoopHandle, registers itself right after its uv_*_init
// and unregisters in its close callback. EventLoop::stop() then calls closeForShutdown() on every
// handle still registered, so none is left open when the loop closes (uv_loop_close() would report
// UV_EBUSY). The list is intrusive: registering allocates nothing.
//
// Thread: the loop thread only, for every function here and for closeForShutdown(). The loop is
// EventLoop::native(); this header needs no <uv.h> (uv_loop_s stays opaque).
#pragma once

struct uv_loop_s;  // libuv's loop (uv_loop_t)

namespace wheelbeat::net {

class LoopHandle;

// Adds `handle` to the loop's open handles; call once, right after its uv_*_init. Loop thread.
void registerHandle(uv_loop_s* loop, LoopHandle* handle) noexcept;
// Removes `handle` (a no-op if it is not registered); call in its close callback, before it is
// freed. Loop thread.
void unregisterHandle(uv_loop_s* loop, LoopHandle* handle) noexcept;

namespace detail {
// closeForShutdown() on every registered handle, once each: EventLoop::stop(). Loop thread.
void closeRegisteredHandles(uv_loop_s* loop) noexcept;
}  // namespace detail

// A libuv handle (or a group of them) with one owner that can close it on request.
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): see the destructor below.
class LoopHandle {
public:
  LoopHandle() = default;
  LoopHandle(const LoopHandle&) = delete;
  LoopHandle& operator=(const LoopHandle&) = delete;

  // Starts closing the handle (uv_close with the owner's close callback), with the reason the
  // owner gives its users for a stopping loop. Called at most once, by EventLoop::stop(), on the
  // loop thread. It may run callbacks that close or free other handles,
  // but must not free this one before returning.
  virtual void closeForShutdown() noexcept = 0;

protected:
  // Virtual and protected: handles delete themselves (`delete this` in their close callback),
  // which reaches the derived destructor; nobody outside deletes one through LoopHandle.
  virtual ~LoopHandle() = default;  // NOLINT(cppcoreguidelines-virtual-class-destructor)

private:
  friend void registerHandle(uv_loop_s* loop, LoopHandle* handle) noexcept;
  friend void unregisterHandle(uv_loop_s* loop, LoopHandle* handle) noexcept;
  friend void detail::closeRegisteredHandles(uv_loop_s* loop) noexcept;
  LoopHandle* prev_ = nullptr;
  LoopHandle* next_ = nullptr;
  bool shutdownAsked_ = false;  // closeRegisteredHandles() called closeForShutdown() already
};

}  // namespace wheelbeat::net
