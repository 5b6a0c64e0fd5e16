// toJson(): the effective configuration, every key written, in the loader's format (from the key
// tables); resolved(): the derived values filled in.
#include "sections.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>

namespace wheelbeat::config {
namespace {

using namespace std::chrono_literals;

tasks::HeartbeatOptions resolvedHeartbeat(const tasks::HeartbeatOptions& o) {
  tasks::HeartbeatOptions r = o.resolved();
  r.seed = o.seed;  // 0 = a random seed for each task: a rule, not a value to fill in
  return r;
}

}  // namespace

Config resolved(const Config& config) {
  Config c = config;
  c.heartbeat = resolvedHeartbeat(c.heartbeat);
  c.server.heartbeat = resolvedHeartbeat(c.server.heartbeat);
  c.client.heartbeat = resolvedHeartbeat(c.client.heartbeat);
#if WHEELBEAT_CONFIG_DISCOVERY
  c.cluster.directory.client.heartbeat = resolvedHeartbeat(c.cluster.directory.client.heartbeat);
#endif
  // HashedWheelTimer's floor and rounding (core/include/wheelbeat/core/hashed_wheel_timer.h).
  c.wheel.tickDuration = std::max<std::chrono::nanoseconds>(c.wheel.tickDuration, 1ms);
  c.wheel.ticksPerWheel = static_cast<std::int64_t>(
      std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(c.wheel.ticksPerWheel, 1))));
  return c;
}

std::string toJson(const Config& c) {
  // Every key of the tables; "service" and "metrics" only when there is one (their writers
  // leave them out otherwise).
  return detail::kDocumentSection.write(c).dump(2) + "\n";
}

}  // namespace wheelbeat::config
