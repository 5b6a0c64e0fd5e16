// Failback: nothing asked of a registry is lost while it is unreachable, and a failed call can
// be delivered in the background. Two parts, both retrying on the shared wheel:
//
//   FailbackRegistry  Dubbo's FailbackRegistry over a RegistryBackend (register / unregister /
//                     subscribe / unsubscribe). A failed call queues one retry entry for its key;
//                     the opposite call (and the same call again) cancels it; entries end on
//                     success, or on give-up — removed and reported, unlike Dubbo, which kept
//                     them forever; recover() re-sends everything after a registry reconnect.
//   FailbackInvoker   Dubbo's FailbackClusterInvoker: a failed invocation is retried in the
//                     background, each retry avoiding the endpoint that failed last, with at most
//                     maxPendingRetries invocations held at once (beyond: rejected, clear error).
//
// Time and retries follow a RetryOptions (retry_policy.h): the retry of attempt n (from 1) waits
// the policy's delay n; maxAttempts -1 retries forever; a refusal (max attempts, deadline, budget,
// not-retryable) is a give-up.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/tasks/retry_budget.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  std::string error;    // empty when ok
  std::string message;  // human-readable cause, empty when ok
  bool retrying = false;  // FailbackRegistry completions only: failed, a retry is queued

  [[nodiscard]] static CallResult success() { return {}; }
  [[nodiscard]] static CallResult failure(std::string error, std::string message) {
    return {false, std::move(error), std::move(message), false};
  }
};
using Completion = std::function<void(const CallResult&)>;

// Receives the provider list of a subscribed service each time it changes (and once after each
// successful subscribe). Thread: whatever thread the backend notifies on; keep it short.
class NotifyListener {
public:
  virtual ~NotifyListener() = default;
  virtual void notify(const std::string& service, const std::vector<std::string>& providers) = 0;
};

// A registry engine (embedded, Redis, a test fake). Every call is asynchronous: it must call
// `done` exactly once, from any thread (possibly before returning); a call that throws counts as
// a failure with error "exception". Calls for one backend may come from several threads.
class RegistryBackend {
public:
  virtual ~RegistryBackend() = default;
  virtual void doRegister(const std::string& url, Completion done) = 0;
  virtual void doUnregister(const std::string& url, Completion done) = 0;
  virtual void doSubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                           Completion done) = 0;
  virtual void doUnsubscribe(const std::string& service,
                             std::shared_ptr<NotifyListener> listener, Completion done) = 0;
};

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
  std::uint64_t failures = 0;         // failed backend calls / invocations (first try or retry)
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
