// Retry policy: when to retry a failed operation and how long to wait first. One policy type
// serves call retries, failback (registry re-registration) and reconnects.
//
// RetryOptions is the plain description (config/ fills it from JSON); RetryState applies it to
// one operation: each failure asks next(now, errorName) for a Decision — retry after `delay`, or
// give up and why.
//
// Backoff (b = the capped backoff of retry number n, counted from 1; see cappedBackoff())
//   Fixed        b = initialDelay.
//   Exponential  b = min(maxDelay, initialDelay × multiplier^(n-1)), computed in double and
//                rounded to the nanosecond: 1s, 1.6s, 2.56s, … up to maxDelay. A huge n (even
//                INT64_MAX) saturates at maxDelay; it never overflows. multiplier 1 = Fixed.
// Jitter (AWS architecture blog, "Exponential Backoff and Jitter"), applied to b:
//   None          b.
//   Full          U[0, b].
//   Equal         b/2 + U[0, b - b/2] (b/2 rounded down, so the result stays in [b/2, b]).
//   Decorrelated  min(maxDelay, U[initialDelay, 3 × prev]), prev = the previous delay of this
//                 RetryState (initialDelay at the start and after reset()). Its growth is its own:
//                 `backoff` and `multiplier` are not used.
//   Proportional  min(maxDelay, b × U[1 - jitterRatio, 1 + jitterRatio]) (gRPC's ±20 %).
//   Every delay is in [0, maxDelay]; U[..] is uniform over whole nanoseconds (Full, Equal,
//   Decorrelated) or over doubles with 53 random bits (Proportional).
//
// Randomness
//   Each RetryState owns a SmallRng (xoshiro256**, 32 bytes: small_rng.h) seeded with the seed it
//   was given and draws from it without std::*_distribution (whose output differs between
//   standard libraries), so the same seed and the same calls give the same delays on every
//   platform. Give each operation its own
//   seed (e.g. from std::random_device) so a fleet does not retry in lockstep.
#pragma once

#include <wheelbeat/tasks/retry_budget.h>
#include <wheelbeat/tasks/small_rng.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::tasks {

enum class Backoff { Fixed, Exponential };
enum class Jitter { None, Full, Equal, Decorrelated, Proportional };

// Plain options (config/ parses JSON into this struct). The defaults are gRPC's connection
// backoff: 1 s initial, × 1.6, ±20 %, 120 s cap, retrying forever.
struct RetryOptions {
  Backoff backoff = Backoff::Exponential;
  std::chrono::nanoseconds initialDelay = std::chrono::seconds(1);  // > 0
  double multiplier = 1.6;                                          // >= 1, finite (Exponential)
  std::chrono::nanoseconds maxDelay = std::chrono::seconds(120);    // >= initialDelay
  Jitter jitter = Jitter::Proportional;
  double jitterRatio = 0.2;  // Proportional only: 0 <= jitterRatio <= 1
  // Retries allowed (the first try is not a retry): -1 forever, 0 none, n > 0 at most n.
  std::int64_t maxAttempts = -1;
  // Overall time budget from the start of the operation (RetryState's start or reset()) across
  // all attempts; 0 = none, otherwise > 0.
  std::chrono::nanoseconds deadline = std::chrono::nanoseconds(0);
  // Error names retried (exact, case-sensitive match); empty = every error not in `ignore`.
  std::vector<std::string> retryOn;
  // Error names never retried. Wins over retryOn: a name in both lists is not retried.
  std::vector<std::string> ignore;
};

// Throws std::invalid_argument naming the first bad field, its value and the expectation, e.g.
// "RetryOptions.maxDelay = 500ms (expected: >= initialDelay = 1s)". Rules: initialDelay > 0;
// multiplier finite and >= 1; maxDelay >= initialDelay; jitterRatio in [0, 1]; maxAttempts >= -1;
// deadline >= 0; backoff and jitter one of their enumerators; no empty name in retryOn / ignore.
void validate(const RetryOptions& options);

