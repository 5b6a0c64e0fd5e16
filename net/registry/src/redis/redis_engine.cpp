#include "redis_backend.h"

#include <wheelbeat/net/redis_registry.h>
#include <wheelbeat/net/registry_protocol.h>

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace wheelbeat::net {

namespace {

RedisRegistry::Backend::Config configOf(RegistrySetup& s) {
  validate(s.registry);
  if (s.registry.kind != RegistryKind::Redis) {
    throw std::invalid_argument("RedisRegistry: RegistryOptions.kind = embedded (expected: redis)");
  }
  if (s.requestTimeout <= std::chrono::nanoseconds(0)) {
    throw std::invalid_argument(fmt::format("RedisRegistry: requestTimeout = {}ns (expected: > 0)",
                                            s.requestTimeout.count()));
  }
  s.client.server = s.registry.address;
  validate(s.client);
  return {s.registry.address,      s.registry.group, s.registry.session,
          s.client.connectTimeout, s.requestTimeout, s.client.heartbeat.resolved()};
}

}  // namespace

RedisRegistry::RedisRegistry(EventLoop& loop, core::HashedWheelTimer& timer, RegistrySetup setup)
    : connectTimeout_(setup.client.connectTimeout),
      session_(setup.registry.session),
      loop_(loop),
      backend_(std::make_shared<Backend>(loop, timer, configOf(setup))) {
  failback_ = std::make_unique<tasks::FailbackRegistry>(timer, backend_, std::move(setup.failback),
                                                        std::move(setup.listener),
                                                        std::move(setup.metrics));
  tasks::FailbackRegistry* f = failback_.get();
  backend_->onReconnected = [f] { f->recover(); };
  backend_->wanted = [f] { return f->registered(); };
}

RedisRegistry::~RedisRegistry() { close(); }

void RedisRegistry::start() {
  backend_->start();
  // The connect timeout bounds the attempt; the margin covers the wheel's tick and the loop.
  backend_->waitFirstAttempt(connectTimeout_ + std::chrono::seconds(1));
}

void RedisRegistry::close() {
  failback_->stop();
  // A stopped loop already freed the connections (EventLoop::stop() → closeForShutdown).
  (void)loop_.call([b = backend_] { b->shutdown(); });
}

tasks::FailbackRegistry& RedisRegistry::failback() noexcept { return *failback_; }
bool RedisRegistry::isConnected() const noexcept { return backend_->isConnected(); }
RedisRegistry::Stats RedisRegistry::stats() const noexcept { return backend_->stats(); }
std::chrono::nanoseconds RedisRegistry::removalBound() const noexcept { return session_ * 3 / 2; }

std::string RedisRegistry::providersKey(std::string_view group, std::string_view service) {
  return fmt::format("/{}/{}/providers", group, service);
}

}  // namespace wheelbeat::net
