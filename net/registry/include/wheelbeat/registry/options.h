// Plain options of the registry layer (config/ parses JSON into RegistryOptions): which engine,
// where it is, the key namespace and the session; RegistrySetup adds what a Registry needs besides
// the loop and the timer. Defaults are Dubbo's where Dubbo has one (group "dubbo", session 60 s).
#pragma once

#include <wheelbeat/net/options.h>
#include <wheelbeat/tasks/failback.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace wheelbeat::registry {

enum class RegistryKind { Embedded, Redis, ZooKeeper };

struct RegistryOptions {
  RegistryKind kind = RegistryKind::Embedded;
  // Embedded: the registry node's address (wheelbeat's own protocol). Redis: redis-server.
  // ZooKeeper: one server of the ensemble.
  net::Endpoint address{"127.0.0.1", 9090};
  // Namespace of every key (Dubbo's `group`, default "dubbo"). Non-empty, no whitespace.
  std::string group = "dubbo";
  // A registration not renewed within this time expires (Redis key expiry; the embedded registry
  // drops a provider whose channel is gone). Renewed every session / 2. >= 1 s. Dubbo: 60 s.
  std::chrono::nanoseconds session = std::chrono::seconds(60);
};

// Everything a registry needs besides the loop and the timer.
struct RegistrySetup {
  RegistryOptions registry{};  // kind, address, group, session
  // Heartbeat, reconnect backoff, connect timeout, limits of the engine's connection(s);
  // `client.server` is ignored (replaced by registry.address). client.taskListener / taskMetrics
  // observe the embedded engine's connection tasks (its TcpClient); the Redis engine's tasks
  // report to its own log instead, and the ZooKeeper engine runs no such tasks.
  net::ClientOptions client{};
  tasks::FailbackOptions failback{};
  std::chrono::nanoseconds requestTimeout = std::chrono::seconds(3);  // each call, > 0
  std::shared_ptr<tasks::FailbackListener> listener;
  std::shared_ptr<tasks::FailbackMetrics> metrics;
};

// Each throws std::invalid_argument naming the first bad field, its value and the expectation,
// e.g. "RegistryOptions.session = 10ms (expected: >= 1s)". validate(RegistrySetup) checks every
// part: the registry options, the client options (with `server` = registry.address), the failback
// options and requestTimeout > 0. Thread: any.
void validate(const RegistryOptions& options);
void validate(const RegistrySetup& setup);
// validate(setup), then the client's heartbeat against the wheel of tick `tick` that runs the
// registry connection's tasks (net::validate(ClientOptions, tick)): "RegistrySetup.client.
// heartbeat.interval = 50ms (expected: at least 2 wheel ticks = 200ms; ...)". makeRegistry()
// checks this with its timer's tickDuration().
void validate(const RegistrySetup& setup, std::chrono::nanoseconds tick);

// "embedded" / "redis" / "zookeeper".
[[nodiscard]] std::string_view registryKindName(RegistryKind kind) noexcept;

// A registry address as a url: "embedded://host:port", "redis://host:port" or
// "zookeeper://host:port" (scheme = registryKindName(), lower case; host a name, an IPv4 literal
// or a bracketed IPv6 literal "[::1]"; port 1..65535; no path, query or user info). Returns
// RegistryOptions with that kind and address, every other field at its default. Throws
// std::invalid_argument naming the value and what was expected, e.g.
// `registry url "etcd://h:1": scheme "etcd" (expected: embedded, redis or zookeeper)`.
[[nodiscard]] RegistryOptions parseRegistryUrl(std::string_view url);

// The url of `options` ("redis://10.0.0.2:6379"): parseRegistryUrl's inverse for kind + address.
[[nodiscard]] std::string registryUrl(const RegistryOptions& options);

}  // namespace wheelbeat::registry