// The backoff of retry number `attempt` (from 1) before jitter: see "Backoff" above. Attempts
// < 1 count as 1. `options` must be valid. Thread: any.
[[nodiscard]] std::chrono::nanoseconds cappedBackoff(const RetryOptions& options,
                                                     std::int64_t attempt) noexcept;

enum class GiveUp {
  None,             // the retry is granted
  NotRetryable,     // the error is in `ignore`, or `retryOn` is non-empty and does not name it
  MaxAttempts,      // maxAttempts retries were already granted (always, for maxAttempts 0)
  Deadline,         // now + delay would fall after start + deadline
  BudgetExhausted,  // the shared RetryBudget had no token
};

// "none", "not-retryable", "max-attempts", "deadline", "budget-exhausted" (for logs and metrics).
// Not named toString: doctest would pick a free toString up by ADL and break CHECK on enums.
[[nodiscard]] std::string_view giveUpName(GiveUp reason) noexcept;

struct Decision {
  bool retry = false;                 // true: retry after `delay`
  std::chrono::nanoseconds delay{0};  // wait before the retry; 0 when refused
  // Number of the retry decided on, from 1 (= attempts() + 1 before the call), also when refused.
  std::int64_t attempt = 0;
  GiveUp reason = GiveUp::None;  // why not; None when retry is true
};

// The retries of one operation. NOT thread-safe: one owner (e.g. the task that retries) calls it;
// only the shared RetryBudget is touched by several states at once.
class RetryState {
public:
  // `start` is the operation's start on the caller's monotonic clock (the deadline counts from
  // it); every `now` passed later must come from the same clock. `budget` may be shared by any
  // number of states (and threads); nullptr = no budget. Throws std::invalid_argument for invalid
  // options (see validate()).
  RetryState(const RetryOptions& options, std::chrono::nanoseconds start, std::uint64_t seed,
             std::shared_ptr<RetryBudget> budget = nullptr);

  // The operation failed with `errorName` at `now`: decide on retry number attempts() + 1.
  // Checks, in this order, the first failing one giving the reason:
  //   1. ignore / retryOn                                        → NotRetryable
  //   2. maxAttempts (0: never retry; -1: no limit)              → MaxAttempts
  //   3. the delay is drawn (see the file comment)
  //   4. deadline: a retry whose time now + delay would fall after start + deadline is refused
  //      (exactly at start + deadline is allowed); deadline 0 never refuses  → Deadline
  //   5. the budget: one token is withdrawn, only here, when everything else allows the retry
  //                                                              → BudgetExhausted
  // A granted retry counts as an attempt. A refusal changes no count and spends no token (a
  // later call may succeed, e.g. once the budget refilled), but the random draw of step 3, if
  // made, is consumed. Sums saturate: a huge now or deadline never overflows.
  [[nodiscard]] Decision next(std::chrono::nanoseconds now, std::string_view errorName);

  // The operation succeeded (or starts over) at `now`: the attempt count returns to 0, the
  // deadline counts from `now`, Decorrelated's previous delay returns to initialDelay. The random
  // sequence continues (it is not re-seeded).
  void reset(std::chrono::nanoseconds now);

  // Retries granted since the start or the last reset().
  [[nodiscard]] std::int64_t attempts() const noexcept { return attempts_; }
  [[nodiscard]] std::chrono::nanoseconds start() const noexcept { return start_; }
  [[nodiscard]] const RetryOptions& options() const noexcept { return options_; }
  [[nodiscard]] const std::shared_ptr<RetryBudget>& budget() const noexcept { return budget_; }

private:
  [[nodiscard]] bool retryable(std::string_view errorName) const;
  [[nodiscard]] std::chrono::nanoseconds drawDelay(std::int64_t attempt);

  RetryOptions options_;
  std::shared_ptr<RetryBudget> budget_;
  SmallRng rng_;
  std::chrono::nanoseconds start_;
  std::chrono::nanoseconds prev_;  // Decorrelated: the last granted delay
  std::int64_t attempts_ = 0;
};

}  // namespace wheelbeat::tasks
