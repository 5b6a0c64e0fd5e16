// Fakes for the channel stage tests (net/src/channel/): a Wire that records what the outbox's
// flush writes (and can refuse, take part of it, or fail), a do-nothing net::Channel for the
// handler's argument, and a frame context that records what the frame stages asked for.
#pragma once

#include "channel/frame_stages.h"
#include "channel/outbox.h"
#include "idle_channel.h"

#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/channel_metrics.h>

#include <uv.h>

#include <any>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wbnet::fakes {

using wheelbeat::net::NetError;

// The outbox's Wire (outbox.h). tryWrite() takes up to `take` bytes (SIZE_MAX: all), or returns
// `tryError` when it is set (UV_EAGAIN: libuv still queues writes).
struct FakeWire {
  bool open = true;
  std::int64_t clock = 1000;
  std::size_t take = SIZE_MAX;
  int tryError = 0;
  int queueError = 0;
  std::string direct;               // bytes taken by tryWrite()
  std::vector<std::string> queued;  // queueWrite() calls
  std::vector<int> failures;        // failed() calls (libuv codes)
  std::size_t tries = 0;
  std::size_t wroteBytes = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> heartbeats;  // (now, decidedAt)

  bool writable() const noexcept { return open; }
  std::int64_t now() const noexcept { return clock; }
  int tryWrite(char* data, std::size_t size) noexcept {
    ++tries;
    if (tryError != 0) return tryError;
    const std::size_t n = std::min(size, take);
    direct.append(data, n);
    return static_cast<int>(n);
  }
  int queueWrite(std::string&& data) noexcept {
    if (queueError != 0) return queueError;
    queued.push_back(std::move(data));
    return 0;
  }
  void failed(NetError e) noexcept { failures.push_back(e.code()); }
  void wrote(std::size_t bytes) noexcept { wroteBytes += bytes; }
  void heartbeatWritten(std::int64_t now, std::int64_t decidedAt) noexcept {
    heartbeats.emplace_back(now, decidedAt);
  }
};

// A net::Channel that does nothing (id 42): what the handler stage passes to the handler.
using NullChannel = IdleChannel;

// The frame stages' context (frame_stages.h), recording each call.
struct FrameCtx {
  wheelbeat::net::ChannelMetrics counters;
  NullChannel nullChannel{42};
  bool acceptAnswers = true;
  int readOnlyCalls = 0;
  int handlerErrors = 0;
  std::vector<std::uint64_t> answers;   // answerHeartbeat() ids
  std::vector<std::uint64_t> answered;  // heartbeatAnswered() ids
  std::vector<std::int64_t> deltas;     // unansweredChanged()

  wheelbeat::net::ChannelMetrics& metrics() noexcept { return counters; }
  void readOnlyReceived() noexcept { ++readOnlyCalls; }
  bool answerHeartbeat(std::uint64_t id) noexcept {
    answers.push_back(id);
    return acceptAnswers;
  }
  void heartbeatAnswered(std::uint64_t id) noexcept { answered.push_back(id); }
  void unansweredChanged(std::int64_t delta) noexcept { deltas.push_back(delta); }
  wheelbeat::net::Channel& channel() noexcept { return nullChannel; }
  void handlerThrew() noexcept { ++handlerErrors; }
};

}  // namespace wbnet::fakes
