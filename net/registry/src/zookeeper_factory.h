// The ZooKeeper engine's factory, private to the registry layer: makeRegistry() calls it for
// RegistryKind::ZooKeeper. Same contract as makeRedisEngine() (redis_engine.h): throws
// std::invalid_argument for an invalid setup, a kind other than ZooKeeper, or when this build has
// no ZooKeeper engine.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/engine.h>
#include <wheelbeat/registry/options.h>

#include <memory>

namespace wheelbeat::registry {

[[nodiscard]] std::unique_ptr<Engine> makeZookeeperEngine(net::EventLoop& loop,
                                                          core::HashedWheelTimer& timer,
                                                          const RegistrySetup& setup);

}  // namespace wheelbeat::registry
