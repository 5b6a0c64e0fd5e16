// Shared by the config tests: a document's error messages, and the repository's paths.
#pragma once

#include <wheelbeat/config/config.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace wbtest {

// Every error of `json` as toString() lines; empty when the document is valid.
inline std::vector<std::string> messagesOf(std::string_view json) {
  std::vector<std::string> out;
  const auto result = wheelbeat::config::tryLoadString(json);
  for (const auto& e : result.errors()) out.push_back(e.toString());
  return out;
}

inline std::filesystem::path sourceDir() { return WHEELBEAT_SOURCE_DIR; }
inline std::filesystem::path samplesDir() { return sourceDir() / "samples" / "configs"; }
inline std::filesystem::path schemaPath() {
  return sourceDir() / "config" / "wheelbeat.schema.json";
}

// Every key of "cluster" differs from its default.
inline wheelbeat::cluster::ClusterOptions everyClusterKeyChanged() {
  using namespace std::chrono_literals;
  wheelbeat::cluster::ClusterOptions o;
  o.mode = wheelbeat::tasks::cluster::Mode::Failfast;
  o.retries = 3;
  o.forks = 4;
  o.deadline = 2500ms;
  o.attemptTimeout = 700ms;
  o.balancer = wheelbeat::tasks::cluster::BalancerKind::ConsistentHash;
  o.seed = 12345678901234567890ULL;
  o.outlier = {3, 40, 7, 2s, 15s, 90s, 30, true, 1.0 / 3.0 + 2.0, 7ms};
  o.hedge = true;
  o.hedgeDelay = {25ms, 99.5, 3ms, 20s, 50};
  o.maxExtraPercent = 12.5;
  o.budget = {0.3, 4, 2s};
  o.directory.emptyProtection = false;
  o.directory.leaveDrain = 0ms;
  o.directory.protectionWindow = 90s;
  o.directory.minHeartbeat = 500ms;
  o.directory.maxHeartbeat = 10min;
  return o;
}

}  // namespace wbtest
