// ZookeeperEngine: the Registry engine on a ZooKeeper ensemble, in Dubbo's layout, so that
// wheelbeat services and Dubbo services find each other. No ZooKeeper or libuv header here.
//
//   auto registry = registry::makeRegistry(loop, timer, "zookeeper://10.0.0.2:2181", setup);
//   registry->start();                                   // waits for the first connect attempt
//   registry->registerUrl("dubbo://10.0.0.7:20880/org.example.Greeter?...&version=1.0.0");
//   registry->subscribe("org.example.Greeter", listener);
//
// Layout (Dubbo's ZookeeperRegistry)
//   /{group}/{interface}/{providers|consumers|configurators|routers}: persistent, empty parents,
//   created as needed (one that exists already is fine); group = RegistryOptions::group
//   (default "dubbo"). registerUrl(url) creates one EPHEMERAL node named by the url
//   percent-encoded once as a whole (java.net.URLEncoder's rules), under `consumers` when the url
//   has category=consumers (a consumer:// url), else under `providers`; a node left by an earlier
//   session of ours is replaced. unregisterUrl deletes it (already gone: success).
//   subscribe(interface) creates the `providers`, `configurators` and `routers` parents if missing
//   (as Dubbo does: a provider that registers later is seen) and watches their children, re-armed
//   after every event. A child's name is decoded once, then each query value again if it is still
//   encoded (some clients encode values twice); malformed names are skipped and counted
//   (Stats::malformedChildren), never a crash; `empty://` entries and no children both mean an
//   empty list. Listeners get the sorted provider urls (parameters in Dubbo's sorted order).
//
// Liveness is ZooKeeper's session: RegistryOptions::session is asked of the server (which clamps
// it to its own bounds, by default 2 to 20 ticks). A provider whose process dies loses its node
// when its session expires; subscribers are notified at once.
//
// Connection (the single-threaded C client driven by the EventLoop: no thread of its own)
//   Connected = a session is established. Connected → EngineEvents::connected(); every one after
//   the first is followed by the Registry's recover(), which re-creates every node and re-arms
//   every watch (needed after an expiry; harmless after a connection loss, when they survived).
//   Connection lost or session expired → disconnected(); the client reconnects by itself and, after
//   an expiry, opens a new session. No connection within ClientOptions::connectTimeout of start()
//   also reports disconnected() (start() then returns; check = true calls fail at once).
//   While not connected every call fails "disconnected" with ZooKeeper's error name and the
//   server list (e.g. "zookeeper 127.0.0.1:2181: connection loss"); failback retries them. Each
//   call is bounded by RegistrySetup::requestTimeout ("timeout"); ZooKeeper's refusals (e.g. no
//   auth) fail "rejected".
//
// Threads: the Engine contract (engine.h); stats() from any thread.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/engine.h>
#include <wheelbeat/registry/options.h>

#include <cstdint>
#include <memory>

namespace wheelbeat::registry {

class ZookeeperEngine : public Engine {
public:
  struct Stats {
    std::uint64_t sessions = 0;           // sessions established (the first included)
    std::uint64_t connects = 0;           // Connected events: new sessions and reconnects
    std::uint64_t expirations = 0;        // sessions that expired
    std::uint64_t notifications = 0;      // provider lists delivered to listeners
    std::uint64_t malformedChildren = 0;  // provider node names skipped as malformed
  };
  [[nodiscard]] virtual Stats stats() const noexcept = 0;
  // The current session's id (0 while none), for operators and tests.
  [[nodiscard]] virtual std::int64_t sessionId() const noexcept = 0;
};

// Throws std::invalid_argument for an invalid setup (validate(RegistrySetup)) or a kind other
// than ZooKeeper. The loop and the timer must outlive the engine.
[[nodiscard]] std::unique_ptr<ZookeeperEngine> makeZookeeperEngine(net::EventLoop& loop,
                                                                   core::HashedWheelTimer& timer,
                                                                   const RegistrySetup& setup);

}  // namespace wheelbeat::registry
