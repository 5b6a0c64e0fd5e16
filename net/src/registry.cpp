#include <wheelbeat/net/redis_registry.h>
#include <wheelbeat/net/registry.h>
#include <wheelbeat/net/registry_client.h>

#include <stdexcept>

namespace wheelbeat::net {

std::unique_ptr<Registry> makeRegistry(EventLoop& loop, core::HashedWheelTimer& timer,
                                       RegistrySetup setup) {
  switch (setup.registry.kind) {
    case RegistryKind::Embedded:
      return std::make_unique<RegistryClient>(loop, timer, std::move(setup));
    case RegistryKind::Redis: return std::make_unique<RedisRegistry>(loop, timer, std::move(setup));
  }
  throw std::invalid_argument("RegistryOptions.kind: unknown value");
}

}  // namespace wheelbeat::net
