// wheelbeat::config — a JSON document (nlohmann/json, used inside this layer's sources only) into
// the plain option structs each layer owns. Every key is one line of a table in config/src (its
// reader, writer, equality and documentation); its rules are its layer's validate(), which the
// loader calls. The format is described by config/wheelbeat.schema.json (installed to
// share/wheelbeat/) and docs/configuration.md, both generated from those tables.
//
// Contract
//   - Durations are "60s", "500ms", "2m", "1h", "250us", "5ns", decimals ("1.5s", "0.1s" as gRPC's
//     JSON writes) and compounds with the units in that order ("1m30s", "1h0.5m") — a whole
//     number of nanoseconds — always a JSON string with a unit. A bare number is an error
//     ("/heartbeat/interval: 30 (expected: a duration with a unit, e.g. \"30s\")"); a negative
//     one is reported as such ("-1s" (expected: a non-negative duration)); anything else is an
//     error. toJson() writes every duration with its unit, zero as "0s".
//   - The sections of the discovery layers — "registry", "service" and "cluster", whose options
//     net/registry/ and net/cluster/ own — are there only in a build with the registry
//     (wheelbeat/config/features.h: WHEELBEAT_CONFIG_DISCOVERY). Without it Config has no such
//     members, the library links neither layer (nor hiredis or ZooKeeper), and a document that
//     has one of these sections is an error naming it:
//       /registry: {"kind":"redis"} (expected: no "registry" section: this wheelbeat was built
//       without the registry (WHEELBEAT_WITH_REGISTRY=OFF))
//   - Missing keys take the structs' defaults; the required keys are service.interface (when
//     "service" is present) and metrics.listen (when "metrics" is present). Unknown keys, keys
//     written twice in one object, wrong types, out-of-range values and broken cross-field rules
//     (e.g. idle_timeout >= 2 * interval) are errors. "retry_on" / "ignore" take only the shared
//     error names (tasks/error_names.h).
//   - Within an object, values that are no value of the key's type (an integer, a duration, ...)
//     are reported first, in document order, then the rules of the key's layer.
//   - Every error is reported, not just the first, as
//       /retry/payments/max_delay: "500ms" (expected: >= initial_delay = 1s)
//     i.e. the JSON pointer, the value as written in the document (compact JSON) and what was
//     expected. A cross-field rule blames the key the document wrote (the dependent one if both
//     were written) and names the other side's effective value (its default when it is missing).
//   - A document with any error never yields a Config: there is no half-configured result.
//   - Errors without a place in the document (unreadable file, JSON syntax error, root not an
//     object) have the pointer "".
// Thread: every function here is thread-safe (no shared state; files are read, never written).
#pragma once

#include <wheelbeat/config/features.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/net/metrics_endpoint.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>
#include <wheelbeat/tasks/retry_budget.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#if WHEELBEAT_CONFIG_DISCOVERY
#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/registry/options.h>
#include <wheelbeat/registry/service.h>
#endif

namespace wheelbeat::config {

// The named retry policies of "retry" (a std::map by name), and a lookup whose miss explains
// itself: cfg.retry("payments").
class RetryPolicies : public std::map<std::string, tasks::RetryOptions> {
public:
  using std::map<std::string, tasks::RetryOptions>::map;

  // The policy named `name`. Throws std::out_of_range naming it and the names that exist:
  //   retry policy "paymnts" not found (expected: the name of an entry of /retry: "payments",
  //   "registry")
  // or "... (expected: the name of an entry of /retry (there is none))". Thread: any (const).
  [[nodiscard]] const tasks::RetryOptions& operator()(std::string_view name) const;
};

// Everything a wheelbeat process configures. A default-constructed Config equals loading "{}".
// registry, service and cluster exist only with WHEELBEAT_CONFIG_DISCOVERY (see the contract).
struct Config {
  core::WheelOptions wheel{};                      // "wheel"
  core::LogLevel logLevel = core::LogLevel::Info;  // "log_level"
  // "heartbeat": also copied into server.heartbeat and client.heartbeat by the loader.
  tasks::HeartbeatOptions heartbeat{};
  RetryPolicies retry;                      // "retry": named policies, cfg.retry("name")
  tasks::RetryBudgetOptions retryBudget{};  // "retry_budget"
  tasks::FailbackOptions failback{};        // "failback"
  net::LoopOptions loop{};                  // "loop": EventLoop / EventLoopGroup
#if WHEELBEAT_CONFIG_DISCOVERY
  wheelbeat::registry::RegistryOptions registry{};  // "registry"
#endif
  net::ServerOptions server{};  // "server"
  net::ClientOptions client{};  // "client"
#if WHEELBEAT_CONFIG_DISCOVERY
  // "service": what a provider advertises in the registry, or a consumer asks for. A document
  // without the section leaves the defaults (interface "": no service); with it, interface is
  // required.
  wheelbeat::registry::ServiceOptions service{};
#endif
  // "metrics": the Prometheus scrape endpoint (net::MetricsEndpoint::start()). nullopt without
  // the section (no endpoint); with it, listen is required and the other keys take
  // MetricsEndpointOptions' defaults. listen is kept in toJson()'s form ("[::1]:9464").
  std::optional<net::MetricsEndpointOptions> metrics;
  // "cluster": calls over the providers of a service (cluster::ServiceClient's options).
  // directory.client is not a key: the loader copies "client" into it (with its heartbeat), as
  // into server.heartbeat; directory.accept is code's to set. failback is not a key either: the
  // loader copies "failback" into it (the failback mode's retries).
#if WHEELBEAT_CONFIG_DISCOVERY
  cluster::ClusterOptions cluster{};
#endif
};

// Field-by-field equality (the option structs have no operator== of their own). Doubles compare
// exactly, which the loader and toJson() preserve.
[[nodiscard]] bool operator==(const Config& a, const Config& b);

struct ConfigError {
  std::string pointer;   // JSON pointer (RFC 6901), "" for the whole document
  std::string value;     // the offending value as written, compact JSON
  std::string expected;  // what would have been accepted

