#include "report.h"

#include "workload.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace wheelbeat::bench {
namespace {

// The figures wheelbeat must reach on this machine class (docs/performance.md).
struct Target {
  std::string_view scenario;
  std::string_view metric;
  double bound;
  bool atLeast;  // false: the metric must be <= bound
};
constexpr Target kTargets[] = {
    // The same scenarios on Netty 4.1.48 in the comments.
    {"S1", "ns_per_op", 10, false},              // 37.5 ns
    {"S2", "ns_per_pair", 12, false},            // 48.7 ns
    {"S3", "ns_per_op", 15, false},              // 42.8 ns
    {"S4", "rss_bytes_per_timeout", 64, false},  // 124 B
    {"S5", "min_ms", 0, true},                   // never early
    {"S5", "p99_ms", 1.1, false},                // 1.95 ms
    {"S5", "max_ms", 2, false},                  // 3.4 ms
    {"S6", "cpu_pct", 0.5, false},               // 32 %
    {"S7", "fired_per_s", 28e6, true},           // 6.9 M/s
};

constexpr std::pair<std::string_view, std::string_view> kDefinitions[] = {
    {"median",
     "each metric: median over the repetitions, after one warm-up; a fresh timer per "
     "repetition; repetitions alternate between impls"},
    {"ns_per_op",
     "S1: wall time of the loop scheduling N no-op timeouts (delays 1-60 s, tick "
     "100 ms, pre-generated) / N; S3: 2 threads x N/2 released by a barrier, (last "
     "end - first start) / N"},
    {"ns_per_pair", "S2: wall time of N (newTimeout + cancel) pairs / N"},
    {"rss_bytes_per_timeout",
     "S4: (VmRSS 200 ms after scheduling N with delays 10-20 min - "
     "VmRSS once the timer is started) / N; a fresh process per impl "
     "and repetition"},
    {"lateness",
     "S5: fire time (steady_clock, in the task) - (steady_clock read just before "
     "newTimeout + delay); tick 1 ms, delays 10-1000 ms; nearest-rank percentiles"},
    {"cpu_pct",
     "S6: process CPU (getrusage user+sys) during a 10 s window while the main thread "
     "sleeps, N pending (delays 10-20 min, tick 1 ms), window opened 1 s after "
     "scheduling / window wall time * 100 (% of one core)"},
    {"fired_per_s",
     "S7: N / CPU seconds of the timer's own threads (process CPU - scheduling "
     "thread CPU) from the first newTimeout until the last task ran; delays "
     "100-200 ms, tick 1 ms"},
    {"worker_cpu_ns_per_timeout",
     "S7: CPU time of the timer's worker thread (its CLOCK_THREAD_CPUTIME_ID, read through a "
     "probe task) from before the first newTimeout until the last task ran / N"},
    {"fire_window_ms", "S7: wall time from the first to the last fire"},
    {"ratio", "wheelbeat / heap of the scenario's headline metric"},
    {"targets", "upper bounds for wheelbeat, except S5_min_ms and S7_fired_per_s (lower bounds)"},
    {"heap",
     "baseline: binary min-heap under a mutex, one worker on a condition_variable, "
     "cancel by flag on a shared entry, lazy removal with purge (tests/bench/heap_timer.h)"},
};

// JSON has no NaN or infinity; integers print without a fraction, the rest with 4 digits.
std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  if (std::fabs(v) >= 1000 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

// Keys and texts here are constants without quotes, backslashes or control characters.
std::string quoted(std::string_view s) { return fmt::format("\"{}\"", s); }

}  // namespace

void Reporter::emit(std::string line) {
  fmt::print(stdout, "{}\n", line);  // throws on a write error
  if (std::fflush(stdout) != 0) throw std::runtime_error("wheelbeat_bench: cannot write stdout");
  lines_.push_back(std::move(line));
}

Metrics medianOf(const std::vector<Metrics>& reps) {
  Metrics out;
  for (const auto& [key, unused] : reps.front()) {
    std::vector<double> values;
    values.reserve(reps.size());
    for (const auto& rep : reps) values.push_back(metricValue(rep, key));
    out.emplace_back(key, median(values));
  }
  return out;
}

double metricValue(const Metrics& m, std::string_view key) {
  for (const auto& [k, v] : m) {
    if (k == key) return v;
  }
  throw std::out_of_range(fmt::format("metric '{}' missing", key));
}

std::string headerLine(const std::string& platformJson) {
  std::string defs;
  for (const auto& [key, text] : kDefinitions) {
    defs += fmt::format("{}{}:{}", defs.empty() ? "" : ",", quoted(key), quoted(text));
  }
  std::string targets;
  for (const Target& t : kTargets) {
    targets += fmt::format("{}\"{}_{}\":{}", targets.empty() ? "" : ",", t.scenario, t.metric,
                           number(t.bound));
  }
  return fmt::format(
      R"({{"bench":"wheelbeat","version":1,"platform":{},"definitions":{{{}}},"targets":{{{}}}}})",
      platformJson, defs, targets);
}

std::string resultLine(const ScenarioDef& def, ImplKind impl, const Metrics& medians, int reps,
                       std::uint64_t n) {
  std::string line = fmt::format(R"({{"scenario":"{}","impl":"{}")", def.id, implName(impl));
  for (const auto& [key, value] : medians) {
    line += fmt::format(",{}:{}", quoted(key), number(value));
  }
  line += fmt::format(R"(,"reps":{},"n":{})", reps, n);
  if (impl == ImplKind::Wheelbeat) {
    if (const auto meets = meetsTarget(def.id, medians)) {
      line += fmt::format(R"(,"meets_target":{})", *meets);
    }
  }
  return line + "}";
}

std::string compareLine(const ScenarioDef& def, double ratio) {
  return fmt::format(
      R"({{"scenario":"{}","compare":"wheelbeat_vs_heap","metric":"{}","ratio":{}}})", def.id,
      def.headline, number(ratio));
}

std::optional<bool> meetsTarget(std::string_view scenario, const Metrics& medians) {
  std::optional<bool> meets;
  for (const Target& t : kTargets) {
    if (t.scenario != scenario) continue;
    const double v = metricValue(medians, t.metric);
    const bool ok = t.atLeast ? v >= t.bound : v <= t.bound;
    meets = meets.value_or(true) && ok;
  }
  return meets;
}

}  // namespace wheelbeat::bench
