// wheelbeat_bench: issue 2's benchmark scenarios for the wheel and the heap baseline.
//   wheelbeat_bench [--scenario S1,S5] [--reps N] [--quick] [--impl wheelbeat|heap|both]
//                   [--self-check]
// JSON lines on stdout (see report.h); progress and errors on stderr.
#include "platform.h"
#include "report.h"
#include "scenarios.h"
#include "self_check.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelbeat::bench {
namespace {

constexpr std::string_view kUsage =
    "usage: wheelbeat_bench [--scenario S1,S2,...] [--reps N] [--quick]\n"
    "                       [--impl wheelbeat|heap|both] [--self-check]\n";

struct Options {
  RunPlan plan;
  bool selfCheck = false;
};

std::vector<const ScenarioDef*> parseScenarios(std::string_view list) {
  std::vector<const ScenarioDef*> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view id = list.substr(0, comma);
    const ScenarioDef* def = findScenario(id);
    if (def == nullptr) throw std::invalid_argument(fmt::format("--scenario: unknown '{}'", id));
    out.push_back(def);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return out;
}

std::vector<ImplKind> parseImpl(std::string_view v) {
  if (v == "wheelbeat") return {ImplKind::Wheelbeat};
  if (v == "heap") return {ImplKind::Heap};
  if (v == "both") return {ImplKind::Wheelbeat, ImplKind::Heap};
  throw std::invalid_argument(fmt::format("--impl: '{}' (expected wheelbeat, heap or both)", v));
}

Options parseArgs(int argc, char** argv) {
  Options o;
  o.plan.impls = parseImpl("both");
  int reps = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    if (arg == "--scenario") {
      o.plan.scenarios = parseScenarios(value());
    } else if (arg == "--reps") {
      reps = std::stoi(std::string(value()));
      if (reps < 1) throw std::invalid_argument("--reps: expected >= 1");
    } else if (arg == "--quick") {
      o.plan.quick = true;
    } else if (arg == "--impl") {
      o.plan.impls = parseImpl(value());
    } else if (arg == "--self-check") {
      o.selfCheck = true;
    } else {
      throw std::invalid_argument(fmt::format("unknown argument '{}'", arg));
    }
  }
  if (o.plan.scenarios.empty()) {
    for (const auto& s : allScenarios()) o.plan.scenarios.push_back(&s);
  }
  o.plan.reps = reps > 0 ? reps : o.plan.quick ? 1 : 5;
  return o;
}

std::string describe(const Metrics& m) {
  std::string s;
  for (const auto& [k, v] : m) s += fmt::format(" {}={:.4g}", k, v);
  return s;
}

// Runs one scenario for every impl: a warm-up each (not in quick mode), then the repetitions,
// alternating impls so that noise from the rest of the machine spreads over both.
std::vector<std::vector<Metrics>> runScenario(const ScenarioDef& def, const RunPlan& plan,
                                              std::uint64_t seedBase) {
  RunParams p;
  p.n = plan.quick ? def.quickN : def.n;
  p.quick = plan.quick;
  std::vector<std::vector<Metrics>> results(plan.impls.size());
  for (int rep = plan.quick ? 0 : -1; rep < plan.reps; ++rep) {
    p.warmup = rep < 0;
    p.seed = seedBase + static_cast<std::uint64_t>(rep + 1);
    for (std::size_t i = 0; i < plan.impls.size(); ++i) {
      Metrics m = def.run(plan.impls[i], p);
      fmt::print(stderr, "[{} {:>9}] {}{}\n", def.id, implName(plan.impls[i]),
                 p.warmup ? "warm-up" : fmt::format("rep {}/{}", rep + 1, plan.reps), describe(m));
      if (!p.warmup) results[i].push_back(std::move(m));
    }
  }
  return results;
}

void reportScenario(Reporter& out, const ScenarioDef& def, const RunPlan& plan,
                    const std::vector<std::vector<Metrics>>& results) {
  const std::uint64_t n = plan.quick ? def.quickN : def.n;
  std::vector<Metrics> medians;
  for (std::size_t i = 0; i < plan.impls.size(); ++i) {
    medians.push_back(medianOf(results[i]));
    out.emit(resultLine(def, plan.impls[i], medians.back(), plan.reps, n));
  }
  if (plan.impls.size() == 2) {
    const double wheel = metricValue(medians[0], def.headline);
    const double heap = metricValue(medians[1], def.headline);
    out.emit(compareLine(def, heap != 0 ? wheel / heap : 0.0));
  }
}

int runAll(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  Reporter out;
  out.emit(headerLine(measurePlatform(o.plan.quick)));
  std::uint64_t seedBase = 0;
  for (const ScenarioDef* def : o.plan.scenarios) {
    seedBase += 1000;
    reportScenario(out, *def, o.plan, runScenario(*def, o.plan, seedBase));
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  fmt::print(stderr, "wheelbeat_bench: done in {:.1f} s\n", took.count());
  if (!o.selfCheck) return 0;
  const auto problems = selfCheck(out.lines(), o.plan);
  for (const auto& p : problems) fmt::print(stderr, "self-check: {}\n", p);
  fmt::print(stderr, "self-check: {} ({} lines)\n", problems.empty() ? "OK" : "FAILED",
             out.lines().size());
  return problems.empty() ? 0 : 1;
}

// Hidden: wheelbeat_bench --s4-child IMPL N SEED (S4 runs each measurement in a fresh process).
int childMain(int argc, char** argv) {
  if (argc != 5) throw std::invalid_argument("--s4-child IMPL N SEED");
  const auto impls = parseImpl(argv[2]);
  if (impls.size() != 1) throw std::invalid_argument("--s4-child: one impl");
  return s4ChildMain(impls.front(), std::stoull(argv[3]), std::stoull(argv[4]));
}

}  // namespace
}  // namespace wheelbeat::bench

int main(int argc, char** argv) {
  namespace wb = wheelbeat::bench;
  try {
    if (argc > 1 && std::string_view(argv[1]) == "--s4-child") return wb::childMain(argc, argv);
    if (argc > 1 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
      fmt::print("{}", wb::kUsage);
      return 0;
    }
    return wb::runAll(wb::parseArgs(argc, argv));
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "wheelbeat_bench: {}\n{}", e.what(), wb::kUsage);
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "wheelbeat_bench: FAILED: {}\n", e.what());
    return 1;
  }
}
