// ChannelMetrics: what the channels of a group of servers and clients count — frames and bytes
// in and out, protocol errors by kind, READONLY events received, heartbeats answered, the
// heartbeat round trip, channels by state, and the servers' accepted / rejected connections.
//
// Give the same object to several servers and clients (ServerOptions::metrics,
// ClientOptions::metrics) to count them together; a server or client whose options leave it null
// counts into processChannelMetrics(). Expose it with writeMetrics() from a
// core::MetricsRegistry collector (wheelbeat_channel_*, wheelbeat_channels,
// wheelbeat_server_*; see core/metrics.h).
//
// Cost: relaxed atomic adds only (a read adds bytes once per read callback and frames once per
// frame; a send adds a frame and its bytes once queued or written); no lock, no allocation.
// Threads: any. Each counter is exact; a read while channels work is not one instant across them.
#pragma once

#include <wheelbeat/core/metrics.h>
#include <wheelbeat/net/codec.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace wheelbeat::net {

enum class ClientState : std::uint8_t;

struct ChannelMetrics {
  // Grouped by the thread that usually writes them, one cache line each, so that loops reading
  // and threads sending do not bounce one line between cores.
  alignas(64) std::atomic<std::uint64_t> framesIn{0};   // frames decoded (heartbeats, events too)
  std::atomic<std::uint64_t> bytesIn{0};                // bytes read from the sockets
  alignas(64) std::atomic<std::uint64_t> framesOut{0};  // frames queued: send/heartbeat/READONLY
  alignas(64) std::atomic<std::uint64_t> bytesOut{0};   // bytes written (accepted by write(2))
  alignas(64) std::atomic<std::uint64_t> readOnlyReceived{0};  // READONLY events received
  std::atomic<std::uint64_t> heartbeatsAnswered{0};            // peers' heartbeat requests answered
  std::atomic<std::uint64_t> accepted{0};                      // servers: connections accepted
  std::atomic<std::uint64_t> rejected{0};                      // servers: closed right after accept
  // Round trip of each heartbeat this side sent and whose answer came back (its count is the
  // number of heartbeats answered by the peers), on the shared timer's clock, from the write of
  // the request to the read of the answer (Channel::lastHeartbeatRtt()).
  core::Histogram heartbeatRtt;

  // Streams closed because their input could not be decoded, by DecodeError (None not counted).
  void countDecodeError(DecodeError error) noexcept;
  [[nodiscard]] std::uint64_t decodeErrors(DecodeError error) const noexcept;
  // Channels in `state` now: each client in its state (Closed is not counted), each server
  // connection as Connected from accept until its close callback.
  [[nodiscard]] std::int64_t channels(ClientState state) const noexcept;
  // A channel moved between states (nullopt-like: pass kNoState for "not counted").
  static constexpr int kNoState = -1;
  void moveChannel(int from, int to) noexcept;  // from / to: a ClientState's value or kNoState

private:
  static constexpr std::size_t kDecodeErrors = 6;  // DecodeError's values
  static constexpr std::size_t kStates = 4;        // ClientState up to ReadOnly
  std::array<std::atomic<std::uint64_t>, kDecodeErrors> decodeErrors_{};
  std::array<std::atomic<std::int64_t>, kStates> channels_{};
};

// The object every server and client without their own counts into. Never destroyed.
[[nodiscard]] const std::shared_ptr<ChannelMetrics>& processChannelMetrics() noexcept;

// Writes `metrics` into `out` (wheelbeat_channels{state}, wheelbeat_channel_*,
// wheelbeat_server_accepted_total / _rejected_total). Thread: any.
void writeMetrics(const ChannelMetrics& metrics, core::MetricsWriter& out);

}  // namespace wheelbeat::net
