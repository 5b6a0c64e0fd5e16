// A program against a registry built with WHEELBEAT_WITH_REDIS=OFF and WHEELBEAT_WITH_ZOOKEEPER=OFF
// (the core-only build): makeRegistry() for either kind is rejected with std::invalid_argument
// naming the kind and the option, while the embedded engine still works.
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/registry.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

// True when makeRegistry(url) throws std::invalid_argument whose message contains `expected`.
bool rejected(wheelbeat::net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
              const char* url, const std::string& expected) {
  try {
    (void)wheelbeat::registry::makeRegistry(loop, timer, url);
  } catch (const std::invalid_argument& e) {
    std::printf("engines left out: %s -> %s\n", url, e.what());
    return std::string(e.what()).find(expected) != std::string::npos;
  }
  std::fprintf(stderr, "engines left out: %s was accepted\n", url);
  return false;
}

}  // namespace

int main() {
  wheelbeat::core::HashedWheelTimer timer;
  wheelbeat::net::EventLoop loop;
  bool ok = rejected(loop, timer, "redis://127.0.0.1:6379",
                     "RegistryOptions.kind = redis: this wheelbeat was built without the redis "
                     "engine (WHEELBEAT_WITH_REDIS=OFF)");
  ok = rejected(loop, timer, "zookeeper://127.0.0.1:2181",
                "RegistryOptions.kind = zookeeper: this wheelbeat was built without the zookeeper "
                "engine (WHEELBEAT_WITH_ZOOKEEPER=OFF)") &&
       ok;
  {
    auto embedded = wheelbeat::registry::makeRegistry(loop, timer, "embedded://127.0.0.1:9090");
    embedded->close();
  }
  ok = loop.stop() == 0 && ok;
  timer.stop();
  std::puts(ok ? "engines left out: rejected as expected" : "engines left out: FAILED");
  return ok ? 0 : 1;
}
