#include "heartbeat_probe.h"

namespace wheelbeat::net::detail {

HeartbeatProbe::HeartbeatProbe(const tasks::HeartbeatOptions& heartbeat)
    : detector_(heartbeat.detector == tasks::DetectorKind::Phi
                    ? std::make_unique<tasks::PhiAccrualDetector>(heartbeat.phi, heartbeat.interval)
                    : nullptr) {}

std::optional<std::int64_t> HeartbeatProbe::answered(std::uint64_t id,
                                                     std::int64_t readAt) noexcept {
  if (timed_ || id != id_.load(std::memory_order_relaxed)) return std::nullopt;
  timed_ = true;
  const std::int64_t rtt = readAt - writtenAt_;
  rtt_.store(rtt, std::memory_order_relaxed);
  sendWait_.store(writeWait_, std::memory_order_relaxed);
  return rtt;
}

void HeartbeatProbe::restart(std::chrono::nanoseconds now) noexcept {
  if (!detector_) return;
  detector_->reset();
  detector_->heartbeat(now);
}

}  // namespace wheelbeat::net::detail
