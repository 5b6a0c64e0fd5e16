// Consumer of the installed wheelbeat::registry target alone: parse a registry url, then build a
// Registry on the embedded engine and close it without starting (proves the layer, the transport
// under it and their private dependencies link, without needing any server).
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/registry.h>

#include <cstdio>
#include <string>

int main() {
  namespace registry = wheelbeat::registry;
  const registry::RegistryOptions parsed = registry::parseRegistryUrl("redis://127.0.0.1:6379");
  if (parsed.kind != registry::RegistryKind::Redis || parsed.address.port != 6379 ||
      registry::registryUrl(parsed) != "redis://127.0.0.1:6379") {
    std::fputs("registry consumer: the url did not parse back\n", stderr);
    return 1;
  }
  wheelbeat::core::HashedWheelTimer timer;
  wheelbeat::net::EventLoop loop;
  {
    auto r = registry::makeRegistry(loop, timer, "embedded://127.0.0.1:9090");
    if (r->isConnected()) {
      std::fputs("registry consumer: connected before start()\n", stderr);
      return 1;
    }
    r->close();
  }
  if (loop.stop() != 0) {
    std::fputs("registry consumer: the loop did not close cleanly\n", stderr);
    return 1;
  }
  timer.stop();
  std::puts("registry consumer: installed wheelbeat::registry works");
  return 0;
}
