// T0 / T1's consumer side (t1.h): the named cluster settings, and the process's loop, wheel,
// registry node and ServiceClient of one run.
#pragma once

#include "t1.h"

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/loop_wheel.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::bench::netbench {

// T0's floor: no cluster client at all (t1_raw_consumer.h); T0 only.
inline constexpr std::string_view kT1RawConfig = "raw";

// "round_robin", "failover", "full", "raw": --config's words, in the help's order.
const std::vector<std::string>& t1ConfigNames();

// The cluster settings a --config word names, with the call deadline of --deadline-ms:
//   round_robin  RoundRobin, failfast (one attempt), no ejection, no suspicion, no hedging
//   failover     RoundRobin, failover with retries = 2 under the retry budget and load cap, no
//                ejection, no suspicion, no hedging
//   full         P2C, failover (retries = 2), outlier ejection (consecutive failures and a
//                failure share over 1 s intervals, suspicion before the deadline), adaptive
//                hedging (the service's p95), the retry budget and the load cap
// Throws std::invalid_argument naming --config and the word for any other.
cluster::ClusterOptions t1ClusterOptions(std::string_view name, const T1Config& config);

// One run's consumer: a loop, a wheel of 1 ms ticks, a registry node on a loopback port 0 (the
// providers register there), and after connect() a Registry client of the node and a
// ServiceClient over it. Threads: the driver's (main) thread; client() is the ServiceClient,
// whose call() any thread may use.
class T1Consumer {
public:
  T1Consumer();
  ~T1Consumer();  // close()
  T1Consumer(const T1Consumer&) = delete;
  T1Consumer& operator=(const T1Consumer&) = delete;

  [[nodiscard]] std::uint16_t registryPort() const noexcept { return registryPort_; }
  // Starts the client with `options` and waits until it has `providers` available (connected,
  // none ejected), at most 20 s. Throws std::runtime_error saying how many it had, Interrupted
  // on SIGINT / SIGTERM.
  void connect(cluster::ClusterOptions options, int providers);
  [[nodiscard]] cluster::ServiceClient& client() { return *client_; }
  // The client (calls still running end with "disconnected"), its registry, the node, the
  // loop and the wheel, in that order. Idempotent.
  void close();

private:
  // One thread for the client: the wheel is driven by the loop (net::LoopWheel), so a call's
  // deadline and hedge delay need no second thread and no hand-over per wake-up.
  core::HashedWheelTimer timer_;
  net::EventLoop loop_;
  std::unique_ptr<net::LoopWheel> wheel_;
  std::unique_ptr<registry::RegistryServer> node_;
  std::uint16_t registryPort_ = 0;
  std::unique_ptr<registry::Registry> registry_;
  std::unique_ptr<cluster::ServiceClient> client_;
  bool closed_ = false;
};

}  // namespace wheelbeat::bench::netbench
