// The wheel's benchmark scenarios (docs/performance.md), as a table: id, headline metric, sizes,
// and the function that runs one repetition for one implementation and returns its metrics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelbeat::bench {

enum class ImplKind { Wheelbeat, Heap };
std::string_view implName(ImplKind kind);

// Metrics of one repetition, in output order; the first is the headline metric.
using Metrics = std::vector<std::pair<std::string, double>>;

struct RunParams {
  std::uint64_t n = 0;
  bool quick = false;   // smoke mode: tiny sizes, short waits
  bool warmup = false;  // the untimed warm-up run (results discarded)
  std::uint64_t seed = 1;
};

struct ScenarioDef {
  std::string_view id;        // "S1"
  std::string_view headline;  // the metric compared across impls, e.g. "ns_per_op"
  bool higherIsBetter;
  std::uint64_t n;
  std::uint64_t quickN;
  Metrics (*run)(ImplKind, const RunParams&);
};

const std::vector<ScenarioDef>& allScenarios();
const ScenarioDef* findScenario(std::string_view id);

Metrics runS1(ImplKind impl, const RunParams& p);
Metrics runS2(ImplKind impl, const RunParams& p);
Metrics runS3(ImplKind impl, const RunParams& p);
Metrics runS4(ImplKind impl, const RunParams& p);
Metrics runS5(ImplKind impl, const RunParams& p);
Metrics runS6(ImplKind impl, const RunParams& p);
Metrics runS7(ImplKind impl, const RunParams& p);

// The S4 measurement itself, run in a fresh process (hidden flag --s4-child); prints
// rss_bytes_per_timeout on stdout.
int s4ChildMain(ImplKind impl, std::uint64_t n, std::uint64_t seed);

// Throws std::runtime_error with `what` when !ok: count mismatches abort the run loudly.
void require(bool ok, std::string_view what);

}  // namespace wheelbeat::bench
