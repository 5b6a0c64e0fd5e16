// wheelbeat_bench: the wheel's benchmark scenarios, against a heap baseline.
//   wheelbeat_bench [--scenario S1,S5] [--reps N] [--quick] [--impl wheelbeat|heap|both]
//                   [--self-check]
// JSON lines on stdout (see report.h); progress and errors on stderr.
#include "command_line_cli11.h"
#include "platform.h"
#include "report.h"
#include "scenarios.h"
#include "self_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelbeat::bench {
namespace {

constexpr const char* kSynopsis =
    "usage: wheelbeat_bench [--scenario S1,S2,...] [--reps N] [--quick]\n"
    "                       [--impl wheelbeat|heap|both] [--self-check]\n"
    "       wheelbeat_bench --help | --version";

constexpr const char* kDescription =
    "The wheel's benchmark scenarios (S1-S7) against a heap-based baseline: one JSON\n"
    "line per scenario and implementation on stdout, progress on stderr. Exit status: 0 done,\n"
    "1 a run or the self-check failed, 2 bad usage.";

constexpr const char* kExamples =
    "  wheelbeat_bench --quick --self-check\n"
    "  wheelbeat_bench --scenario=S1,S5 --reps 3 --impl wheelbeat\n";

struct Options {
  RunPlan plan;
  bool selfCheck = false;
};

// The command line as given, before the plan is made of it.
struct Args {
  std::string scenarios;  // "S1,S5"; empty: all
  int reps = 0;
  bool quick = false;
  std::string impl = "both";
  bool selfCheck = false;
};

std::vector<ImplKind> parseImpl(std::string_view v) {
  if (v == "wheelbeat") return {ImplKind::Wheelbeat};
  if (v == "heap") return {ImplKind::Heap};
  if (v == "both") return {ImplKind::Wheelbeat, ImplKind::Heap};
  throw std::invalid_argument(fmt::format("--impl: '{}' (expected wheelbeat, heap or both)", v));
}

// "S1,S5" as scenarios, in order; an unknown id throws std::invalid_argument naming it.
std::vector<const ScenarioDef*> parseScenarios(std::string_view list) {
  std::vector<const ScenarioDef*> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view id = list.substr(0, comma);
    const ScenarioDef* def = findScenario(id);
    if (def == nullptr) {
      std::vector<std::string_view> ids;
      for (const auto& s : allScenarios()) ids.push_back(s.id);
      throw std::invalid_argument(fmt::format(
          "'{}' (expected: {} or a comma-separated list of them)", id, fmt::join(ids, ", ")));
    }
    out.push_back(def);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return out;
}

// --scenario's check (CLI11 prefixes the flag): the message of parseScenarios.
std::string checkScenarios(std::string& list) {
  try {
    (void)parseScenarios(list);
    return {};
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

void addOptions(CLI::App& app, Args& a) {
  std::vector<std::string_view> ids;
  for (const auto& s : allScenarios()) ids.push_back(s.id);
  app.add_option("--scenario", a.scenarios, "the scenarios to run, comma-separated")
      ->type_name("S1,S2,...")
      ->check(CLI::Validator(checkScenarios, ""))
      ->default_str(fmt::format("all: {}", fmt::join(ids, ",")));
  app.add_option("--reps", a.reps, "repetitions per scenario and implementation (median kept)")
      ->type_name("N")
      ->check(CLI::PositiveNumber.description(""))
      ->default_str("5, 1 with --quick");
  app.add_flag("--quick", a.quick, "tiny sizes, one repetition, no warm-up: a smoke run");
  app.add_option("--impl", a.impl, "the implementations measured")
      ->type_name("IMPL")
      ->check(wheelbeat::cli::cli11(wheelbeat::cli::oneOf({"wheelbeat", "heap", "both"})))
      ->capture_default_str();
  app.add_flag("--self-check", a.selfCheck, "validate the printed lines; exit 1 on a problem");
}

Options planOf(const Args& a) {
  Options o;
  o.plan.impls = parseImpl(a.impl);
  o.plan.scenarios = parseScenarios(a.scenarios);
  if (o.plan.scenarios.empty()) {
    for (const auto& s : allScenarios()) o.plan.scenarios.push_back(&s);
  }
  o.plan.quick = a.quick;
  o.selfCheck = a.selfCheck;
  o.plan.reps = a.reps > 0 ? a.reps : o.plan.quick ? 1 : 5;
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
    wheelbeat::cli::CommandLine cmd("wheelbeat_bench", wb::kSynopsis, wb::kDescription,
                                    wb::kExamples);
    wb::Args args;
    wb::addOptions(wheelbeat::cli::cli11App(cmd), args);
    if (const auto status = cmd.parse(argc, argv)) return *status;
    return wb::runAll(wb::planOf(args));
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "wheelbeat_bench: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "wheelbeat_bench: FAILED: {}\n", e.what());
    return 1;
  }
}
