// T0 / T1's JSON line: the keys first, in its order, then what explains them (the
// client's extra attempts and ejections over the window, each provider's share, the pacing's
// own lateness, the faults that applied, the machine's load).
//
//   offered               calls scheduled in the window (duration x rate)
//   ok, failed            their outcomes (failed_by_error: by the shared error name)
//   attempts              requests of those calls the providers received (first attempts,
//                         retries, hedges), counted by each provider from the body's mark
//   extra_attempts_ratio  attempts / offered - 1
//   error_rate            failed / offered
//   p50_us .. max_us      latency from each call's scheduled start to its outcome, every call
//                         of the window (failed ones too), exact (nearest rank of all samples)
//   achieved_rate         calls started per second (the rate, when the pacing kept up)
//   client_cpu_us_per_call  this process's CPU (getrusage: user + system) over the window /
//                         offered: the client, its loop and wheel, the registry node, the pacing
//                         thread (pacing_cpu_us_per_call: the pacing thread's share of it)
#include "t1.h"
#include "t1_consumer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace wheelbeat::bench::netbench {
namespace {

using nlohmann::ordered_json;

double round3(double v) { return std::round(v * 1000) / 1000; }
double round1(double v) { return std::round(v * 10) / 10; }
// Ratios of a few in 10 000 stay visible.
double round6(double v) { return std::round(v * 1e6) / 1e6; }
double us(std::int64_t ns) { return round1(static_cast<double>(ns) / 1e3); }

ordered_json faults(const T1Measurement& m) {
  const T1Faults& f = m.run.faults;
  ordered_json j;
  j["slow_every"] = f.slowEvery;
  j["slow_ms"] = f.slowMs;
  j["error_fraction"] = f.errorFraction;
  j["stop_for_s"] = f.stopForS;
  j["stop_every_s"] = f.stopEveryS;
  j["stop_start_s"] = f.stopStartS;
  j["stops"] = m.stops;
  return j;
}

void addExplanations(ordered_json& j, const T1Measurement& m) {
  j["warmup_s"] = m.run.warmupS;
  j["deadline_ms"] = m.run.deadlineMs;
  j["payload_bytes"] = m.run.payloadBytes;
  j["attempts_client"] = m.attemptsClient;
  j["provider_attempts"] = m.providerAttempts;
  j["hedges_won"] = m.hedgesWon;
  ordered_json client = ordered_json::object();
  for (const auto& [key, value] : m.clientDeltas) client[key] = value;
  j["client"] = client;
  j["pacing_cpu_us_per_call"] =
      m.offered > 0
          ? round3(static_cast<double>(m.pacingCpuNs) / 1e3 / static_cast<double>(m.offered))
          : 0;
  j["late_starts"] = m.lateStarts;
  j["max_start_lag_us"] = us(m.maxStartLagNs);
  j["faults"] = faults(m);
  j["loadavg_1m_start"] = m.loadStart;
  j["loadavg_1m_end"] = m.loadEnd;
}

}  // namespace

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("model name")) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

std::string t1Line(const T1Measurement& m) {
  const double offered = static_cast<double>(m.offered);
  ordered_json j;
  j["scenario"] = m.scenario;
  j["impl"] = m.config == kT1RawConfig ? "raw_epoll" : "wheelbeat";
  j["config"] = m.config;
  j["providers"] = m.run.providers;
  j["rate"] = m.run.rate;
  j["duration_s"] = m.run.durationS;
  j["offered"] = m.offered;
  j["ok"] = m.ok;
  j["failed"] = m.failed;
  ordered_json byError = ordered_json::object();
  for (const auto& [error, n] : m.failedByError) byError[error] = n;
  j["failed_by_error"] = byError;
  j["attempts"] = m.attempts;
  j["extra_attempts_ratio"] =
      m.offered > 0 ? round6(static_cast<double>(m.attempts) / offered - 1) : 0;
  j["error_rate"] = m.offered > 0 ? round6(static_cast<double>(m.failed) / offered) : 0;
  j["p50_us"] = us(m.p50Ns);
  j["p99_us"] = us(m.p99Ns);
  j["p999_us"] = us(m.p999Ns);
  j["max_us"] = us(m.maxNs);
  j["achieved_rate"] = round1(m.achievedRate);
  j["client_cpu_us_per_call"] =
      m.offered > 0 ? round3(static_cast<double>(m.cpuNs) / 1e3 / offered) : 0;
  j["cpu_model"] = cpuModel();
  addExplanations(j, m);
  return j.dump();
}

}  // namespace wheelbeat::bench::netbench
