// T0 / T1's open-loop load (t1.h): a pacing thread starts call k at its scheduled time
// t0 + k / rate, whether or not earlier calls ended, and each call's latency runs from that
// scheduled time to its outcome. The outcomes of the measured calls (the window) are kept: every
// latency (exact percentiles), the ok / failed counts by error name, the attempts the outcomes
// report, and the process's CPU and the client's counters at the window's start.
//
// Threads: start(), waitMeasured(), stop() and results(): the driver's thread. The pacing thread
// issues the calls (ServiceClient::call() from any thread); the outcomes arrive on the loop
// thread. A mutex guards what both write; the outcome callbacks hold the state by shared_ptr, so
// a call ended by the client's close() after stop() finds it alive.
#pragma once

#include "child_process.h"

#include <wheelbeat/cluster/service_client.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace wheelbeat::bench::netbench {

// What the load calls: the cluster client (ClusterCaller), or T0's floor (t1_raw_consumer.h).
class Caller {
public:
  virtual ~Caller() = default;
  // From the pacing thread; `done` once, on the caller's own thread. Throws when closed.
  virtual void call(const std::string& body, const cluster::CallOptions& options,
                    cluster::CallDone done) = 0;
  // The client's counters (none: zeros). Any thread.
  [[nodiscard]] virtual cluster::ServiceClient::Stats stats() const { return {}; }
};

class ClusterCaller : public Caller {
public:
  explicit ClusterCaller(cluster::ServiceClient& client) : client_(client) {}
  void call(const std::string& body, const cluster::CallOptions& options,
            cluster::CallDone done) override {
    client_.call(body, options, std::move(done));
  }
  [[nodiscard]] cluster::ServiceClient::Stats stats() const override { return client_.stats(); }

private:
  cluster::ServiceClient& client_;
};

struct LoadPlan {
  double rate = 0;                 // calls per second
  std::int64_t warmupCalls = 0;    // calls 0 .. warmupCalls - 1 warm up
  std::int64_t measuredCalls = 0;  // the next ones are measured
  Clock::time_point t0;            // call 0's scheduled time
  std::chrono::nanoseconds deadline{0};
  int payloadBytes = 1;  // >= 1: the mark, then filler

  // Call k's scheduled time.
  [[nodiscard]] Clock::time_point at(std::int64_t k) const;
  // The measured window's start: call warmupCalls's scheduled time.
  [[nodiscard]] Clock::time_point windowStart() const { return at(warmupCalls); }
};

// The measured calls, once all ended (or the run was cut short).
struct LoadResults {
  std::int64_t issued = 0;  // measured calls started
  std::int64_t ok = 0;
  std::int64_t failed = 0;
  std::map<std::string, std::int64_t> failedByError;
  std::int64_t attempts = 0;  // the outcomes' attempts, summed
  std::int64_t hedgesWon = 0;
  std::vector<std::int64_t> latencyNs;  // per ended call, from its scheduled time; sorted
  std::int64_t lateStarts = 0;          // started > 1 ms after their scheduled time
  std::int64_t maxStartLagNs = 0;
  Clock::time_point lastStart;  // the last measured call's actual start
  // At the window's start (the pacing thread, just before the first measured call).
  std::chrono::nanoseconds cpuStart{0};
  cluster::ServiceClient::Stats statsStart;
  double loadStart = 0;
  // The pacing thread's own CPU from the window's start to its last call (part of the
  // process's: a load generator's cost, not the client's).
  std::chrono::nanoseconds pacingCpu{0};
};

class OpenLoop {
public:
  OpenLoop(Caller& client, LoadPlan plan);
  ~OpenLoop();  // stop()
  OpenLoop(const OpenLoop&) = delete;
  OpenLoop& operator=(const OpenLoop&) = delete;

  // Starts the pacing thread.
  void start();
  // Waits until every measured call has ended, or `until`. True when they have.
  bool waitMeasured(Clock::time_point until);
  // Stops issuing calls and joins the pacing thread. Idempotent.
  void stop();
  // A copy of the measured calls' results, latencies sorted. After waitMeasured() returned
  // true (or stop()).
  [[nodiscard]] LoadResults results() const;

  struct State;

private:
  void pace();

  Caller& client_;
  LoadPlan plan_;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace wheelbeat::bench::netbench
