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
#include <wheelbeat/tasks/error_names.h>
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
  std::string error;      // empty when ok
  std::string message;    // human-readable cause, empty when ok
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
  virtual void doUnsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                             Completion done) = 0;
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

// One retry entry that a stop() handed back (it never completed).
struct PendingRetry {
  FailbackOp op = FailbackOp::Register;
  std::string key;                           // url or service
  std::shared_ptr<NotifyListener> listener;  // subscribe / unsubscribe only
  std::int64_t attempts = 0;                 // retries already made

  friend bool operator==(const PendingRetry&, const PendingRetry&) = default;
};

// Dubbo's FailbackRegistry, with async backends and give-up.
//
// Keys: a registration is keyed by its url; a subscription by (service, listener). Per key:
//   - A call first updates the wanted state (register adds the url to registered(), unregister
//     removes it; subscribe / unsubscribe likewise for subscribed()), cancels any retry entry of
//     that key (the opposite call's, or the same call's: Dubbo's removeFailedRegistered & co),
//     supersedes any call of that key still in flight (its late result is ignored), then calls
//     the backend.
//   - A failure queues ONE retry entry for the key (attempt 1 after the policy's first delay);
//     each failed retry asks the policy again; a refusal removes the entry and reports the
//     give-up (FailbackListener::onGiveUp, FailbackMetrics::giveUps) — the wanted state stays,
//     so a later recover() tries again.
//   - check (FailbackOptions::check): a call whose FIRST attempt fails is not retried; the call
//     is undone (the wanted state returns to what it was) and its completion gets the failure.
//     Retries and recover() never check.
// recover(): after the backend reconnected, re-sends every registration and subscription of the
// wanted state at the next tick (their pending entries are replaced); failures retry as above.
// Order: the calls of one key reach the backend in the order they were made, retries included
// (a retry of a superseded call is never handed over after the newer call), so the backend's
// final state is the caller's last call. Backends must not block waiting for another thread.
// Completions: a call's `done` (optional) is called exactly once with the first attempt's outcome
// (retrying = true when a retry was queued), on the thread that completed the backend call.
//
// Threads: every member function may be called from any thread, also from a backend completion,
// a listener or a NotifyListener. The state lock is never held while the backend, a listener or
// a completion is called; only the recursive key-order lock is held across the hand-off to the
// backend (hence: backends must not block). The timer must outlive this object; retries scheduled
// on the wheel hold only a weak reference, so destroying the registry (which cancels every entry)
// is safe at any time, also while backend calls are in flight. The registry shares ownership of
// the backend: when calls are in flight at destruction, the last reference may be dropped on the
// thread that completes them, so a backend's destructor must not join that thread.
class FailbackRegistry {
public:
  // Throws std::invalid_argument for invalid options (see validate()). `seed` seeds the jitter of
  // the retry entries (0 = std::random_device). `budget` (may be null) is shared by the entries.
  FailbackRegistry(core::HashedWheelTimer& timer, std::shared_ptr<RegistryBackend> backend,
                   FailbackOptions options = {},
                   std::shared_ptr<FailbackListener> listener = nullptr,
                   std::shared_ptr<FailbackMetrics> metrics = nullptr,
                   std::shared_ptr<RetryBudget> budget = nullptr, std::uint64_t seed = 0);
  ~FailbackRegistry();
  FailbackRegistry(const FailbackRegistry&) = delete;
  FailbackRegistry& operator=(const FailbackRegistry&) = delete;

  void registerUrl(const std::string& url, Completion done = nullptr);
  void unregisterUrl(const std::string& url, Completion done = nullptr);
  // Throws std::invalid_argument if `listener` is null (nothing changes).
  void subscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                 Completion done = nullptr);
  void unsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                   Completion done = nullptr);
  void recover();

  // Cancels every retry entry and returns them (sorted by op, key); later calls are refused
  // with std::logic_error, late backend results are ignored. Called by the destructor.
  std::vector<PendingRetry> stop();

  // The wanted state: registered urls (sorted) and subscriptions (sorted by service).
  [[nodiscard]] std::vector<std::string> registered() const;
  [[nodiscard]] std::vector<std::pair<std::string, std::shared_ptr<NotifyListener>>> subscribed()
      const;
  // Retry entries now queued (waiting on the wheel or with a retry in flight), sorted by op, key.
  [[nodiscard]] std::vector<PendingRetry> pendingRetries() const;
  [[nodiscard]] std::size_t pendingRetryCount() const;

