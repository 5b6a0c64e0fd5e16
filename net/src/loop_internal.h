// What net/ sources share about an EventLoop beyond its public face: the per-loop read buffer,
// the posted flushes and the read outbox of channels. Private to net/ (includes <uv.h>); the
// handles stop() closes are public (loop_handle.h), for layers above net/ too.
#pragma once

#include <wheelbeat/net/codec.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/loop_handle.h>

#include <uv.h>

#include <cstddef>
#include <string>

namespace wheelbeat::net::detail {

// One buffer per loop serves every read: read_cb decodes synchronously (FrameDecoder copies only
// a partial frame), so no connection needs a buffer of its own. 64 KiB = libuv's usual read
// size; a bigger read just takes two callbacks.
inline constexpr std::size_t kReadBufferSize = std::size_t{64} << 10;

// The handles stop() closes (public: <wheelbeat/net/loop_handle.h>), named here too so net/
// sources reach every loop service as detail::.
using net::LoopHandle;
using net::registerHandle;
using net::unregisterHandle;

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
