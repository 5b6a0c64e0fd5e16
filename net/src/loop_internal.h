// What net/ sources share about an EventLoop beyond its public face: the per-loop read buffer
// and the registry of handles that stop() must close. Private to net/ and net/registry/ (includes
// <uv.h>).
#pragma once

#include <wheelbeat/net/codec.h>
#include <wheelbeat/net/event_loop.h>

#include <uv.h>

#include <cstddef>
#include <string>

namespace wheelbeat::net::detail {

// One buffer per loop serves every read: read_cb decodes synchronously (FrameDecoder copies only
// a partial frame), so no connection needs a buffer of its own. 64 KiB = libuv's usual read
// size; a bigger read just takes two callbacks.
inline constexpr std::size_t kReadBufferSize = std::size_t{64} << 10;

// A libuv handle owned by net/ code. Registered with its loop while open (an intrusive list: no
// allocation), so EventLoop::stop() can close it through its owner with a proper reason.
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): see the destructor below.
class LoopHandle {
public:
  LoopHandle() = default;
  LoopHandle(const LoopHandle&) = delete;
  LoopHandle& operator=(const LoopHandle&) = delete;

  // Starts closing the handle (uv_close with the owner's close callback). Loop thread. It may run
  // callbacks that close or free other handles, but must not free this one before returning.
  virtual void closeForShutdown() noexcept = 0;

protected:
  // Virtual and protected: handles delete themselves (`delete this` in their close callback),
  // which reaches the derived destructor; nobody outside deletes one through LoopHandle.
  virtual ~LoopHandle() = default;  // NOLINT(cppcoreguidelines-virtual-class-destructor)

private:
  friend void registerHandle(uv_loop_t* loop, LoopHandle* handle) noexcept;
  friend void unregisterHandle(uv_loop_t* loop, LoopHandle* handle) noexcept;
  friend void closeRegisteredHandles(uv_loop_t* loop) noexcept;
  LoopHandle* prev_ = nullptr;
  LoopHandle* next_ = nullptr;
  bool shutdownAsked_ = false;  // closeRegisteredHandles() called closeForShutdown() already
};

// Loop thread only. Register right after uv_*_init; unregister in the close callback.
void registerHandle(uv_loop_t* loop, LoopHandle* handle) noexcept;
void unregisterHandle(uv_loop_t* loop, LoopHandle* handle) noexcept;
// closeForShutdown() on every registered handle (EventLoop::stop()).
void closeRegisteredHandles(uv_loop_t* loop) noexcept;

// The loop's shared read buffer (kReadBufferSize bytes). Loop thread only.
[[nodiscard]] char* readBuffer(uv_loop_t* loop) noexcept;
// A flush posted without a closure: a channel (ChannelCore derives from this node) waiting for its
// loop to write what it queued from another thread. postFlushNode() pushes it on the loop's
// lock-free list (one compare-and-swap; the first push since the loop took the list wakes the
// loop, under its lock); the loop calls runFlushNode() for each, in push order, before the
// functions post() accepted in the same hand-over, so a flush pushed before a post() on the same
// thread runs before that function. A node is in one list at most once, and its channel keeps
// itself alive until its flush ran. Returns false (the node is not taken) once the loop is
// stopping. Thread: any.
struct FlushNode {
  FlushNode* nextFlush = nullptr;
};
[[nodiscard]] bool postFlushNode(uv_loop_t* loop, FlushNode* node) noexcept;
// The posted flush of the channel `node` is (channel_core.cpp). Loop thread.
void runFlushNode(FlushNode* node) noexcept;

// Frames a channel queues inside its own read callback (answers, a pipelining client's next
// requests) wait here for the flush at the read's end (ChannelCore::flush()): a loop runs one read
// callback at a time, so one buffer per loop serves all its channels with no lock (rather than
// the channel's send lock once per response) and no allocation once warm. `owner`:
// the channel whose frames it holds (null: none). Loop thread only.
struct ReadOutbox {
  std::string data;
  const void* owner = nullptr;
};
[[nodiscard]] ReadOutbox& readOutbox(uv_loop_t* loop) noexcept;
// The loop's budget for split frames (LoopOptions::maxPartialBytes), shared by the decoders of
// every channel on it. Loop thread only.
[[nodiscard]] PartialFrameBudget& partialBudget(uv_loop_t* loop) noexcept;

// uv_handle_t* of any libuv handle type, without a C-style cast.
template <typename H>
[[nodiscard]] uv_handle_t* asHandle(H* h) noexcept {
  return reinterpret_cast<uv_handle_t*>(h);
}
template <typename H>
[[nodiscard]] uv_stream_t* asStream(H* h) noexcept {
  return reinterpret_cast<uv_stream_t*>(h);
}

}  // namespace wheelbeat::net::detail
