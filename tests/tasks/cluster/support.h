// Helpers of the cluster decision tests.
#pragma once

#include <wheelbeat/tasks/cluster/call_machine.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cluster_test {

using namespace wheelbeat::tasks::cluster;

// Providers 1..n; pick() takes the lowest id not excluded (else the lowest), as a balancer would.
class FakeContext : public CallContext {
public:
  explicit FakeContext(std::uint64_t n) {
    for (std::uint64_t id = 1; id <= n; ++id) providers.push_back(id);
  }
  std::optional<std::uint64_t> pick(std::span<const std::uint64_t> exclude,
                                    std::chrono::nanoseconds /*now*/) override {
    ++picks;
    if (providers.empty()) return std::nullopt;
    for (const std::uint64_t id : providers) {
      if (std::find(exclude.begin(), exclude.end(), id) == exclude.end()) return id;
    }
    return providers.front();
  }
  std::vector<std::uint64_t> everyone(std::chrono::nanoseconds /*now*/) override {
    return providers;
  }
  bool allowExtra(AttemptKind kind, std::chrono::nanoseconds /*now*/) override {
    if (tokens == 0) {
      ++refused;
      return false;
    }
    --tokens;
    (kind == AttemptKind::Retry ? retries : hedges) += 1;
    return true;
  }
  std::optional<std::chrono::nanoseconds> hedgeDelay(std::chrono::nanoseconds /*now*/) override {
    return hedgeAfter;
  }

  std::vector<std::uint64_t> providers;
  int tokens = 1000;
  int refused = 0;
  int retries = 0;
  int hedges = 0;
  int picks = 0;
  std::optional<std::chrono::nanoseconds> hedgeAfter;
};

inline AttemptOutcome ok() { return {true, ""}; }
inline AttemptOutcome failed(std::string error) { return {false, std::move(error)}; }

// validate(options)'s message, or "" when it accepts them.
template <typename Options>
std::string validationError(const Options& options) {
  try {
    validate(options);  // found by argument-dependent lookup in the options' namespace
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace cluster_test
