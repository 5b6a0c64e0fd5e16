// What a D1 run measured (d1_driver.cpp), its JSON lines and --self-check.
//
// One line per detector and case, e.g.
//   {"scenario":"D1","detector":"phi","case":"dead","heartbeat_ms":1000,"trials":10,"conns":20,
//    "samples":200,"detect_ms_p50":...,"detect_ms_p90":...,"detect_ms_max":...,"false_closes":0,...}
// (pause and loss lines: false_closes and its breakdown instead of detect_ms_*), then
//   {"scenario":"D1","summary":true,"phi_vs_fixed_detect_p50":...,"goal_met":...,...}
// Percentiles are nearest-rank over every connection of every trial.
#pragma once

#include "d1.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wheelbeat::bench::netbench {

// Pause lengths in heartbeats (the 0.5–2.5 s at a 1 s heartbeat), counted in 4 bins.
inline constexpr double kPauseMin = 0.5;
inline constexpr double kPauseMax = 2.5;
inline constexpr std::size_t kPauseBins = 4;
inline constexpr int kLossPct = 10;
// The exit code of a run that cannot inject faults (ctest's SKIP_RETURN_CODE).
inline constexpr int kSkipped = 77;
// The goal (issue): phi's dead-peer p50 at most 0.7 × the fixed rule's.
inline constexpr double kGoalDetectRatio = 0.7;

struct GroupResult {
  // dead
  std::vector<double> detectMs;        // per connection and trial: fault -> reconnect decision
  std::vector<double> serverDetectMs;  // fault -> the server's close of that connection
  int byPhi = 0;
  int byIdle = 0;
  int undetected = 0;
  // false closes (every case: client reconnect decisions by a rule + server close-idles)
  int falseReconnectsClient = 0;
  int falseClosesServer = 0;
  int falseByPhi = 0;   // of those, decided by phi
  int falseByIdle = 0;  // by the idle / close timeout
  // pause
  std::vector<int> falseByPauseBin;
  int pausesWithFalse = 0;
};

struct CaseInfo {
  double faultUncertaintyMs = 0;  // dead: half the longest nft call
  double pauseMsMin = 0;
  double pauseMsMax = 0;
  double lossWindowS = 0;  // measured: rule in, out, one heartbeat of observation
};

struct D1Run {
  BenchConfig config;
  std::vector<DetectorGroup> groups;
  std::uint64_t seed = 0;
  std::vector<GroupResult> dead;
  std::vector<GroupResult> pause;
  std::vector<GroupResult> loss;
  CaseInfo info;
  double elapsedS = 0;
  double loadStart = 0;
  double loadEnd = 0;
};

std::vector<std::string> d1Lines(const D1Run& run);
// Problems with the lines (shape, key order, types) and with the run (a connection whose death
// went undetected, no samples). Not the goal: the figures are what they are.
std::vector<std::string> d1SelfCheck(const std::vector<std::string>& lines, const D1Run& run);

}  // namespace wheelbeat::bench::netbench
