// Helpers shared by the tasks tests: option builders, a way to collect a RetryState's delays,
// and errorOf() for validation messages. fake_channel.h builds on this file.
#pragma once

#include <wheelbeat/tasks/retry_budget.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wbtest {

using namespace std::chrono_literals;
using wheelbeat::tasks::Backoff;
using wheelbeat::tasks::cappedBackoff;
using wheelbeat::tasks::Decision;
using wheelbeat::tasks::GiveUp;
using wheelbeat::tasks::giveUpName;
using wheelbeat::tasks::Jitter;
using wheelbeat::tasks::RetryBudget;
using wheelbeat::tasks::RetryBudgetOptions;
using wheelbeat::tasks::RetryOptions;
using wheelbeat::tasks::RetryState;
using ns = std::chrono::nanoseconds;

// The message of the std::invalid_argument `call` throws, or a marker when it throws none.
inline std::string errorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument thrown)";
}

// Arbitrary start on the caller's clock (not 0, so time 0 is never special).
inline constexpr ns kStart = 5s;

// Exponential options without jitter and without limits: the raw backoff sequence.
inline RetryOptions exponential(ns initial, double multiplier, ns maxDelay,
                                Jitter jitter = Jitter::None) {
  RetryOptions o;
  o.backoff = Backoff::Exponential;
  o.initialDelay = initial;
  o.multiplier = multiplier;
  o.maxDelay = maxDelay;
  o.jitter = jitter;
  return o;
}

inline RetryOptions withJitter(Jitter jitter) {
  RetryOptions o;  // gRPC defaults: 1s, x1.6, 120s cap
  o.jitter = jitter;
  return o;
}

// The delays of `count` granted retries, all asked at kStart.
inline std::vector<ns> delays(const RetryOptions& options, std::uint64_t seed, int count) {
  RetryState state(options, kStart, seed);
  std::vector<ns> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out.push_back(state.next(kStart, "io").delay);
  return out;
}

inline RetryBudgetOptions budgetOptions(double ratio, std::int64_t minRetriesPerSecond,
                                        ns window = 10s) {
  RetryBudgetOptions o;
  o.ratio = ratio;
  o.minRetriesPerSecond = minRetriesPerSecond;
  o.window = window;
  return o;
}

// Withdraws until refused (at most `limit` times) and returns how many succeeded.
inline int drain(RetryBudget& budget, ns now, int limit = 1'000'000) {
  int n = 0;
  while (n < limit && budget.tryWithdraw(now)) ++n;
  return n;
}

}  // namespace wbtest
