#include <wheelbeat/net/redis_registry.h>
#include <wheelbeat/net/registry.h>
#include <wheelbeat/net/registry_client.h>
#include <wheelbeat/net/registry_protocol.h>

#include <stdexcept>

namespace wheelbeat::net {
namespace {

// A malformed url or service is the caller's bug: refused at once, never queued for retries.
template <typename Check>
void checked(Check check) {
  try {
    check();
  } catch (const RegistryProtocolError& e) {
    throw std::invalid_argument(e.what());
  }
}

}  // namespace

void Registry::registerUrl(const std::string& url, tasks::Completion done) {
  checked([&] { (void)serviceOfUrl(url); });
  failback().registerUrl(url, std::move(done));
}

void Registry::unregisterUrl(const std::string& url, tasks::Completion done) {
  checked([&] { (void)serviceOfUrl(url); });
  failback().unregisterUrl(url, std::move(done));
}

void Registry::subscribe(const std::string& service,
                         std::shared_ptr<tasks::NotifyListener> listener, tasks::Completion done) {
  checked([&] { checkServiceName(service); });
  failback().subscribe(service, std::move(listener), std::move(done));
}

void Registry::unsubscribe(const std::string& service,
                           std::shared_ptr<tasks::NotifyListener> listener,
                           tasks::Completion done) {
  checked([&] { checkServiceName(service); });
  failback().unsubscribe(service, std::move(listener), std::move(done));
}

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
