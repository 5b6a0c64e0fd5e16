// wheelbeat::Runtime: a service's shared machinery made from one configuration (config::Config),
// and the objects a service builds on it, with their metrics collected and their shutdown ordered.
//
//   wheelbeat::Runtime rt(wheelbeat::config::load("service.json"));
//   auto server = rt.server(handler);                // cfg.server; listen() binds its address
//   auto client = rt.client("10.0.0.5", 20880);      // cfg.client
//   auto payments = rt.retry("payments");            // cfg.retry("payments"), the shared wheel
//   rt.metrics().counter("myapp_orders_total", "Orders taken.").inc();
//   rt.stopOnSignals();
//   rt.run();                                // until SIGTERM / SIGINT or rt.stop()
//
// What it owns (built by the constructor, in this order)
//   - logging as the configuration says (config::applyLogging: log_level, the stderr sink);
//   - the shared core::HashedWheelTimer ("wheel"), and its metrics (wheelbeat_wheel_*);
//   - the net::EventLoopGroup ("loop": loop.io_threads loops);
//   - one core::MetricsRegistry (metrics()): every object made here writes into it, and so do the
//     application's own metrics (core/app_metrics.h);
//   - when the configuration has a "metrics" section, the net::MetricsEndpoint serving that
//     registry on loop 0, listening when the constructor returns (metricsPort()); the constructor
//     logs where it serves at Info ("metrics on http://127.0.0.1:9464/metrics").
//   The servers and clients made here count into one net::ChannelMetrics and one
//   tasks::TaskMetrics of the runtime (wheelbeat_channel_*, wheelbeat_channels,
//   wheelbeat_server_*, wheelbeat_tasks_*): counters that never go back when one of them goes.
//   The objects with metrics of their own (a retry runner's budget, the registry, a service
//   client) have their collector added when they are made and removed when they are destroyed.
//
// Makers: each builds the real object with the configuration's section, exactly as its own
// constructor does (nothing is started: listen(), start() are the caller's), and returns it as a
// std::shared_ptr the caller holds. Each throws what that constructor throws (an invalid section
// names its field), and std::logic_error once stop() has begun.
//
// Stop order (stop(), and the destructor): (1) every server made here still alive shuts down
// gracefully (TcpServer::shutdown(): READONLY to its clients, answers in flight sent, at most
// server.shutdown_grace), (2) every service client and client closes, (3) the registry closes,
// (4) the metrics endpoint closes, (5) the loops stop, (6) the wheel stops (runs waiting on it end
// with TimerUnavailable). When stop() returns no callback of any of them runs any more.
//
// Lifetime: an object made here may outlive the runtime. It is then closed but valid: its loop and
// wheel (stopped) stay allocated until the last such object goes; its queries answer, and calls
// that need a running loop throw as after their own close() (e.g. TcpClient::start() throws
// std::logic_error). Destroying the runtime never waits for the caller's objects.
//
// Threads: the constructor and the destructor on one thread (not a loop or wheel thread of this
// runtime); every maker, metrics(), metricsPort(), config() and isStopped() from any thread; run()
// from any thread but the runtime's own; stop() from any thread (see stop()).
#pragma once

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/config/config.h>
#include <wheelbeat/core/app_metrics.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/metrics.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/event_loop_group.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/tasks/retry_runner.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace wheelbeat {

namespace runtime::detail {
struct Core;
class SignalWatcher;
}  // namespace runtime::detail

class Runtime {
public:
  // The defaults of every section (as loading "{}"): no metrics endpoint.
  Runtime();
  // Throws what the parts throw: std::invalid_argument for a section the layer refuses,
  // NetException when the metrics endpoint cannot listen (nothing is left running then).
  explicit Runtime(config::Config config);
  // Runtime(config::loadString(json)) / Runtime(config::load(path)): config::ConfigErrors names
  // every error of the document.
  [[nodiscard]] static Runtime fromJson(std::string_view json);
  [[nodiscard]] static Runtime fromFile(const std::filesystem::path& path);
  // stop(), then releases what no object made here still needs.
  ~Runtime();

  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  Runtime(Runtime&&) = delete;
  Runtime& operator=(Runtime&&) = delete;

  // ---- makers (any thread)

