// RetryBudget: a token bucket shared by the callers of one service, so that retries cannot exceed a
// ratio of normal traffic (Finagle's RetryBudget, gRPC's retry throttling). Without it a fleet
// whose server is down multiplies its load by (1 + retries) exactly when the server can least
// afford it.
//
// Tokens (one token = one retry)
//   earned   onRequest() deposits `ratio` tokens for each original request (not for retries).
//            A deposit expires: it can be spent for at least 0.9 × window and at most one window
//            after it was made (the window is kept as 10 slices of window / 10). So the earned
//            balance never exceeds ratio × (requests of the last window): it cannot accumulate
//            without limit during a long quiet, healthy period.
//   reserve  minRetriesPerSecond tokens, full at the first call, refilled continuously at
//            minRetriesPerSecond per second up to that same capacity (one second's worth). It lets
//            a client that sends few requests still retry a little.
//   tryWithdraw() spends one token: the oldest earned tokens first, then the reserve; it returns
//   false (and spends nothing) when less than one whole token is available.
//   So at any moment the earned balance is at most ratio × (requests of the last window), and over
//   a long run retries average at most ratio × requests + minRetriesPerSecond per second.
//   Amounts are fixed-point (10^-9 token), so e.g. ratio 0.1 × 100 requests is exactly 10 tokens.
//
// Time
//   Every call takes `now`, the caller's monotonic time in nanoseconds (e.g. Clock::now() of the
//   wheel's clock), so tests are deterministic. Time that goes backwards is treated as no time
//   passing. All callers of one budget must use the same clock.
//
// Threads
//   Every member function: any thread (a mutex; a budget is consulted once per request and once
//   per retry, not on the wheel's hot path).
#pragma once

#include <wheelbeat/core/metrics.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace wheelbeat::tasks {

// Plain options (config/ parses JSON into this struct).
struct RetryBudgetOptions {
  // Tokens deposited per request: the fraction of traffic that may be retries. 0 <= ratio <= 1000.
  double ratio = 0.2;
  // Retries always allowed per second (the reserve's refill rate and capacity). 0..10^9.
  std::int64_t minRetriesPerSecond = 10;
  // How long a deposit can be spent. >= 1ms.
  std::chrono::nanoseconds window = std::chrono::seconds(10);
};

// Throws std::invalid_argument naming the field, its value and the expectation, e.g.
// "RetryBudgetOptions.ratio = -0.5 (expected: 0 <= ratio <= 1000)".
void validate(const RetryBudgetOptions& options);

class RetryBudget {
public:
  // Throws std::invalid_argument for invalid options (see validate()).
  explicit RetryBudget(RetryBudgetOptions options = {});

  RetryBudget(const RetryBudget&) = delete;
  RetryBudget& operator=(const RetryBudget&) = delete;

  // One original request was made: deposits `ratio` tokens. Thread: any.
  void onRequest(std::chrono::nanoseconds now);
  // Spends one token for a retry; false when the budget is exhausted (nothing spent). Thread: any.
  [[nodiscard]] bool tryWithdraw(std::chrono::nanoseconds now);
  // Whole tokens available at `now` (earned + reserve, rounded down). Thread: any.
  [[nodiscard]] std::int64_t available(std::chrono::nanoseconds now);
  // tryWithdraw() calls that returned false, since construction. Thread: any.
  [[nodiscard]] std::uint64_t refusals() const;
  // wheelbeat_retry_budget_tokens (available(now)) and wheelbeat_retry_budget_refusals_total
  // into `out` (core/metrics.h). Thread: any.
  void writeMetrics(core::MetricsWriter& out, std::chrono::nanoseconds now);

  [[nodiscard]] const RetryBudgetOptions& options() const noexcept { return options_; }

  static constexpr int kSlices = 10;

private:
  void advanceLocked(std::chrono::nanoseconds now);

  const RetryBudgetOptions options_;
  const std::int64_t deposit_;      // units per request (1 token = kUnit units)
  const std::int64_t reserveCap_;   // units
  const std::int64_t sliceLength_;  // ns

  mutable std::mutex mutex_;
  std::uint64_t refusals_ = 0;
  bool started_ = false;
  std::chrono::nanoseconds last_{0};
  std::int64_t currentSlice_ = 0;               // floor(last_ / sliceLength_)
  std::array<std::int64_t, kSlices> earned_{};  // units deposited in slice s at earned_[s % 10]
  std::int64_t reserve_ = 0;                    // units
};

}  // namespace wheelbeat::tasks
