// The cluster demo's script: start a registry, 3 providers and 2 consumers, then
//   1. kill -9 provider-1      -> consumers stop calling it and move their calls to the others
//   2. SIGSTOP provider-2      -> heartbeats find the half-open links, consumers stop using it,
//                                 the registry's close-idle task drops it; SIGCONT: it rejoins
//   3. restart the registry    -> providers' failback re-registers them, consumers see them again
// Every expected recovery is awaited up to a bound derived from the configuration (heartbeat,
// idle and close timeouts, reconnect backoff) plus a margin for loaded or sanitized machines,
// and recorded as seen (with the time it took) or not seen.
#pragma once

#include "cluster.h"

#include <wheelbeat/net/shutdown_signal.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace demo {

struct DemoOptions {
  bool plain = false;      // no live table: events and snapshots, line by line
  std::string nodeBinary;  // wheelbeat_demo_node
  std::string configPath;  // the cluster's JSON
  // "embedded" (a registry node), "redis" (a local redis-server) or "zookeeper" (a local
  // standalone ZooKeeper, in zkDir: zoo.cfg and its data, made and removed by the driver).
  std::string registry = "embedded";
  std::string zkDir;
  // Redis and ZooKeeper drop a silent provider when its session runs out (not when a
  // connection ends), and report nothing to the driver: the consumers' views decide.
  [[nodiscard]] bool sessionBased() const { return registry != "embedded"; }
  std::chrono::nanoseconds heartbeat{0};      // from the JSON: the detection bounds follow
  std::chrono::nanoseconds idleTimeout{0};    // client: half-open after this read idle
  std::chrono::nanoseconds closeTimeout{0};   // servers (registry): idle close
  std::chrono::nanoseconds reconnectMax{0};   // reconnect backoff cap
  std::chrono::nanoseconds registryRetry{0};  // failback registry retry cap
  std::chrono::nanoseconds session{0};        // Redis: a registration not renewed expires
  std::chrono::nanoseconds shutdownGrace{0};  // a provider's graceful shutdown bound
};

struct Recovery {
  std::string step;
  std::string what;
  bool seen = false;
  double seconds = 0;  // from the fault to the moment it was seen
  double bound = 0;    // how long it was awaited
};

// Ctrl-C / SIGTERM during the run.
struct Interrupted {};

class Scenario {
public:
  Scenario(Cluster& cluster, DemoOptions options, wheelbeat::net::ShutdownSignal& shutdown);

  // Runs the whole script; throws Interrupted on a signal.
  void run();
  [[nodiscard]] const std::vector<Recovery>& recoveries() const noexcept { return results_; }
  // Prints the table (and the recent events) now.
  void show(bool final);

private:
  struct Check {
    std::string what;
    std::function<bool()> holds;
  };

  void startCluster();
  [[nodiscard]] std::vector<std::string> argvFor(const std::string& role,
                                                 const std::string& name) const;
  void warmUp();
  void killProvider();
  void freezeProvider();
  void thawProvider(const std::string& providerPort);
  void restartRegistry();
  void rollingRestart();
  void startZookeeper();
  void awaitZookeeper();
  // Pumps status lines until every check held once or `bound` passed; records each check.
  void await(const std::string& step, std::vector<Check> checks, std::chrono::nanoseconds bound);
  void pumpFor(std::chrono::milliseconds d);
  void checkAlive();
  void event(const std::string& text);
  [[nodiscard]] double sinceStart() const;

  // Consumer views: status lines newer than `since`.
  [[nodiscard]] bool consumersFresh(SteadyClock::time_point since);
  [[nodiscard]] bool everyConsumer(const std::function<bool(const Node&)>& pred);
  [[nodiscard]] std::string port(const std::string& provider);
  // How long until the registry forgets a provider that went silent: the embedded registry's
  // close-idle task, or (Redis, ZooKeeper) the expiry of its registration / session, at most
  // 1.5 x session.
  [[nodiscard]] std::chrono::nanoseconds dropBound() const;
  [[nodiscard]] bool registryLists(const std::string& providerPort, bool present,
                                   SteadyClock::time_point since);

  Cluster& cluster_;
  DemoOptions options_;
  wheelbeat::net::ShutdownSignal& shutdown_;
  std::uint16_t registryPort_ = 0;
  std::string registryName_;
  SteadyClock::time_point start_;
  SteadyClock::time_point lastDraw_;
  std::vector<std::string> events_;
  std::vector<Recovery> results_;
};

}  // namespace demo
