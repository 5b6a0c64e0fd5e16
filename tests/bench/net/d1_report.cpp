#include "d1_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace wheelbeat::bench::netbench {
namespace {

using nlohmann::ordered_json;

double round1(double v) { return std::round(v * 10) / 10; }
double round3(double v) { return std::round(v * 1000) / 1000; }

// Nearest rank; null when there is no sample.
ordered_json quantile(std::vector<double> v, double q) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return round1(v[std::clamp<std::size_t>(rank, 1, v.size()) - 1]);
}

std::string detectorName(const DetectorGroup& g) {
  return std::string(tasks::detectorKindName(g.kind));
}

int falseCloses(const GroupResult& r) { return r.falseReconnectsClient + r.falseClosesServer; }

ordered_json head(const D1Run& run, std::size_t g, const char* caseName, int trials) {
  ordered_json j;
  j["scenario"] = "D1";
  j["detector"] = detectorName(run.groups[g]);
  j["case"] = caseName;
  j["heartbeat_ms"] = run.config.heartbeatMs;
  j["trials"] = trials;
  j["conns"] = run.config.conns;
  return j;
}

void tail(ordered_json& j, const D1Run& run, std::size_t g) {
  const auto& group = run.groups[g];
  if (group.kind == tasks::DetectorKind::Phi) {
    j["phi_threshold"] = group.threshold;
    j["phi_acceptable_pause_ms"] = group.acceptablePauseMs;
    j["extra"] = group.extra;
  }
  j["idle_timeout_ms"] = group.idleTimeoutMs > 0 ? group.idleTimeoutMs : 3 * run.config.heartbeatMs;
  j["tick_ms"] = run.config.tickMs;
}

std::string deadLine(const D1Run& run, std::size_t g) {
  const auto& r = run.dead[g];
  ordered_json j = head(run, g, "dead", run.config.trials);
  j["samples"] = r.detectMs.size();
  j["detect_ms_p50"] = quantile(r.detectMs, 0.5);
  j["detect_ms_p90"] = quantile(r.detectMs, 0.9);
  j["detect_ms_max"] = quantile(r.detectMs, 1.0);
  j["false_closes"] = falseCloses(r);
  j["detect_ms_min"] = quantile(r.detectMs, 0.0);
  j["undetected"] = r.undetected;
  j["decided_by_phi"] = r.byPhi;
  j["decided_by_idle_rule"] = r.byIdle;
  j["server_samples"] = r.serverDetectMs.size();
  j["server_detect_ms_p50"] = quantile(r.serverDetectMs, 0.5);
  j["server_detect_ms_p90"] = quantile(r.serverDetectMs, 0.9);
  j["server_detect_ms_max"] = quantile(r.serverDetectMs, 1.0);
  j["fault_uncertainty_ms"] = round3(run.info.faultUncertaintyMs);
  tail(j, run, g);
  return j.dump();
}

std::string pauseLine(const D1Run& run, std::size_t g) {
  const auto& r = run.pause[g];
  ordered_json j = head(run, g, "pause", run.config.pauses);
  j["samples"] = run.config.pauses * run.config.conns;  // connection-pauses
  j["false_closes"] = falseCloses(r);
  j["false_reconnects_client"] = r.falseReconnectsClient;
  j["false_closes_server"] = r.falseClosesServer;
  j["false_by_phi"] = r.falseByPhi;
  j["false_by_idle_rule"] = r.falseByIdle;
  j["pauses_with_false_close"] = r.pausesWithFalse;
  j["pause_ms_min"] = round1(run.info.pauseMsMin);
  j["pause_ms_max"] = round1(run.info.pauseMsMax);
  // False closes by pause length: 4 equal bins of [0.5, 2.5] heartbeats.
  ordered_json bins = ordered_json::object();
  const double width = (kPauseMax - kPauseMin) / kPauseBins * run.config.heartbeatMs;
  for (std::size_t b = 0; b < kPauseBins; ++b) {
    const double lo = kPauseMin * run.config.heartbeatMs + width * static_cast<double>(b);
    bins[fmt::format("{:.0f}-{:.0f}", lo, lo + width)] =
        b < r.falseByPauseBin.size() ? r.falseByPauseBin[b] : 0;
  }
  j["false_closes_by_pause_ms"] = bins;
  tail(j, run, g);
  return j.dump();
}

std::string lossLine(const D1Run& run, std::size_t g) {
  const auto& r = run.loss[g];
  ordered_json j = head(run, g, "loss", 1);
  j["samples"] = run.config.conns;
  j["false_closes"] = falseCloses(r);
  j["false_reconnects_client"] = r.falseReconnectsClient;
  j["false_closes_server"] = r.falseClosesServer;
  j["false_by_phi"] = r.falseByPhi;
  j["false_by_idle_rule"] = r.falseByIdle;
  j["loss_pct"] = kLossPct;
  j["loss_window_s"] = run.config.windowS;
  j["observed_s"] = round3(run.info.lossWindowS);
  tail(j, run, g);
  return j.dump();
}

ordered_json p50(const GroupResult& r) { return quantile(r.detectMs, 0.5); }

// The goal for group g against the fixed group 0.
struct Verdict {
  ordered_json ratio;
  bool detect = false;
  bool falseCloses = false;
};

