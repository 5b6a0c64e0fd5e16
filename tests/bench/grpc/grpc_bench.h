// wheelbeat_grpc_bench: the cluster benchmark's T0 / T1 on gRPC C++, the baseline the wheelbeat
// side (wheelbeat_net_bench --scenario T0,T1) is read against.
//
// N provider processes (this binary again, --role provider: a gRPC server with one unary method,
// EchoService/Echo) and one consumer (the driver process itself): one gRPC channel to every
// provider ("ipv4:127.0.0.1:p1,127.0.0.1:p2,..."), whose service config is the row's --config.
// Calls are scheduled at fixed 1/rate intervals from the start (open loop) and their latency is
// measured from the scheduled time, so a stalled consumer or provider is not hidden (no
// coordinated omission). The first --warmup seconds of calls are not measured.
//
// T0: no fault. T1: provider 0 answers every --slow-every-th call (by its own call counter)
// --slow-ms late without blocking its other calls; provider 1 fails call i (0-based) with
// UNAVAILABLE iff floor((i+1)F) > floor(iF), F = --error-fraction; provider 2 is SIGSTOPped for
// --stop-for s every --stop-every s from --stop-start s into the measured window.
//
// Thread: every function here runs on the calling (main) thread unless it says otherwise.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace wheelbeat::bench::grpcbench {

using Clock = std::chrono::steady_clock;

enum class Scenario { T0, T1 };
// The channel configurations (configs.cpp has their service config JSON).
enum class ChannelConfig { RoundRobin, Retry, Outlier, Best };

struct Options {
  std::vector<Scenario> scenarios{Scenario::T0, Scenario::T1};
  std::vector<ChannelConfig> configs{ChannelConfig::RoundRobin, ChannelConfig::Retry,
                                     ChannelConfig::Outlier, ChannelConfig::Best};
  int providers = 8;
  double rate = 2000;     // calls per second
  double durationS = 60;  // the measured window
  double warmupS = 5;     // before it, not measured
  int deadlineMs = 500;   // each call's deadline, from the moment it is sent
  int payload = 64;       // request bytes (echoed back)
  int slowEvery = 100;    // T1, provider 0: 0 = never
  int slowMs = 50;
  double errorFraction = 0.3;  // T1, provider 1
  double stopForS = 2;         // T1, provider 2
  double stopEveryS = 20;
  double stopStartS = 5;
};

// What a provider process is told (--role provider).
struct ProviderOptions {
  int index = 0;
  long parentPid = 0;  // it exits if its parent is not this process (or dies: PR_SET_PDEATHSIG)
  int slowEvery = 0;
  int slowMs = 0;
  double errorFraction = 0;
};

// A provider's counts, printed when its stdin closes.
struct ProviderCounts {
  std::uint64_t calls = 0;     // every request it received since it started
  std::uint64_t measured = 0;  // of which carried the consumer's "measured" flag
  std::uint64_t retried = 0;   // measured ones sent as a retry (grpc-previous-rpc-attempts)
};

// One row's calls, as the consumer sees them.
struct ConsumerPlan {
  std::string target;         // "ipv4:127.0.0.1:p1,..."
  std::string serviceConfig;  // JSON
  bool enableHedgingArg = false;
  double rate = 0;
  std::uint64_t warmupCalls = 0;    // calls [0, warmupCalls) are not measured
  std::uint64_t measuredCalls = 0;  // calls [warmupCalls, warmupCalls + measuredCalls) are
  int deadlineMs = 0;
  int payload = 0;
};

struct ConsumerResult {
  std::vector<std::int64_t> latencyUs;  // of every measured call, ok or not
  std::uint64_t ok = 0;
  std::map<std::string, std::uint64_t> failedBy;  // status name -> measured calls
  std::int64_t cpuUs = 0;  // the process's user + system CPU over the measured calls
};

// Set by SIGINT / SIGTERM (driver.cpp): every wait gives up soon after.
[[nodiscard]] bool interrupted() noexcept;

const char* scenarioName(Scenario s);
const char* configName(ChannelConfig c);
// The service config JSON of `c` for the service "wheelbeat.bench.EchoService".
std::string serviceConfigJson(ChannelConfig c);
// Whether `c` needs the channel argument grpc.experimental.enable_hedging (perAttemptRecvTimeout
// is ignored without it in gRPC 1.51).
bool needsHedgingArg(ChannelConfig c);

// The roles. providerMain: serve until stdin closes, then print the counts; returns the exit
// status. runConsumer: makes the channel, waits until it is connected, tells `onStart` when the
// first call is due (the measured window starts warmupCalls / rate later), calls, and returns
// when every call has ended. Throws std::runtime_error on a channel that never connects, or when
// interrupted.
int providerMain(const ProviderOptions& options);
ConsumerResult runConsumer(const ConsumerPlan& plan,
                           const std::function<void(Clock::time_point)>& onStart);
// The driver: every (scenario, config) row, one JSON line each on stdout. Returns the exit status.
int driverMain(const Options& options);

}  // namespace wheelbeat::bench::grpcbench
