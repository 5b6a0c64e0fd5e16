// makeRedisEngine(): the checks, then a RedisBackend (redis_backend.h).
#include "redis_backend.h"

#include <wheelbeat/registry/redis_engine.h>

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace wheelbeat::registry {

namespace {

RedisBackend::Config configOf(const RegistrySetup& s) {
  validate(s);
  if (s.registry.kind != RegistryKind::Redis) {
    throw std::invalid_argument(
        fmt::format("RedisEngine: RegistryOptions.kind = {} (expected: redis)",
                    registryKindName(s.registry.kind)));
  }
  return {s.registry.address,      s.registry.group, s.registry.session,
          s.client.connectTimeout, s.requestTimeout, s.client.heartbeat.resolved()};
}

}  // namespace

std::unique_ptr<RedisEngine> makeRedisEngine(net::EventLoop& loop, core::HashedWheelTimer& timer,
                                             const RegistrySetup& setup) {
  return std::make_unique<RedisBackend>(loop, timer, configOf(setup));
}

std::string RedisEngine::providersKey(std::string_view group, std::string_view service) {
  return fmt::format("/{}/{}/providers", group, service);
}

}  // namespace wheelbeat::registry