private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The error name given to the completion of an invocation refused because maxPendingRetries
// failed invocations are already held.
// (One of the shared error names: error_names.h.)
inline constexpr std::string_view kFailbackRejected = errors::kFailbackRejected;

// Dubbo's FailbackClusterInvoker. invoke() runs the call at once; if it fails, the invocation is
// held and retried in the background after the policy's delays (FailbackOptions::invocationRetry,
// Dubbo: 3 retries, 5 s apart), each retry selecting an endpoint other than the one that failed
// last (when the selector has another). At most maxPendingRetries failed invocations are held at
// once: a failure beyond that is not held — its completion gets error "failback-rejected" with a
// message naming the limit, FailbackListener::onRejected and FailbackMetrics::rejected see it.
// Calls that have not failed (first attempts in flight) do not count against the limit.
//
// Threads: any, as FailbackRegistry; a Selector or a Call is called with no lock held, from the
// caller's thread (first attempt) or the wheel thread (retries). The timer must outlive this
// object; the destructor calls stop().
class FailbackInvoker {
public:
  // Returns the endpoint for the next attempt among the current candidates, preferring one other
  // than `avoid` (empty on the first attempt); nullopt when there is none (the attempt fails with
  // error "no-endpoint"). pickEndpoint() below implements the rule over a list.
  using Selector = std::function<std::optional<std::string>(const std::string& avoid)>;
  // Performs the call on `endpoint`; must call `done` exactly once, from any thread.
  using Call = std::function<void(const std::string& endpoint, Completion done)>;

  // An invocation handed back by stop(): it was waiting for a retry that never ran.
  struct Stopped {
    std::string name;
    std::int64_t attempts = 0;  // retries already made
    std::string lastEndpoint;   // the endpoint that failed last
    Selector select;
    Call call;
    Completion done;
  };

  // Throws std::invalid_argument for invalid options. `seed`, `budget`: as FailbackRegistry.
  explicit FailbackInvoker(core::HashedWheelTimer& timer, FailbackOptions options = {},
                           std::shared_ptr<FailbackListener> listener = nullptr,
                           std::shared_ptr<FailbackMetrics> metrics = nullptr,
                           std::shared_ptr<RetryBudget> budget = nullptr, std::uint64_t seed = 0);
  ~FailbackInvoker();
  FailbackInvoker(const FailbackInvoker&) = delete;
  FailbackInvoker& operator=(const FailbackInvoker&) = delete;

  // Starts an invocation named `name` (for logs, listener and metrics). `done` (optional) gets
  // the final outcome once: ok (first attempt or a retry), or the last failure after a give-up or
  // a rejection. Throws std::invalid_argument for an empty `select` or `call`, std::logic_error
  // after stop().
  void invoke(std::string name, Selector select, Call call, Completion done = nullptr);

  // Failed invocations held now (waiting for a retry or with a retry in flight).
  [[nodiscard]] std::int64_t pendingRetries() const;

  // Cancels the waiting retries and hands those invocations back (their `done` is not called).
  // Attempts in flight at that moment finish: their `done` gets their outcome (ok, or the failure,
  // not retried). Later invoke() calls throw std::logic_error.
  std::vector<Stopped> stop();

private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The endpoint for attempt number `attempt` (any counter: round-robin over `candidates`),
// skipping `avoid` when another candidate exists. nullopt when `candidates` is empty.
[[nodiscard]] std::optional<std::string> pickEndpoint(const std::vector<std::string>& candidates,
                                                      std::string_view avoid,
                                                      std::uint64_t attempt);

}  // namespace wheelbeat::tasks
