// RegistryClient: what a provider or a consumer uses to talk to the embedded registry
// (RegistryServer). A TcpClient to the registry (heartbeats, reconnect with backoff) carries the
// registry protocol; a tasks::FailbackRegistry on the shared wheel retries every failed call, so
// nothing is lost across a registry outage; after each reconnect, recover() re-sends every
// registration and subscription (the registry may have restarted empty).
//
//   RegistryClient registry(loop, timer, registryOptions, clientOptions, failbackOptions);
//   registry.start();                                        // waits for the first connect
//   registry.registerUrl("wheelbeat://10.0.0.7:20880/greeter");
//   registry.subscribe("greeter", listener);                 // listener->notify(service, urls)
//   ...
//   registry.close();
//
// Notifications: each subscriber's NotifyListener gets the full provider list of its service on
// the loop thread, after each change and after each (re)subscribe. While the registry is
// unreachable the last list stays valid (consumers keep calling the providers they know).
//
// Threads: every member function, any thread (start() and close() not from the loop thread).
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/net/registry.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/tasks/failback.h>

#include <chrono>
#include <memory>
#include <string>

namespace wheelbeat::net {

class RegistryClient final : public Registry {
public:
  // Connects to `registry.address` (kind must be Embedded: std::invalid_argument otherwise) with
  // `client`'s heartbeat, reconnect and limits (client.server is ignored). `requestTimeout`
  // bounds each registry call. Throws std::invalid_argument for invalid options.
  RegistryClient(EventLoop& loop, core::HashedWheelTimer& timer, RegistryOptions registry,
                 ClientOptions client = {}, tasks::FailbackOptions failback = {},
                 std::chrono::nanoseconds requestTimeout = std::chrono::seconds(3),
                 std::shared_ptr<tasks::FailbackListener> listener = nullptr,
                 std::shared_ptr<tasks::FailbackMetrics> metrics = nullptr);
  explicit RegistryClient(EventLoop& loop, core::HashedWheelTimer& timer, RegistrySetup setup);
  ~RegistryClient() override;
  RegistryClient(const RegistryClient&) = delete;
  RegistryClient& operator=(const RegistryClient&) = delete;

  // Starts connecting and waits until the first attempt ended (connected or failed), at most
  // the connect timeout, so that calls right after start() find the connection if the registry
  // is up. With failback.check, calls made while the registry is unreachable fail at once.
  void start() override;
  // Cancels every retry and closes the connection. Idempotent.
  void close() override;

  // registerUrl / unregisterUrl / subscribe / unsubscribe: see Registry.
  [[nodiscard]] tasks::FailbackRegistry& failback() noexcept override;
  [[nodiscard]] bool isConnected() const noexcept override;
  [[nodiscard]] ClientState state() const noexcept;
  [[nodiscard]] TcpClient& connection() noexcept;

  class Backend;

private:
  std::chrono::nanoseconds connectTimeout_;
  std::shared_ptr<Backend> backend_;
  std::unique_ptr<tasks::FailbackRegistry> failback_;
};

}  // namespace wheelbeat::net