  // A TcpServer over every loop with cfg.server (listen() binds cfg.server.listen), counting into
  // the runtime's channel and task metrics.
  [[nodiscard]] std::shared_ptr<net::TcpServer> server(net::ChannelHandler handler);
  // A TcpClient on the group's next loop with cfg.client (its server is cfg.client.server), or
  // with the server host:port instead (port 1 .. 65535).
  [[nodiscard]] std::shared_ptr<net::TcpClient> client(net::ChannelHandler handler = {});
  [[nodiscard]] std::shared_ptr<net::TcpClient> client(std::string host, std::uint16_t port,
                                                       net::ChannelHandler handler = {});
  // A RetryRunner on the wheel with cfg.retry(policy) (std::out_of_range naming the policies that
  // exist) and a RetryBudget of its own from cfg.retry_budget, whose metrics
  // (wheelbeat_retry_budget_*) are collected while the runner lives.
  [[nodiscard]] std::shared_ptr<tasks::RetryRunner> retry(std::string_view policy);
  // The runtime's one Registry (cfg.registry's engine, with cfg.client and cfg.failback), made by
  // the first call (not started: call start()); every call returns the same object.
  [[nodiscard]] std::shared_ptr<registry::Registry> registry();
  // A cluster::ServiceClient of `service` (an interface name) over registry(), with cfg.cluster, on
  // the group's next loop (not started: call start()).
  [[nodiscard]] std::shared_ptr<cluster::ServiceClient> serviceClient(std::string service);

  // ---- the shared parts (any thread)

  // Where the application adds its own metrics (core/app_metrics.h); served by the endpoint.
  [[nodiscard]] core::MetricsRegistry& metrics() noexcept;
  // The bound port of the metrics endpoint (the free port chosen for ":0"); 0 without one.
  [[nodiscard]] std::uint16_t metricsPort() const noexcept;
  [[nodiscard]] net::EventLoopGroup& loops() noexcept;
  [[nodiscard]] core::HashedWheelTimer& timer() noexcept;
  [[nodiscard]] const config::Config& config() const noexcept { return config_; }

  // ---- running and stopping

  // Blocks until the runtime has stopped (stop(), a signal after stopOnSignals()). Returns at once
  // when it already has. Thread: any but the runtime's loop and wheel threads (std::logic_error).
  void run();
  // Stops everything in the order of the file comment, once; a second call (or a concurrent one)
  // waits for the first to finish. Off the runtime's threads it returns when everything has
  // stopped. On one of its loop or wheel threads (inside a handler or a task) it only begins: a
  // thread of the runtime's own does the work, and run() / the destructor wait for it.
  void stop();
  // True once stop() has begun.
  [[nodiscard]] bool isStopped() const noexcept;
  // SIGTERM and SIGINT call stop() (from a watcher thread of the runtime); SIGPIPE is ignored
  // (a write to a reset connection reports EPIPE to its channel). One runtime per process at a
  // time (the handlers are process-wide): std::logic_error if another one has them. The previous
  // handlers come back when this runtime is destroyed. Idempotent. Thread: any.
  void stopOnSignals();

private:
  std::shared_ptr<net::TcpClient> makeClient(net::ClientOptions options,
                                             net::ChannelHandler handler);

  config::Config config_;
  std::shared_ptr<runtime::detail::Core> core_;
  std::mutex signalsMutex_;
  std::unique_ptr<runtime::detail::SignalWatcher> signals_;  // stopOnSignals()
};

// One request through a retry runner, the glue every caller of RetryRunner writes: each attempt is
// channel.request(body, attemptTimeout); an answer with kStatusOk succeeds, any other outcome
// fails with its shared error name (net::errorName(): "timeout", "disconnected", "overloaded",
// ...), as does a request the channel refuses (not connected: "disconnected"). `done` gets the
// run's RetryResult once (see retry_runner.h for its thread). The channel must outlive the run;
// the runner need not. Throws what RetryRunner::run() throws. Thread: any.
tasks::RetryHandle requestWithRetries(tasks::RetryRunner& runner, net::Channel& channel,
                                      std::string body, std::chrono::nanoseconds attemptTimeout,
                                      tasks::RetryCallback done);

}  // namespace wheelbeat
