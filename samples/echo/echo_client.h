// What echo_client's two ways of calling share (echo_client.cpp: one server, direct;
// echo_cluster.cpp: the providers of a registry through cluster::ServiceClient): the stats line,
// the pace of the requests, and the cluster flags.
#pragma once

#include "../common/metrics.h"
#include "command_line.h"
#include "echo_registry.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/shutdown_signal.h>
#include <wheelbeat/tasks/task_listener.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace samples::echo {

// What the stats line reports besides the library's counters. Any thread.
struct ClientStats {
  std::shared_ptr<wheelbeat::tasks::TaskMetrics> tasks =
      std::make_shared<wheelbeat::tasks::TaskMetrics>();
  std::shared_ptr<wheelbeat::net::ChannelMetrics> channels =
      std::make_shared<wheelbeat::net::ChannelMetrics>();
  std::atomic<std::uint64_t> ok{0};
  std::atomic<std::uint64_t> failed{0};  // timed out, closed first, or not sent

  // "echo_client: stats: state=connected heartbeats sent/answered=3/3 rtt p50=180us p99=410us
  // reconnects=0 requests ok/failed=5/0" (p50 / p99 estimated inside the histogram's buckets).
  void print(std::string_view state) const;
};

// Requests whose answer has not come yet; the last request waits for them.
class Outstanding {
public:
  void begin();
  void end();
  // True once none is open; false when `limit` passed first.
  bool waitIdle(std::chrono::milliseconds limit);

private:
  std::mutex mutex_;
  std::condition_variable idle_;
  std::uint64_t open_ = 0;
};

// --count and --interval-ms: how many requests (none: until a signal) and how far apart.
struct Pace {
  std::optional<std::uint64_t> count;
  std::chrono::milliseconds interval{1000};
};

// Sends requests 1, 2, ... (`send(n)`), one per interval, until a signal or the count; every 5th
// request, `report()`. With a count, waits up to `answerWithin` for the last answers.
void sendLoop(const Pace& pace, wheelbeat::net::ShutdownSignal& shutdown, Outstanding& open,
              std::chrono::milliseconds answerWithin,
              const std::function<void(std::uint64_t)>& send, const std::function<void()>& report);

// The cluster flags as given (nullopt: not given); they need --registry.
struct ClusterArgs {
  std::optional<std::string> mode;
  std::optional<std::string> balancer;
  std::optional<int> retries;
  std::optional<int> hedgeMs;
};
void addClusterOptions(wheelbeat::cli::App& app, ClusterArgs& args);
// Throws std::invalid_argument naming a cluster flag given without --registry.
void checkClusterArgs(const ClusterArgs& args, bool withRegistry);

// --registry: calls the providers the registry lists through a cluster::ServiceClient.
int runCluster(const wheelbeat::config::Config& cfg, const RegistryFlags& flags,
               const ClusterArgs& cluster, const Pace& pace,
               wheelbeat::net::ShutdownSignal& shutdown);

// The collectors of what a client run owns (the wheel, its tasks and channels).
void addClientCollectors(samples::SampleMetrics& metrics,
                         const wheelbeat::core::HashedWheelTimer& timer,
                         const std::shared_ptr<ClientStats>& stats);

}  // namespace samples::echo
