#include "report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace wheelbeat::bench::netbench {
namespace {

using nlohmann::ordered_json;

// The targets and its Netty 4.1.48 reference figures (IdleStateHandler, same machine
// class); only the targets decide "met_*".
constexpr double kTargetCpuS = 1.0;
constexpr double kTargetRssPerConn = 4096;
constexpr double kNettyCpuS = 4.08;
constexpr double kNettyRssPerConn = 15.7 * 1024;
constexpr std::int64_t kTargetConnsHeld = 19000;
constexpr double kTargetServerCpuPct = 25;

double round3(double v) { return std::round(v * 1000) / 1000; }
double round1(double v) { return std::round(v * 10) / 10; }

std::int64_t falseCloses(const Measurement& m) { return m.serverIdleCloses + m.clientReconnects; }

bool isRaw(const Measurement& m) { return m.config.impl == Impl::Raw; }

// The floor's own line ends with what only it has; wheelbeat's, measured after a floor, with
// the comparison (after every older key: tools read those by position too).
void addImplTail(ordered_json& j, const Measurement& m) {
  if (isRaw(m)) {
    j["hb_skipped_client"] = m.clientHbSkipped;
    return;
  }
  j["idle_deferred_server"] = m.serverIdleDeferred;
  j["idle_deferred_client"] = m.clientIdleDeferred;
  if (!m.rawCpuUsPerHeartbeat) return;
  const double rawCpu = *m.rawCpuUsPerHeartbeat;
  j["raw_cpu_us_per_heartbeat"] = round3(rawCpu);
  j["cpu_per_heartbeat_vs_raw"] = round3(rawCpu > 0 ? cpuUsPerHeartbeat(m) / rawCpu : 0);
}

// Last of all (tools read the older keys by position).
void addRounds(ordered_json& j, const Measurement& m) {
  if (m.config.rounds <= 1) return;
  j["rounds"] = m.config.rounds;
  j["cpu_us_per_heartbeat_rounds"] = rounded3(m.roundsCpuUsPerHeartbeat);
  if (!m.roundsVsRaw.empty()) j["cpu_per_heartbeat_vs_raw_rounds"] = rounded3(m.roundsVsRaw);
}

void addCommon(ordered_json& j, const Measurement& m) {
  j["false_idle_closes_server"] = m.serverIdleCloses;
  j["reconnects_client"] = m.clientReconnects;
  j["other_closes_server"] = m.serverOtherCloses;
  j["disconnects_client"] = m.clientDisconnects;
  j["window_s"] = round3(m.windowS);
  j["warmup_s"] = m.config.warmupS;
  j["client_procs"] = m.config.clientProcs;
  j["tick_ms"] = m.config.tickMs;
  j["heartbeat_ms"] = m.config.heartbeatMs;
  j["schedule"] = m.config.schedule;  // when wheelbeat's clients connected (--schedule)
  j["connect_s"] = round3(m.connectS);
  j["heap_bytes_per_conn_server"] = round1(m.heapPerConnServer);
  j["heap_bytes_per_conn_client"] = round1(m.heapPerConnClient);
  j["cpu_us_per_heartbeat"] = round3(cpuUsPerHeartbeat(m));
  j["rtt_samples"] = m.rttSamples;
  j["rtt_max_us"] = round1(m.rttMaxUs);
  j["rtt_from_decision_p50_us"] = round1(m.rttDecisionP50Us);
  j["rtt_from_decision_p99_us"] = round1(m.rttDecisionP99Us);
  j["loop_wakeups_per_s_server"] = round1(m.serverWakeupsPerS);
  j["loop_wakeups_per_s_client"] = round1(m.clientWakeupsPerS);
  j["loadavg_1m_start"] = m.loadStart;
  j["loadavg_1m_end"] = m.loadEnd;
}

std::string h1Line(const Measurement& m) {
  ordered_json j;
  j["scenario"] = "H1";
  j["impl"] = implName(m.config.impl);
  j["conns"] = m.conns;
  j["heartbeats_per_s"] = round1(m.heartbeatsPerS);
  const double cpu = m.cpuServerS + m.cpuClientsS;
  j["cpu_s_window_server_plus_client"] = round3(cpu);
  j["rss_bytes_per_conn_server"] = round1(m.rssPerConnServer);
  j["rss_bytes_per_conn_client"] = round1(m.rssPerConnClient);
  j["rtt_p50_us"] = round1(m.rttP50Us);
  j["rtt_p99_us"] = round1(m.rttP99Us);
  j["false_idle_closes"] = falseCloses(m);
  j["cpu_s_server"] = round3(m.cpuServerS);
  j["cpu_s_client"] = round3(m.cpuClientsS);
  addCommon(j, m);
  if (isRaw(m)) {
    addImplTail(j, m);
    addRounds(j, m);
    return j.dump();
  }
  j["target_cpu_s"] = kTargetCpuS;
  j["met_cpu"] = cpu <= kTargetCpuS;
  j["target_rss_bytes_per_conn"] = kTargetRssPerConn;
  j["met_rss"] = m.rssPerConnServer <= kTargetRssPerConn && m.rssPerConnClient <= kTargetRssPerConn;
  j["target_false_idle_closes"] = 0;
  j["met_false_idle_closes"] = falseCloses(m) == 0;
  j["netty_cpu_s"] = kNettyCpuS;
  j["netty_rss_bytes_per_conn"] = kNettyRssPerConn;
  addImplTail(j, m);
  addRounds(j, m);
  return j.dump();
}

std::string h2Line(const Measurement& m) {
  ordered_json j;
  j["scenario"] = "H2";
  j["impl"] = implName(m.config.impl);
  j["conns_held"] = m.connsHeld;
  j["false_idle_closes"] = falseCloses(m);
  const double pct = m.windowS > 0 ? 100 * m.cpuServerS / m.windowS : 0;
  j["server_cpu_pct"] = round3(pct);
  j["conns"] = m.conns;
  j["server_capacity"] = m.capacity;
  j["heartbeats_per_s"] = round1(m.heartbeatsPerS);
  j["rtt_p50_us"] = round1(m.rttP50Us);
  j["rtt_p99_us"] = round1(m.rttP99Us);
  j["rss_bytes_per_conn_server"] = round1(m.rssPerConnServer);
  j["rss_bytes_per_conn_client"] = round1(m.rssPerConnClient);
  j["cpu_s_server"] = round3(m.cpuServerS);
  j["cpu_s_client"] = round3(m.cpuClientsS);
  addCommon(j, m);
  if (isRaw(m)) {
    addImplTail(j, m);
    addRounds(j, m);
    return j.dump();
  }
  j["target_conns_held"] = kTargetConnsHeld;
  j["met_conns_held"] = m.connsHeld >= kTargetConnsHeld;
  j["target_false_idle_closes"] = 0;
  j["met_false_idle_closes"] = falseCloses(m) == 0;
  j["target_server_cpu_pct"] = kTargetServerCpuPct;
  j["met_server_cpu"] = pct <= kTargetServerCpuPct;
  addImplTail(j, m);
  addRounds(j, m);
  return j.dump();
}

}  // namespace