  // "pointer: value (expected: expected)"; without "pointer: " when the pointer is "".
  [[nodiscard]] std::string toString() const;
  friend bool operator==(const ConfigError&, const ConfigError&) = default;
};

// Thrown by load() / loadString(). what() is every error's toString(), one per line.
class ConfigErrors : public std::runtime_error {
public:
  explicit ConfigErrors(std::vector<ConfigError> errors);
  [[nodiscard]] const std::vector<ConfigError>& errors() const noexcept { return errors_; }

private:
  std::vector<ConfigError> errors_;
};

// Either a Config or at least one error, never both.
class LoadResult {
public:
  explicit LoadResult(Config config) : value_(std::move(config)) {}
  explicit LoadResult(std::vector<ConfigError> errors);  // throws std::invalid_argument if empty

  [[nodiscard]] bool ok() const noexcept { return value_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  // Throws std::logic_error when !ok().
  [[nodiscard]] const Config& config() const;
  // Empty when ok().
  [[nodiscard]] const std::vector<ConfigError>& errors() const noexcept;

private:
  std::variant<Config, std::vector<ConfigError>> value_;
};

// Never throw for a bad document or file (only std::bad_alloc can escape).
[[nodiscard]] LoadResult tryLoad(const std::filesystem::path& path);
[[nodiscard]] LoadResult tryLoadString(std::string_view json);

// Throw ConfigErrors with every error of the document.
[[nodiscard]] Config load(const std::filesystem::path& path);
[[nodiscard]] Config loadString(std::string_view json);

// The effective configuration as a pretty-printed document with every key (defaults filled in),
// durations in the largest exact unit ("1m", "500ms", 0 for zero), endpoints as "host:port"
// ("[::1]:20880" for IPv6), policies inline. loadString(toJson(c)) == c for every valid c.
// server.heartbeat / client.heartbeat / cluster.directory.client are not written: the document has
// one "heartbeat" and one "client".
// "service" is written only when Config::service is not the default (its interface is required).
// "metrics" is written only when Config::metrics holds options.
[[nodiscard]] std::string toJson(const Config& config);

// The configuration as the layers apply it: each value whose 0 (or raw form) stands for a derived
// one is replaced by it — heartbeat idle_timeout (0 = 3 × interval) and close_timeout (0 =
// idle_timeout), in heartbeat, server.heartbeat, client.heartbeat and
// cluster.directory.client.heartbeat; wheel.tick raised to 1 ms
// and ticks_per_wheel rounded up to a power of two, as HashedWheelTimer does. Zeros that mean
// "none" or "unlimited" (deadline, max_pending, max_connections; heartbeat.seed = a random seed
// per task) stay 0. resolved(resolved(c)) == resolved(c) and loadString(toJson(resolved(c))) ==
// resolved(c). wheelbeat-config prints toJson(resolved(c)).
[[nodiscard]] Config resolved(const Config& config);

// Applies a configuration's logging to the process in one call: core::setLogLevel(
// config.logLevel) and core::setLogSink(sink), where nullptr (the default) is the stderr sink of
// core/log.h ("2026-11-25T14:03:07.412Z INFO  wheelbeat: ..."). Returns the sink it replaced
// (nullptr if that was the default one), so a caller can put it back. Call it once after loading,
// before starting timers and loops: until then the library logs at Info to stderr whatever
// log_level says. Thread: any (both settings are process-wide); not from inside a sink.
core::LogSink applyLogging(const Config& config, core::LogSink sink = nullptr);

// Every key path the loader accepts, as JSON pointers with "*" for a name of "retry":
// "/wheel", "/wheel/tick", ..., "/retry/*", "/retry/*/backoff", "/heartbeat/reconnect/backoff",
// ..., "/metrics", "/metrics/listen", "/cluster", ..., "/cluster/directory/max_heartbeat" (the
// discovery sections' only with WHEELBEAT_CONFIG_DISCOVERY).
[[nodiscard]] std::vector<std::string> knownKeyPaths();

}  // namespace wheelbeat::config
