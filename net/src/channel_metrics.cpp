#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/tcp_client.h>

namespace wheelbeat::net {

void ChannelMetrics::countDecodeError(DecodeError error) noexcept {
  const auto i = static_cast<std::size_t>(error);
  if (error != DecodeError::None && i < kDecodeErrors) {
    decodeErrors_[i].fetch_add(1, std::memory_order_relaxed);
  }
}

std::uint64_t ChannelMetrics::decodeErrors(DecodeError error) const noexcept {
  const auto i = static_cast<std::size_t>(error);
  return i < kDecodeErrors ? decodeErrors_[i].load(std::memory_order_relaxed) : 0;
}

std::int64_t ChannelMetrics::channels(ClientState state) const noexcept {
  const auto i = static_cast<std::size_t>(state);
  return i < kStates ? channels_[i].load(std::memory_order_relaxed) : 0;
}

void ChannelMetrics::moveChannel(int from, int to) noexcept {
  if (from == to) return;
  if (from >= 0 && static_cast<std::size_t>(from) < kStates) {
    channels_[static_cast<std::size_t>(from)].fetch_sub(1, std::memory_order_relaxed);
  }
  if (to >= 0 && static_cast<std::size_t>(to) < kStates) {
    channels_[static_cast<std::size_t>(to)].fetch_add(1, std::memory_order_relaxed);
  }
}

const std::shared_ptr<ChannelMetrics>& processChannelMetrics() noexcept {
  // Never destroyed: channels of static servers or clients may still count during exit.
  // Out of memory on this first small allocation ends the process (noexcept), as any other
  // allocation failure at startup would.
  // NOLINTBEGIN(bugprone-unhandled-exception-at-new)
  static const auto* metrics =
      new std::shared_ptr<ChannelMetrics>(std::make_shared<ChannelMetrics>());
  // NOLINTEND(bugprone-unhandled-exception-at-new)
  return *metrics;
}

void writeMetrics(const ChannelMetrics& metrics, core::MetricsWriter& out) {
  constexpr auto relaxed = std::memory_order_relaxed;
  auto d = [](auto v) { return static_cast<double>(v); };
  for (const ClientState s : {ClientState::Disconnected, ClientState::Connecting,
                              ClientState::Connected, ClientState::ReadOnly}) {
    out.gauge("wheelbeat_channels", d(metrics.channels(s)), {clientStateName(s)});
  }
  out.counter("wheelbeat_channel_frames_in_total", d(metrics.framesIn.load(relaxed)));
  out.counter("wheelbeat_channel_frames_out_total", d(metrics.framesOut.load(relaxed)));
  out.counter("wheelbeat_channel_bytes_in_total", d(metrics.bytesIn.load(relaxed)));
  out.counter("wheelbeat_channel_bytes_out_total", d(metrics.bytesOut.load(relaxed)));
  for (const DecodeError e :
       {DecodeError::BadMagic, DecodeError::BodyTooLarge, DecodeError::TruncatedAtEof,
        DecodeError::BudgetExceeded, DecodeError::OutOfMemory}) {
    out.counter("wheelbeat_channel_protocol_errors_total", d(metrics.decodeErrors(e)),
                {decodeErrorName(e)});
  }
  out.counter("wheelbeat_channel_readonly_received_total",
              d(metrics.readOnlyReceived.load(relaxed)));
  out.counter("wheelbeat_channel_heartbeats_answered_total",
              d(metrics.heartbeatsAnswered.load(relaxed)));
  out.histogram("wheelbeat_channel_heartbeat_rtt_seconds", metrics.heartbeatRtt.snapshot());
  out.counter("wheelbeat_server_accepted_total", d(metrics.accepted.load(relaxed)));
  out.counter("wheelbeat_server_rejected_total", d(metrics.rejected.load(relaxed)));
}

}  // namespace wheelbeat::net
