// The JSON lines on stdout: a header (definitions, targets), one line per scenario and impl with
// the medians of the repetitions, and one wheelbeat-vs-heap comparison per scenario. Every line
// goes through Reporter::emit so --self-check can validate exactly what was printed.
#pragma once

#include "scenarios.h"

#include <optional>
#include <string>
#include <vector>

namespace wheelbeat::bench {

class Reporter {
public:
  // Prints `line` and a newline on stdout, flushes, and keeps a copy.
  void emit(std::string line);
  [[nodiscard]] const std::vector<std::string>& lines() const noexcept { return lines_; }

private:
  std::vector<std::string> lines_;
};

// Per metric, the median over the repetitions (all repetitions report the same keys).
Metrics medianOf(const std::vector<Metrics>& reps);
// The value of `key` in `m`; throws std::out_of_range when absent.
double metricValue(const Metrics& m, std::string_view key);

// `platformJson`: measurePlatform()'s object, reported as "platform".
std::string headerLine(const std::string& platformJson);
std::string resultLine(const ScenarioDef& def, ImplKind impl, const Metrics& medians, int reps,
                       std::uint64_t n);
// ratio = wheelbeat's headline metric / heap's.
std::string compareLine(const ScenarioDef& def, double ratio);

// Whether wheelbeat's medians meet the wheel's targets for that scenario (nullopt: no target;
// docs/performance.md).
std::optional<bool> meetsTarget(std::string_view scenario, const Metrics& medians);

}  // namespace wheelbeat::bench