Verdict verdict(const D1Run& run, std::size_t g) {
  Verdict v;
  const ordered_json fixed = p50(run.dead[0]);
  const ordered_json phi = p50(run.dead[g]);
  if (fixed.is_number() && phi.is_number() && fixed.get<double>() > 0) {
    v.ratio = round3(phi.get<double>() / fixed.get<double>());
    v.detect = v.ratio.get<double>() <= kGoalDetectRatio;
  }
  v.falseCloses = falseCloses(run.pause[g]) <= falseCloses(run.pause[0]) &&
                  falseCloses(run.loss[g]) <= falseCloses(run.loss[0]);
  return v;
}

std::string summaryLine(const D1Run& run) {
  ordered_json j;
  j["scenario"] = "D1";
  j["summary"] = true;
  const Verdict v = verdict(run, 1);
  j["phi_vs_fixed_detect_p50"] = v.ratio;
  j["goal_met"] = v.detect && v.falseCloses;
  j["met_detect"] = v.detect;
  j["met_false_closes"] = v.falseCloses;
  j["target_detect_ratio"] = kGoalDetectRatio;
  j["heartbeat_ms"] = run.config.heartbeatMs;
  j["conns_per_detector"] = run.config.conns;
  j["fixed_detect_ms_p50"] = p50(run.dead[0]);
  j["phi_detect_ms_p50"] = p50(run.dead[1]);
  j["false_closes_pause_fixed"] = falseCloses(run.pause[0]);
  j["false_closes_pause_phi"] = falseCloses(run.pause[1]);
  j["false_closes_loss_fixed"] = falseCloses(run.loss[0]);
  j["false_closes_loss_phi"] = falseCloses(run.loss[1]);
  ordered_json extras = ordered_json::array();
  for (std::size_t g = 2; g < run.groups.size(); ++g) {
    const Verdict e = verdict(run, g);
    ordered_json x;
    x["phi_threshold"] = run.groups[g].threshold;
    x["phi_acceptable_pause_ms"] = run.groups[g].acceptablePauseMs;
    x["idle_timeout_ms"] =
        run.groups[g].idleTimeoutMs > 0 ? run.groups[g].idleTimeoutMs : 3 * run.config.heartbeatMs;
    x["phi_vs_fixed_detect_p50"] = e.ratio;
    x["detect_ms_p50"] = p50(run.dead[g]);
    x["false_closes_pause"] = falseCloses(run.pause[g]);
    x["false_closes_loss"] = falseCloses(run.loss[g]);
    x["goal_met"] = e.detect && e.falseCloses;
    extras.push_back(x);
  }
  j["extras"] = extras;
  j["elapsed_s"] = round1(run.elapsedS);
  j["seed"] = run.seed;
  j["loadavg_1m_start"] = run.loadStart;
  j["loadavg_1m_end"] = run.loadEnd;
  return j.dump();
}

}  // namespace

std::vector<std::string> d1Lines(const D1Run& run) {
  std::vector<std::string> lines;
  for (std::size_t g = 0; g < run.groups.size(); ++g) {
    lines.push_back(deadLine(run, g));
    lines.push_back(pauseLine(run, g));
    lines.push_back(lossLine(run, g));
  }
  lines.push_back(summaryLine(run));
  return lines;
}

std::vector<std::string> d1SelfCheck(const std::vector<std::string>& lines, const D1Run& run) {
  std::vector<std::string> problems;
  auto expect = [&](bool ok, std::string what) {
    if (!ok) problems.push_back(std::move(what));
  };
  const std::size_t want = run.groups.size() * 3 + 1;
  expect(lines.size() == want, fmt::format("{} lines, expected {}", lines.size(), want));
  // Written out again on purpose: the shape, in order.
  const std::vector<std::string> shape{"scenario", "detector", "case", "heartbeat_ms", "trials"};
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const auto j = ordered_json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      problems.push_back(fmt::format("not a JSON object: {}", lines[i]));
      continue;
    }
    auto it = j.begin();
    for (const auto& key : shape) {
      expect(it != j.end() && it.key() == key,
             fmt::format("line {}: key '{}' missing or out of order", i + 1, key));
      if (it != j.end()) ++it;
    }
    expect(j.value("scenario", "") == "D1", fmt::format("line {}: scenario", i + 1));
    expect(j.contains("false_closes") && j["false_closes"].is_number_integer(),
           fmt::format("line {}: false_closes", i + 1));
    if (j.value("case", "") == "dead") {
      for (const char* key : {"detect_ms_p50", "detect_ms_p90", "detect_ms_max"}) {
        expect(j.contains(key) && j[key].is_number() && j[key].get<double>() > 0,
               fmt::format("line {}: '{}' missing or not a positive number", i + 1, key));
      }
      const auto samples = static_cast<int>(j.value("samples", 0));
      expect(samples == run.config.trials * run.config.conns,
             fmt::format("line {} ({}): {} samples of {} (undetected {})", i + 1,
                         j.value("detector", ""), samples, run.config.trials * run.config.conns,
                         j.value("undetected", -1)));
    }
  }
  const auto s = ordered_json::parse(lines.empty() ? "" : lines.back(), nullptr, false);
  expect(s.is_object() && s.value("summary", false), "no summary line");
  if (s.is_object()) {
    expect(s.contains("phi_vs_fixed_detect_p50") && s["phi_vs_fixed_detect_p50"].is_number(),
           "summary: phi_vs_fixed_detect_p50");
    expect(s.contains("goal_met") && s["goal_met"].is_boolean(), "summary: goal_met");
  }
  // The fixed rule can only decide by read idle; phi groups by either rule.
  expect(run.dead[0].byPhi == 0, "the fixed detector reported a phi decision");
  return problems;
}

}  // namespace wheelbeat::bench::netbench
