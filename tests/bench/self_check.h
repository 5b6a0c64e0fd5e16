// --self-check: validates the lines a run printed (bench_smoke in ctest runs it with --quick).
// Every line must be a JSON object; the first the header; then exactly one line per selected
// scenario and impl carrying that scenario's metrics as finite numbers, "reps" and "n" (and
// "meets_target" as a boolean for wheelbeat), and one comparison line per scenario when both
// impls ran. Nothing else.
#pragma once

#include "scenarios.h"

#include <string>
#include <vector>

namespace wheelbeat::bench {

struct RunPlan {
  std::vector<const ScenarioDef*> scenarios;
  std::vector<ImplKind> impls;
  bool quick = false;
  int reps = 5;
};

// Returns the problems found (empty: the output is valid).
std::vector<std::string> selfCheck(const std::vector<std::string>& lines, const RunPlan& plan);

}  // namespace wheelbeat::bench
