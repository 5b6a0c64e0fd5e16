// R1's JSON line (the keys first, in its order; then the comparisons; then the run's
// exact counts and conditions; then the body mode, and a hessian2 line's ratio to the raw-bodies
// line) and its --self-check.
#include "r1.h"
#include "report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace wheelbeat::bench::netbench {
namespace {

using nlohmann::ordered_json;

double round3(double v) { return std::round(v * 1000) / 1000; }
double round1(double v) { return std::round(v * 10) / 10; }
double ratio(double a, double b) { return b > 0 ? round3(a / b) : 0; }

// The keys every line has, in order; wheelbeat lines insert the comparisons after "p999_us".
const std::vector<std::string>& headKeys() {
  static const std::vector<std::string> keys{"scenario",
                                             "impl",
                                             "loops",
                                             "conns",
                                             "depth",
                                             "requests_per_s",
                                             "server_cpu_us_per_request",
                                             "client_cpu_us_per_request",
                                             "p50_us",
                                             "p99_us",
                                             "p999_us"};
  return keys;
}
const std::vector<std::string>& tailKeys() {
  static const std::vector<std::string> keys{
      "sent",       "answered",         "server_handled", "timeouts", "closed",
      "errors",     "rtt_samples",      "window_s",       "warmup_s", "request_timeout_ms",
      "body_bytes", "loadavg_1m_start", "loadavg_1m_end"};
  return keys;
}

std::vector<std::string> expectedKeys(const R1Measurement& m) {
  std::vector<std::string> keys = headKeys();
  if (m.raw != nullptr) {
    keys.insert(keys.end(), {"server_cpu_per_request_vs_raw", "client_cpu_per_request_vs_raw",
                             "requests_per_s_vs_raw", "p99_vs_raw"});
  }
  if (m.oneLoop != nullptr) {
    keys.insert(keys.end(), {"server_cpu_per_request_vs_1_loop", "requests_per_s_vs_1_loop"});
  }
  keys.insert(keys.end(), tailKeys().begin(), tailKeys().end());
  keys.emplace_back("bodies");
  if (m.rawBodies != nullptr) keys.emplace_back("server_cpu_per_request_vs_raw_bodies");
  if (m.config.rounds > 1) {
    keys.insert(keys.end(), {"rounds", "server_cpu_us_per_request_rounds"});
    if (m.raw != nullptr) keys.emplace_back("server_cpu_per_request_vs_raw_rounds");
  }
  return keys;
}

void addComparisons(ordered_json& j, const R1Measurement& m) {
  if (const R1Measurement* r = m.raw) {
    j["server_cpu_per_request_vs_raw"] = ratio(m.serverCpuUsPerRequest, r->serverCpuUsPerRequest);
    j["client_cpu_per_request_vs_raw"] = ratio(m.clientCpuUsPerRequest, r->clientCpuUsPerRequest);
    j["requests_per_s_vs_raw"] = ratio(m.requestsPerS, r->requestsPerS);
    j["p99_vs_raw"] = ratio(m.p99Us, r->p99Us);
  }
  if (const R1Measurement* one = m.oneLoop) {
    j["server_cpu_per_request_vs_1_loop"] =
        ratio(m.serverCpuUsPerRequest, one->serverCpuUsPerRequest);
    j["requests_per_s_vs_1_loop"] = ratio(m.requestsPerS, one->requestsPerS);
  }
}

}  // namespace

const char* r1PairName(R1Pair pair) {
  if (pair == R1Pair::WheelbeatServer) return "wheelbeat-server";
  return implName(pair == R1Pair::Raw ? Impl::Raw : Impl::Wheelbeat);
}

std::string r1Line(const R1Measurement& m) {
  ordered_json j;
  j["scenario"] = "R1";
  j["impl"] = r1PairName(m.pair);
  j["loops"] = m.loops;
  j["conns"] = m.c.conns;
  j["depth"] = m.c.depth;
  j["requests_per_s"] = round1(m.requestsPerS);
  j["server_cpu_us_per_request"] = round3(m.serverCpuUsPerRequest);
  j["client_cpu_us_per_request"] = round3(m.clientCpuUsPerRequest);
  j["p50_us"] = round1(m.p50Us);
  j["p99_us"] = round1(m.p99Us);
  j["p999_us"] = round1(m.p999Us);
  addComparisons(j, m);
  j["sent"] = m.sent;
  j["answered"] = m.answered;
  j["server_handled"] = m.handled;
  j["timeouts"] = m.timeouts;
  j["closed"] = m.closed;
  j["errors"] = m.errors;
  j["rtt_samples"] = m.rttSamples;
  j["window_s"] = round3(m.windowS);
  j["warmup_s"] = m.config.warmupS;
  j["request_timeout_ms"] = m.config.requestTimeoutMs;
  j["body_bytes"] = kR1BodyBytes;
  j["loadavg_1m_start"] = m.loadStart;
  j["loadavg_1m_end"] = m.loadEnd;
  j["bodies"] = r1BodiesName(m.bodies);
  if (const R1Measurement* r = m.rawBodies) {
    j["server_cpu_per_request_vs_raw_bodies"] =
        ratio(m.serverCpuUsPerRequest, r->serverCpuUsPerRequest);
  }
  if (m.config.rounds > 1) {  // last: tools read the older keys by position
    j["rounds"] = m.config.rounds;
    j["server_cpu_us_per_request_rounds"] = rounded3(m.roundsServerCpuUsPerRequest);
    if (m.raw != nullptr)
      j["server_cpu_per_request_vs_raw_rounds"] = rounded3(m.roundsServerCpuVsRaw);
  }
  return j.dump();
}

std::vector<std::string> r1SelfCheck(const std::string& line, const R1Measurement& m) {
  std::vector<std::string> problems;
  const auto j = ordered_json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return {fmt::format("not a JSON object: {}", line)};
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) {
    keys.push_back(key);
    if (key != "scenario" && key != "impl" && key != "bodies" && !value.is_number() &&
        !value.is_array()) {
      problems.push_back(fmt::format("\"{}\" is {}, expected a number", key, value.dump()));
    }
  }
  if (keys != expectedKeys(m)) {
    problems.push_back(fmt::format("keys {} (expected {})", fmt::join(keys, ","),
                                   fmt::join(expectedKeys(m), ",")));
  }
  auto expect = [&](bool ok, std::string what) {
    if (!ok) problems.push_back(std::move(what));
  };
  expect(m.requestsPerS > 0, "requests_per_s is 0");
  expect(m.rttSamples > 0, "no latency sample in the window");
  expect(m.sent > 0 && m.sent == m.answered,
         fmt::format("sent {} != answered {} (after the drain)", m.sent, m.answered));
  expect(m.handled == m.sent, fmt::format("server handled {} != sent {}", m.handled, m.sent));
  expect(m.timeouts == 0 && m.closed == 0 && m.errors == 0,
         fmt::format("timeouts {}, closed {}, errors {} (expected 0 each)", m.timeouts, m.closed,
                     m.errors));
  return problems;
}

}  // namespace wheelbeat::bench::netbench
