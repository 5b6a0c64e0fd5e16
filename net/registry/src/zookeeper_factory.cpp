// Placeholder until the ZooKeeper engine (src/zookeeper/) is built in: the kind parses and
// validates, but making the engine is refused with a clear error.
#include "zookeeper_factory.h"

#include <stdexcept>

namespace wheelbeat::registry {

std::unique_ptr<Engine> makeZookeeperEngine(net::EventLoop& /*loop*/,
                                            core::HashedWheelTimer& /*timer*/,
                                            const RegistrySetup& /*setup*/) {
  throw std::invalid_argument("registry.kind zookeeper: engine not built in this tree");
}

}  // namespace wheelbeat::registry
