// wheelbeat::registry — how providers and consumers find each other. The entry header: Registry,
// makeRegistry(), the options (options.h) and the Engine interface (engine.h). The engines:
//   embedded   (default) a RegistryServer node any wheelbeat process can host (registry_server.h),
//              reached through the embedded engine (embedded_engine.h)
//   redis      a redis-server, Dubbo's data model (redis_engine.h)
//   zookeeper  a ZooKeeper ensemble, Dubbo's layout
//
//   registry::RegistrySetup setup;                     // or parseRegistryUrl("redis://h:6379")
//   auto registry = registry::makeRegistry(loop, timer, setup);
//   registry->start();                                 // waits for the first connect attempt
//   registry->registerUrl("wheelbeat://10.0.0.7:20880/greeter");
//   registry->subscribe("greeter", listener);          // listener->notify(service, urls)
//   ...
//   registry->close();
//
// Every call goes through a FailbackRegistry on the shared wheel: a failed call is
// retried, nothing is lost across an outage, and after every reconnect recover() re-sends every
// registration and subscription (the registry may have restarted empty).
//
// Notifications: each subscriber's NotifyListener gets the full provider list of its service
// (sorted) on the loop thread, after each change and after each (re)subscribe. While the registry
// is unreachable the last list stays valid (consumers keep calling the providers they know).
//
// Threads: every member function, any thread (start() and close() not from the loop thread).
// NotifyListener::notify runs on the loop thread. Close every Registry before stopping its
// EventLoop.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/metrics.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/engine.h>
#include <wheelbeat/registry/failback_registry.h>
#include <wheelbeat/registry/options.h>
#include <wheelbeat/tasks/failback.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace wheelbeat::registry {

class Registry {
public:
  // Runs `engine` (non-null) with setup's failback options, listener and metrics; the connect
  // timeout (setup.client.connectTimeout) bounds start()'s wait. Throws std::invalid_argument for
  // a null engine or an invalid setup (validate(RegistrySetup)). The timer must outlive the
  // Registry: destroyed first, it ends the process naming the registry ("Registry redis
  // 127.0.0.1:6379", core/users.h); stopped first, the registry closes (logged at Warn).
  // makeRegistry() is the usual way to get one.
  Registry(core::HashedWheelTimer& timer, std::unique_ptr<Engine> engine, RegistrySetup setup);
  ~Registry();  // close()
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Starts connecting and waits until the first attempt ended (connected or failed), at most the
  // connect timeout + 1 s (the wheel's tick and the loop), so that calls right after start() find
  // the connection when the registry is up. With failback.check, calls made while the registry is
  // unreachable fail at once. A second start() only waits; start() after close() throws
  // std::logic_error.
  void start();
  // Cancels every retry and closes the connection(s); registrations are not withdrawn (the
  // engine's liveness rule removes them). Idempotent. Later calls throw std::logic_error.
  void close();

  // FailbackRegistry's calls (failback_registry.h), the same for every engine. A url or service
  // that is malformed (scheme://host:port/service[?query], no whitespace; a service name is
  // non-empty, without whitespace, '/' or '?') throws std::invalid_argument at once and changes
  // nothing: retries could never succeed.
  void registerUrl(const std::string& url, tasks::Completion done = nullptr);
  void unregisterUrl(const std::string& url, tasks::Completion done = nullptr);
  void subscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                 tasks::Completion done = nullptr);
  void unsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                   tasks::Completion done = nullptr);
  // Re-sends every registration and subscription (done by itself after every reconnect).
  void recover();

  [[nodiscard]] FailbackRegistry& failback() noexcept;
  // The connection to the engine is up now.
  [[nodiscard]] bool isConnected() const noexcept;
  // Since when (the timer's clock) the connection has been up; nullopt while it is down. The
  // consumer's Directory distrusts an empty provider list shortly after a reconnect.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> healthySince() const;
  // The engine, for what is its own (e.g. RedisEngine::stats(), EmbeddedEngine::connection()):
  // dynamic_cast it to the engine's interface. Do not start() or close() it.
  [[nodiscard]] Engine& engine() noexcept;
  // Writes wheelbeat_registry_* (core/metrics.h) with engine="<kind>": registered urls and
  // subscriptions wanted, failback retries pending, retries scheduled and give-ups (counted in
  // setup.metrics when given, else in the registry's own FailbackMetrics). Any thread, also after
  // close().
  void writeMetrics(core::MetricsWriter& out) const;

  // NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): final, see registry.cpp.
  class Link;

private:
  std::chrono::nanoseconds connectTimeout_;
  RegistryKind kind_;
  std::shared_ptr<tasks::FailbackMetrics> failbackMetrics_;
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<FailbackRegistry> failback_;
  std::shared_ptr<Link> link_;
  std::once_flag closeOnce_;
  // The timer must outlive the registry (core/users.h); stopped under it, the registry closes.
  core::Users::Use timerUse_;
};

// The engine `setup.registry.kind` names, in a Registry. Throws std::invalid_argument for an
// invalid setup or an engine not built in.
[[nodiscard]] std::unique_ptr<Registry> makeRegistry(net::EventLoop& loop,
                                                     core::HashedWheelTimer& timer,
                                                     RegistrySetup setup);
// The same, with kind and address from a registry url (parseRegistryUrl(): "redis://h:6379");
// every other field of setup.registry is kept.
[[nodiscard]] std::unique_ptr<Registry> makeRegistry(net::EventLoop& loop,
                                                     core::HashedWheelTimer& timer,
                                                     std::string_view url, RegistrySetup setup);
// The same with the default setup. (Not a default argument: a RegistrySetup built in the caller's
// code makes GCC 12 at -O3 warn there, a false positive: GCC bug 105562.)
[[nodiscard]] std::unique_ptr<Registry> makeRegistry(net::EventLoop& loop,
                                                     core::HashedWheelTimer& timer,
                                                     std::string_view url);

}  // namespace wheelbeat::registry
