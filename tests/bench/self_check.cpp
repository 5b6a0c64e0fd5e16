#include "self_check.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <optional>

namespace wheelbeat::bench {
namespace {

using nlohmann::json;

// Written out again on purpose (not taken from the scenario code): the check is independent.
const std::map<std::string_view, std::vector<std::string_view>> kExpectedMetrics{
    {"S1", {"ns_per_op"}},
    {"S2", {"ns_per_pair"}},
    {"S3", {"ns_per_op"}},
    {"S4", {"rss_bytes_per_timeout"}},
    {"S5", {"p50_ms", "p99_ms", "p999_ms", "max_ms", "min_ms"}},
    {"S6", {"cpu_pct"}},
    {"S7", {"fired_per_s", "worker_cpu_ns_per_timeout", "fire_window_ms"}},
};

class Checker {
public:
  explicit Checker(const RunPlan& plan) : plan_(plan) {}

  void checkHeader(const json& j) {
    expect(j.value("bench", "") == "wheelbeat" && j.value("version", 0) == 1,
           "header: bench/version");
    expect(j.contains("definitions") && j["definitions"].is_object() && !j["definitions"].empty(),
           "header: definitions object");
    expect(j.contains("targets") && j["targets"].is_object() && j["targets"].size() >= 7,
           "header: targets object");
    if (j.contains("targets") && j["targets"].is_object()) {
      for (const auto& [k, v] : j["targets"].items()) expect(v.is_number(), "target " + k);
    }
  }

  void checkResult(const json& j, const ScenarioDef& def, ImplKind impl) {
    const std::string where = fmt::format("{} {}", def.id, implName(impl));
    for (const auto key : kExpectedMetrics.at(def.id)) {
      const std::string k(key);
      expect(j.contains(k) && j[k].is_number() && std::isfinite(j[k].get<double>()),
             fmt::format("{}: finite number {}", where, k));
    }
    expect(j.value("reps", 0) == plan_.reps, where + ": reps");
    expect(j.value("n", std::uint64_t{0}) == (plan_.quick ? def.quickN : def.n), where + ": n");
    if (impl == ImplKind::Wheelbeat) {
      expect(j.contains("meets_target") && j["meets_target"].is_boolean(),
             where + ": meets_target");
    } else {
      expect(!j.contains("meets_target"), where + ": meets_target only on wheelbeat lines");
    }
  }

  void checkCompare(const json& j, const ScenarioDef& def) {
    expect(j.value("compare", "") == "wheelbeat_vs_heap", std::string(def.id) + ": compare");
    expect(j.contains("ratio") && j["ratio"].is_number(), std::string(def.id) + ": ratio");
  }

  void expect(bool ok, const std::string& what) {
    if (!ok) problems_.push_back(what);
  }
  std::vector<std::string> take() { return std::move(problems_); }

private:
  const RunPlan& plan_;
  std::vector<std::string> problems_;
};

// The lines a plan must produce, in order; no impl = the comparison line.
struct Expected {
  const ScenarioDef* def;
  std::optional<ImplKind> impl;
};

std::vector<Expected> expectedLines(const RunPlan& plan) {
  std::vector<Expected> out;
  for (const ScenarioDef* def : plan.scenarios) {
    for (const ImplKind impl : plan.impls) out.push_back({def, impl});
    if (plan.impls.size() == 2) out.push_back({def, std::nullopt});
  }
  return out;
}

void checkLine(Checker& c, const json& j, const Expected& e) {
  const std::string id(e.def->id);
  c.expect(j.value("scenario", "") == id, fmt::format("line for {}: scenario", id));
  if (e.impl) {
    c.expect(j.value("impl", "") == implName(*e.impl), fmt::format("line for {}: impl", id));
    c.checkResult(j, *e.def, *e.impl);
  } else {
    c.checkCompare(j, *e.def);
  }
}

}  // namespace

std::vector<std::string> selfCheck(const std::vector<std::string>& lines, const RunPlan& plan) {
  Checker c(plan);
  const auto expected = expectedLines(plan);
  c.expect(lines.size() == expected.size() + 1,
           fmt::format("{} lines printed, {} expected", lines.size(), expected.size() + 1));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json j = json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      c.expect(false, fmt::format("line {} is not a JSON object: {}", i + 1, lines[i]));
      continue;
    }
    if (i == 0) {
      c.checkHeader(j);
    } else if (i - 1 < expected.size()) {
      checkLine(c, j, expected[i - 1]);
    }
  }
  return c.take();
}

}  // namespace wheelbeat::bench
