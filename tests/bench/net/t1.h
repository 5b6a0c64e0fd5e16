// T0 / T1: the cluster client (cluster::ServiceClient) over N provider processes under an
// open-loop offered load. T0: every provider healthy; T1: the same with three faults.
//
//   wheelbeat_net_bench --scenario T0,T1 [--config round_robin,failover,full] [--providers N]
//                       [--rate R] [--duration S] [--warmup S] [--deadline-ms MS] [--payload B]
//                       [--slow-every K] [--slow-ms M] [--error-fraction F]
//                       [--stop-for S] [--stop-every P] [--stop-start T]
//
// Processes: this one is the consumer (and the driver); it runs one EventLoop, one wheel (tick
// 1 ms), an embedded registry node (registry::RegistryServer on a loopback port 0) and, per run,
// a ServiceClient over a Registry client of that node. Each provider is this binary again
// (--role provider): a TcpServer answering every two-way request with its body, registered in
// the node as a Dubbo provider ("dubbo://127.0.0.1:PORT/org.wheelbeat.bench.Echo?weight=100"),
// so the client finds the providers through the real directory. Each run (scenario, config)
// starts its own node, providers and client, and stops them all.
//
// Faults (T1 only; each off when its first figure is 0):
//   provider 0  every K-th request by its own request counter (i + 1 multiple of K) is answered
//               M ms late, from a timeout on its wheel (the loop is never blocked);
//   provider 1  request i (its own counter, from 0) fails iff floor((i + 1) F) > floor(i F):
//               answered with Dubbo status 100 ("thread pool exhausted"), which the cluster
//               treats as retryable ("overloaded");
//   provider 2  SIGSTOPped for S seconds every P seconds, the first time T seconds into the
//               measured window (SIGCONT after each, and on every exit path).
//
// Load: open loop. Call k is scheduled at t0 + k / rate, issued by a pacing thread at that time
// (late if the process is behind, never skipped), and its latency runs from its scheduled time
// to its outcome on the loop thread: a stall delays the calls behind it and counts against them
// (no coordinated omission). The first warmup × rate calls warm up; the next duration × rate
// are measured. Their bodies start with a mark ('W' or 'M'), so each provider counts the
// measured requests it received: "attempts" (first attempts, retries, hedges and forks alike).
//
// Output: one JSON line per (scenario, config) on stdout (t1_report.cpp lists the keys);
// progress on stderr. The pipe protocol with a provider is proto.h's:
//   provider: "ready port=P cpu_ns= rss= heap=" once registered, then per "stats":
//             "stats received= measured= errors= slow= cpu_ns= rss= heap="; EOF: it quits.
#pragma once

#include "proto.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wheelbeat::bench::netbench {

inline constexpr char kT1WarmupMark = 'W';
inline constexpr char kT1MeasuredMark = 'M';
inline constexpr std::uint8_t kT1BusyStatus = 100;  // Dubbo's SERVER_THREADPOOL_EXHAUSTED_ERROR
inline constexpr const char* kT1Service = "org.wheelbeat.bench.Echo";

// What the faults are (the driver passes each provider only its own part).
struct T1Faults {
  int slowEvery = 100;         // provider 0; 0: off
  int slowMs = 50;             // >= 1
  double errorFraction = 0.3;  // provider 1; 0: off; in [0, 1]
  double stopForS = 2;         // provider 2; 0: off
  double stopEveryS = 20;      // > stopForS
  double stopStartS = 5;       // into the measured window, >= 0
};

struct T1Config {
  std::vector<std::string> scenarios{"T0", "T1"};  // in run order
  // In run order; "raw" (the floor) runs in T0 only.
  std::vector<std::string> configs{"round_robin", "failover", "full", "raw"};
  int providers = 8;
  double rate = 2000;     // calls per second, offered
  double durationS = 60;  // the measured window
  double warmupS = 5;     // before it
  int deadlineMs = 500;   // each call's
  int payloadBytes = 64;  // request body (echoed), mark included
  T1Faults faults;
  // Children only (set by the driver).
  std::string role;  // "provider"
  int procIndex = 0;
  int registryPort = 0;
  std::string marker;  // any text: lets a test find this run's processes (pgrep -f)
};

// The provider's process, its role (t1_provider.cpp).
int t1ProviderMain(const T1Config& config);
// Every (scenario, config) run in order, one line each; 0 when all ran, 1 on a failure, 130
// when SIGINT / SIGTERM / SIGHUP stopped it (every provider stopped, continued and reaped).
int t1DriverMain(const T1Config& config);

// Throws std::invalid_argument naming the flag, its value and what was expected, for what one
// flag's check cannot see (rules between flags). Thread: any.
void validateT1(const T1Config& config);

// What one run measured (the driver fills it; t1_report.cpp prints it).
struct T1Measurement {
  std::string scenario;
  std::string config;
  T1Config run;  // the flags, with the faults that applied (all 0 for T0)
  std::int64_t offered = 0;
  std::int64_t ok = 0;
  std::int64_t failed = 0;
  std::map<std::string, std::int64_t> failedByError;
  std::int64_t attempts = 0;        // measured requests the providers received
  std::int64_t attemptsClient = 0;  // the outcomes' attempts, summed
  std::vector<std::int64_t> providerAttempts;
  std::int64_t p50Ns = 0, p99Ns = 0, p999Ns = 0, maxNs = 0;
  double achievedRate = 0;
  std::int64_t cpuNs = 0;        // the consumer process, over the window
  std::int64_t pacingCpuNs = 0;  // of which the pacing thread's
  std::int64_t lateStarts = 0;
  std::int64_t maxStartLagNs = 0;
  std::int64_t hedgesWon = 0;
  std::int64_t stops = 0;                            // SIGSTOPs of provider 2 in the window
  std::map<std::string, std::int64_t> clientDeltas;  // ServiceClient::Stats over the window
  double loadStart = 0;
  double loadEnd = 0;
};

std::string t1Line(const T1Measurement& m);
// The first "model name" of /proc/cpuinfo, or "unknown".
std::string cpuModel();

}  // namespace wheelbeat::bench::netbench
