#include "scenarios.h"

#include <stdexcept>
#include <string>

namespace wheelbeat::bench {

std::string_view implName(ImplKind kind) {
  return kind == ImplKind::Wheelbeat ? "wheelbeat" : "heap";
}

const std::vector<ScenarioDef>& allScenarios() {
  // The scenarios' sizes (docs/performance.md); quick sizes only need to exercise every code path.
  static const std::vector<ScenarioDef> table{
      {"S1", "ns_per_op", false, 1'000'000, 20'000, &runS1},
      {"S2", "ns_per_pair", false, 1'000'000, 20'000, &runS2},
      {"S3", "ns_per_op", false, 1'000'000, 20'000, &runS3},
      {"S4", "rss_bytes_per_timeout", false, 1'000'000, 20'000, &runS4},
      {"S5", "p99_ms", false, 100'000, 2'000, &runS5},
      {"S6", "cpu_pct", false, 1'000'000, 20'000, &runS6},
      {"S7", "fired_per_s", true, 1'000'000, 20'000, &runS7},
  };
  return table;
}

const ScenarioDef* findScenario(std::string_view id) {
  for (const auto& s : allScenarios()) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

void require(bool ok, std::string_view what) {
  if (!ok) throw std::runtime_error(std::string(what));
}

}  // namespace wheelbeat::bench