std::vector<double> rounded3(const std::vector<double>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(round3(v));
  return out;
}

double cpuUsPerHeartbeat(const Measurement& m) {
  // Comparable across loads and heartbeat rates (and between wheelbeat and its floor).
  const double beats = m.heartbeatsPerS * m.windowS;
  return beats > 0 ? 1e6 * (m.cpuServerS + m.cpuClientsS) / beats : 0;
}

std::string resultLine(const Measurement& m) {
  return m.config.scenario == Scenario::H1 ? h1Line(m) : h2Line(m);
}

std::vector<std::string> selfCheck(const std::string& line, const Measurement& m) {
  std::vector<std::string> problems;
  auto expect = [&](bool ok, std::string what) {
    if (!ok) problems.push_back(std::move(what));
  };
  const auto j = ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return {fmt::format("not a JSON object: {}", line)};
  // Written out again on purpose: the shapes, in order, independent of the code above.
  const bool h1 = m.config.scenario == Scenario::H1;
  const std::vector<std::string> shape =
      h1 ? std::vector<std::string>{"scenario",
                                    "impl",
                                    "conns",
                                    "heartbeats_per_s",
                                    "cpu_s_window_server_plus_client",
                                    "rss_bytes_per_conn_server",
                                    "rss_bytes_per_conn_client",
                                    "rtt_p50_us",
                                    "rtt_p99_us",
                                    "false_idle_closes"}
         : std::vector<std::string>{"scenario", "impl", "conns_held", "false_idle_closes",
                                    "server_cpu_pct"};
  auto it = j.begin();
  for (const auto& key : shape) {
    expect(it != j.end() && it.key() == key, fmt::format("key '{}' missing or out of order", key));
    if (it == j.end()) break;
    if (key != "scenario" && key != "impl") {
      expect(it.value().is_number(), fmt::format("'{}' is not a number", key));
    }
    ++it;
  }
  expect(j.value("scenario", "") == (h1 ? "H1" : "H2"), "scenario");
  expect(j.value("impl", "") == implName(m.config.impl), "impl");
  if (m.rawCpuUsPerHeartbeat) {
    for (const char* key : {"raw_cpu_us_per_heartbeat", "cpu_per_heartbeat_vs_raw"}) {
      expect(j.contains(key) && j[key].is_number() && j[key].get<double>() > 0,
             fmt::format("'{}' missing or not a positive number", key));
    }
  }
  if (m.config.rounds > 1) {
    const auto rounds = static_cast<std::size_t>(m.config.rounds);
    expect(j.value("rounds", 0) == m.config.rounds, "'rounds' missing or wrong");
    expect(j.contains("cpu_us_per_heartbeat_rounds") &&
               j["cpu_us_per_heartbeat_rounds"].size() == rounds,
           fmt::format("'cpu_us_per_heartbeat_rounds' missing or not {} figures", rounds));
  }
  expect(m.heartbeatsPerS > 0, "no heartbeats flowed in the window");
  expect(m.rttSamples > 0 && m.rttP50Us > 0, "no heartbeat round trip was sampled");
  expect(falseCloses(m) == 0, fmt::format("{} false idle closes / reconnects", falseCloses(m)));
  expect(m.serverOtherCloses == 0 && m.clientDisconnects == 0,
         fmt::format("{} server closes, {} client disconnects", m.serverOtherCloses,
                     m.clientDisconnects));
  expect(m.connsHeld == m.conns, fmt::format("{} of {} connections held", m.connsHeld, m.conns));
  return problems;
}

}  // namespace wheelbeat::bench::netbench
