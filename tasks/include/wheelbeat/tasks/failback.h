// Failback: nothing asked of a remote service is lost while it is unreachable. What the two
// failbacks share, the policy and its observers:
//
//   FailbackOptions   how failed calls are retried (RetryOptions, retry_policy.h): the retry of
//                     attempt n (from 1) waits the policy's delay n; maxAttempts -1 retries
//                     forever; a refusal (max attempts, deadline, budget, not-retryable) is a
//                     give-up
//   CallResult        the outcome of one asynchronous call, and Completion, its callback
//   FailbackListener  the decisions (retry scheduled, recovered, given up, rejected), and
//   FailbackMetrics   their counters
//
// The failbacks themselves:
//   FailbackInvoker   <wheelbeat/tasks/failback_invoker.h>: Dubbo's FailbackClusterInvoker, a
//                     failed invocation retried in the background on another endpoint
//   FailbackRegistry  <wheelbeat/registry/failback_registry.h> (the registry layer): Dubbo's
//                     FailbackRegistry, registrations and subscriptions kept across outages
#pragma once

#include <wheelbeat/tasks/retry_policy.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace wheelbeat::tasks {

// Plain options (config/ parses JSON into this struct). Defaults are Dubbo's.
struct FailbackOptions {
  // Registry retries: Dubbo's retry period, 5 s fixed, forever (Dubbo's AbstractRetryTask stopped
  // after 3; the rule is "forever by default"). No jitter by default, as in Dubbo.
  RetryOptions registryRetry = defaultRegistryRetry();
  // Dubbo's check=true: a call whose first attempt fails is NOT retried; its failure is reported
  // to the caller's completion (and the call changes no state). false: every failure is retried.
  bool check = true;
  // Invocation failback: Dubbo's `retries` = 3 at a 5 s period, `failbacktasks` = 100.
  RetryOptions invocationRetry = defaultInvocationRetry();
  std::int64_t maxPendingRetries = 100;  // >= 1: invocations held (in flight or waiting)

  [[nodiscard]] static RetryOptions defaultRegistryRetry() {
    RetryOptions o;
    o.backoff = Backoff::Fixed;
    o.initialDelay = std::chrono::seconds(5);
    o.maxDelay = std::chrono::seconds(5);
    o.jitter = Jitter::None;
    o.maxAttempts = -1;
    return o;
  }
  [[nodiscard]] static RetryOptions defaultInvocationRetry() {
    RetryOptions o = defaultRegistryRetry();
    o.maxAttempts = 3;
    return o;
  }
};

// Throws std::invalid_argument naming the first bad field, its value and the expectation, e.g.
// "FailbackOptions.maxPendingRetries = 0 (expected: >= 1)" or
// "FailbackOptions.registryRetry.maxDelay = 1s (expected: >= initialDelay = 5s)".
void validate(const FailbackOptions& options);

// The outcome of one backend call or of a FailbackRegistry call: ok, or the error's name (used
// for RetryOptions::retryOn / ignore, e.g. "disconnected", "timeout") and a message.
struct CallResult {
  bool ok = true;
  std::string error;      // empty when ok
  std::string message;    // human-readable cause, empty when ok
  bool retrying = false;  // FailbackRegistry completions only: failed, a retry is queued

  [[nodiscard]] static CallResult success() { return {}; }
  [[nodiscard]] static CallResult failure(std::string error, std::string message) {
    return {false, std::move(error), std::move(message), false};
  }
};
using Completion = std::function<void(const CallResult&)>;

enum class FailbackOp { Register, Unregister, Subscribe, Unsubscribe, Invoke };
// "register", "unregister", "subscribe", "unsubscribe", "invoke".
[[nodiscard]] std::string_view failbackOpName(FailbackOp op) noexcept;

// Observes failback decisions. Every method is a no-op; override what you need. Called with no
// lock held, on the thread that made the decision (a caller, a backend completion, the wheel);
// an exception it throws is dropped.
class FailbackListener {
public:
  virtual ~FailbackListener() = default;
  // A retry of `op` on `key` (url, service or invocation name) is scheduled after `delay`;
  // `attempt` counts from 1.
  virtual void onRetryScheduled(FailbackOp op, const std::string& key, std::int64_t attempt,
                                std::chrono::nanoseconds delay);
  // A retry succeeded after `attempts` retries; the entry is removed.
  virtual void onRecovered(FailbackOp op, const std::string& key, std::int64_t attempts);
  // The policy refused another retry; the entry is removed. BudgetExhausted included.
  virtual void onGiveUp(FailbackOp op, const std::string& key, GiveUp reason,
                        const CallResult& lastFailure);
  // An invocation was refused because maxPendingRetries are held.
  virtual void onRejected(const std::string& key, std::int64_t pending);
};

struct FailbackMetricsSnapshot {
  std::uint64_t failures = 0;  // failed backend calls / invocations (first try or retry)
  std::uint64_t retriesScheduled = 0;
  std::uint64_t recovered = 0;        // entries ended by a successful retry
  std::uint64_t cancelled = 0;        // entries cancelled by an opposite or repeated call
  std::uint64_t giveUps = 0;          // entries ended by the policy (budget included)
  std::uint64_t budgetExhausted = 0;  // of which the budget was the reason
  std::uint64_t rejected = 0;         // invocations refused (maxPendingRetries)

  friend bool operator==(const FailbackMetricsSnapshot&, const FailbackMetricsSnapshot&) = default;
  [[nodiscard]] std::string toString() const;
};

// Shared counters (relaxed atomics). Thread: any.
struct FailbackMetrics {
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> retriesScheduled{0};
  std::atomic<std::uint64_t> recovered{0};
  std::atomic<std::uint64_t> cancelled{0};
  std::atomic<std::uint64_t> giveUps{0};
  std::atomic<std::uint64_t> budgetExhausted{0};
  std::atomic<std::uint64_t> rejected{0};

  [[nodiscard]] FailbackMetricsSnapshot snapshot() const noexcept;
};

}  // namespace wheelbeat::tasks
