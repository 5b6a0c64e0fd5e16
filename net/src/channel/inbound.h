// Inbound: a channel's inbound stage — a read's bytes decoded into frames, each passed down the
// ordered list of frame stages (frame_stages.h), the read's frame counts kept for one metrics
// update per read, and why a read ended the connection. Private to net/.
//
// Thread rule: the loop thread (the read callback), except lastRead(), codec() and the stages'
// getters (any thread).
#pragma once

#include "frame_stages.h"

#include <wheelbeat/net/error.h>
#include <wheelbeat/net/options.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <string_view>

namespace wheelbeat::net::detail {

class Inbound {
public:
  // The frame stages, in the order each frame meets them (dispatch()).
  struct Stages {
    ReadOnlyStage readOnly;
    HeartbeatResponder heartbeats;
    RequestTrackerStage tracker;
    HandlerStage handler;
  };

  Inbound(const CodecOptions& codec, std::shared_ptr<const ChannelHandler> handler) noexcept
      : stages_{{}, {}, {}, HandlerStage(std::move(handler))}, codec_(codec) {}

  // A read arrived at `now` (timer clock, ns).
  void stamp(std::int64_t now) noexcept { lastRead_.store(now, std::memory_order_release); }
  [[nodiscard]] std::int64_t lastRead() const noexcept {
    return lastRead_.load(std::memory_order_acquire);
  }
  // Feeds `data` to `decoder`, whose frames reach `sink` (the channel: its onFrame() calls
  // dispatch()); inRead() meanwhile. Returns the decoder's error; OutOfMemory when anything on
  // the read path ran out of memory (the channel ends, not the process).
  DecodeError read(std::string_view data, FrameDecoder& decoder, FrameSink& sink) noexcept {
    inRead_ = true;
    DecodeError error = DecodeError::None;
    try {
      error = decoder.feed(data, sink);
    } catch (const std::bad_alloc&) {  // decoding, answering, a handler: this channel ends
      error = DecodeError::OutOfMemory;
    }
    inRead_ = false;
    return error;
  }
  // One frame down the stages, until one consumes it; counted for takeCounts().
  template <typename Ctx>
  void dispatch(const FrameView& frame, Ctx& ctx) {
    ++framesIn_;
    (void)(stages_.readOnly.onFrame(frame, ctx) || stages_.heartbeats.onFrame(frame, ctx) ||
           stages_.tracker.onFrame(frame, ctx) || stages_.handler.onFrame(frame, ctx));
  }
  // Inside read(): frames queued now wait for the flush at the read's end.
  [[nodiscard]] bool inRead() const noexcept { return inRead_; }
  void frameOut() noexcept { ++framesOut_; }
  // The read's end: its frames in and out added to `metrics` (one add per read and counter, not
  // per frame: the counters' cache line is shared by every loop). True if the read queued frames.
  bool countFrames(ChannelMetrics& metrics) noexcept {
    if (framesIn_ != 0) metrics.framesIn.fetch_add(framesIn_, std::memory_order_relaxed);
    const bool sent = framesOut_ != 0;
    if (sent) metrics.framesOut.fetch_add(framesOut_, std::memory_order_relaxed);
    framesIn_ = 0;
    framesOut_ = 0;
    return sent;
  }

  // Why the decoder stopped, as a close reason (built without throwing: an allocation failure
  // leaves the text empty).
  [[nodiscard]] static CloseReason decodeFailure(const FrameDecoder& decoder) noexcept;
  // Why a read error ends the connection: EOF (clean, or inside a frame: counted in `metrics`)
  // or the socket's error.
  [[nodiscard]] static CloseReason readFailure(NetError error, FrameDecoder& decoder,
                                               ChannelMetrics& metrics) noexcept;

  [[nodiscard]] Stages& stages() noexcept { return stages_; }
  [[nodiscard]] const Stages& stages() const noexcept { return stages_; }
  [[nodiscard]] const CodecOptions& codec() const noexcept { return codec_; }

private:
  Stages stages_;
  const CodecOptions codec_;
  std::atomic<std::int64_t> lastRead_{0};  // ns on the timer's clock
  std::uint32_t framesIn_ = 0;
  std::uint32_t framesOut_ = 0;
  bool inRead_ = false;
};

}  // namespace wheelbeat::net::detail
