// FailbackInvoker: Dubbo's FailbackClusterInvoker — a failed invocation is retried in the
// background, each retry avoiding the endpoint that failed last, with at most maxPendingRetries
// invocations held at once (beyond: rejected, clear error). Its options, outcome type and
// observers are failback's (failback.h).
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/error_names.h>
#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/retry_budget.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::tasks {

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
// Threads: every member function may be called from any thread, also from a Call's completion
// or a listener; a Selector or a Call is called with no lock held, from the
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
    std::int64_t attempts = 0;  // retries scheduled, the one it was waiting for included
    std::string lastEndpoint;   // the endpoint that failed last
    Selector select;
    Call call;
    Completion done;
  };

  // Throws std::invalid_argument for invalid options. `seed` seeds the jitter of the
  // retries (0 = std::random_device); `budget` (may be null) is shared by them.
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

  // Takes over an invocation whose first attempt already failed elsewhere (a cluster client's
  // failback mode): exactly as if invoke()'s first attempt had ended with `failure` on
  // `failedEndpoint` — held for its retries (or rejected at maxPendingRetries, or given up when
  // the policy does not retry `failure.error`), `done` called once with the final outcome.
  // Throws as invoke() does, and std::invalid_argument for a `failure` that is ok.
  void adopt(std::string name, std::string failedEndpoint, const CallResult& failure,
             Selector select, Call call, Completion done = nullptr);

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
