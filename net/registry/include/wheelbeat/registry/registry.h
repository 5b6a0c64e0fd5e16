// Registry: what providers and consumers use to find each other, whatever the engine —
// RegistryClient (the embedded registry, the default) or RedisRegistry (Redis, for a fleet).
// Every call goes through a tasks::FailbackRegistry on the shared wheel: a failed call is
// retried, nothing is lost across an outage, and after every reconnect the engine's recover()
// re-sends every registration and subscription.
//
// Threads: every member function, any thread (start() and close() not from the loop thread).
// NotifyListener::notify runs on the loop thread.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/tasks/failback.h>

#include <chrono>
#include <memory>
#include <string>

namespace wheelbeat::net {

class Registry {
public:
  virtual ~Registry() = default;

  // Starts connecting and waits until the first attempt ended (connected or failed; bounded by
  // the connect timeout), so that calls right after start() find the connection when the
  // registry is up.
  virtual void start() = 0;
  // Cancels every retry and closes the connection(s); registrations are not withdrawn (the
  // engine's liveness rule removes them). Idempotent.
  virtual void close() = 0;

  // FailbackRegistry's calls (tasks/failback.h), the same for every engine. A url or service
  // the protocol refuses (registry_protocol.h: scheme://host:port/service[?query]) throws
  // std::invalid_argument at once and changes nothing: retries could never succeed.
  void registerUrl(const std::string& url, tasks::Completion done = nullptr);
  void unregisterUrl(const std::string& url, tasks::Completion done = nullptr);
  void subscribe(const std::string& service, std::shared_ptr<tasks::NotifyListener> listener,
                 tasks::Completion done = nullptr);
  void unsubscribe(const std::string& service, std::shared_ptr<tasks::NotifyListener> listener,
                   tasks::Completion done = nullptr);

  [[nodiscard]] virtual tasks::FailbackRegistry& failback() noexcept = 0;
  // The connection to the engine is up now.
  [[nodiscard]] virtual bool isConnected() const noexcept = 0;
};

// Everything a registry needs besides the loop and the timer.
struct RegistrySetup {
  RegistryOptions registry{};  // kind, address, group, session
  ClientOptions client{};      // heartbeat, reconnect backoff, connect timeout, limits
  tasks::FailbackOptions failback{};
  std::chrono::nanoseconds requestTimeout = std::chrono::seconds(3);  // each call, > 0
  std::shared_ptr<tasks::FailbackListener> listener;
  std::shared_ptr<tasks::FailbackMetrics> metrics;
};

// The engine `setup.registry.kind` names. Throws std::invalid_argument for invalid options.
[[nodiscard]] std::unique_ptr<Registry> makeRegistry(EventLoop& loop, core::HashedWheelTimer& timer,
                                                     RegistrySetup setup);

}  // namespace wheelbeat::net
