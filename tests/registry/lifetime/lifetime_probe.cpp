// wheelbeat_registry_lifetime_probe CASE: one destruction order per run, for the ctest
// registry_lifetime_* tests. A wrong order must end the process with a message naming the user
// still alive (never reaching "survived"); the others end cleanly with one line.
//   loop-before-redis        the EventLoop destroyed under a Redis registry's engine
//   loop-before-zookeeper    the EventLoop destroyed under a ZooKeeper registry's engine
//   timer-before-registry    the wheel destroyed under a Registry
//   loop-before-directory    the EventLoop destroyed under a Directory (its registry gone first)
//   timer-stopped            the wheel stopped under a Registry: it closes ("closed": start()
//                            then throws std::logic_error)
//   right-order              the registries first, then the loop and the wheel: "clean"
// Nothing connects: the engines are made, never started (port 1 answers nothing anyway).
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/directory.h>
#include <wheelbeat/registry/registry.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string_view>

using namespace wheelbeat;

namespace {

struct World {
  std::unique_ptr<core::HashedWheelTimer> timer = std::make_unique<core::HashedWheelTimer>();
  std::unique_ptr<net::EventLoop> loop = std::make_unique<net::EventLoop>("probe");
  std::unique_ptr<registry::Registry> redis =
      registry::makeRegistry(*loop, *timer, "redis://127.0.0.1:1");
  std::unique_ptr<registry::Registry> zookeeper =
      registry::makeRegistry(*loop, *timer, "zookeeper://127.0.0.1:1");
  std::unique_ptr<registry::Directory> directory = std::make_unique<registry::Directory>(
      *loop, *timer, *redis, "org.example.Echo", registry::DirectoryOptions{});
};

int usage() {
  std::fprintf(stderr,
               "usage: wheelbeat_registry_lifetime_probe loop-before-redis|loop-before-zookeeper|"
               "timer-before-registry|loop-before-directory|timer-stopped|right-order\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view which = argc > 1 ? argv[1] : "";
  World w;
  if (which == "loop-before-redis") {
    w.directory.reset();
    w.zookeeper.reset();
    w.loop.reset();  // must abort: the Redis engine still uses the loop
  } else if (which == "loop-before-zookeeper") {
    w.directory.reset();
    w.redis.reset();
    w.loop.reset();  // must abort: the ZooKeeper engine still uses the loop
  } else if (which == "timer-before-registry") {
    w.directory.reset();
    w.zookeeper.reset();
    w.timer.reset();  // must abort: the Redis registry still uses the wheel
  } else if (which == "loop-before-directory") {
    w.zookeeper.reset();
    w.loop.reset();  // must abort: the directory (and the Redis engine) still use the loop
  } else if (which == "timer-stopped") {
    (void)w.timer->stop();  // logs at Warn, closes both registries
    try {
      w.redis->start();
      std::puts("started after the timer stopped");
      return 1;
    } catch (const std::logic_error&) {
      std::puts("closed");
      return 0;
    }
  } else if (which == "right-order") {
    w.directory.reset();
    w.redis.reset();
    w.zookeeper.reset();
    w.loop.reset();
    w.timer.reset();
    std::puts("clean");
    return 0;
  } else {
    return usage();
  }
  std::puts("survived");
  return 0;
}
