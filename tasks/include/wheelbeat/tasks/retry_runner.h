// RetryRunner: runs an asynchronous operation under a RetryPolicy (RetryOptions) on the shared
// wheel — attempts, backoff with jitter, deadline, budget, per-error rules, cancel — and reports
// the outcome once. The policy is applied by a RetryState (retry_policy.h): the runner adds the
// timing, the in-flight attempt and the final report, not a second backoff.
//
//   RetryRunner payments(timer, cfg.retry("payments"), {.budget = budget});
//   RetryHandle h = payments.run(
//       [](std::int64_t attempt, AttemptDone done) { callService(..., done); },
//       [](const RetryResult& r) { log(retryOutcomeName(r.outcome), r.attempts, r.lastError); });
//
// One run
//   1. run() deposits one request in the budget (RetryBudget::onRequest), arms the deadline (if
//      the policy has one) and calls the operation with attempt 1, on the calling thread.
//   2. The operation reports through its AttemptDone: succeed(), or fail(errorName) with a name of
//      error_names.h (or one of your own). An attempt not completed within attemptTimeout (when
//      > 0) fails with "timeout".
//   3. A failure asks RetryState::next(now, errorName): not retryable (ignore / retryOn),
//      maxAttempts reached, the retry would start after the deadline, or no budget token → the
//      run ends (GaveUp, or Deadline). Otherwise attempt n + 1 starts after the drawn delay, on
//      the wheel thread.
//   4. The deadline (RetryOptions::deadline > 0, counted from run()) ends the run when it passes,
//      whatever is in flight: outcome Deadline. RetryState may grant a retry due exactly at the
//      deadline; the deadline fires first in that tick, so that retry does not run.
//   The final callback gets a RetryResult exactly once: Ok, GaveUp (with the policy's reason),
//   Deadline, Cancelled or TimerUnavailable.
//
// Edge cases
//   - An attempt that completes twice: the second call is ignored. A completion that comes after
//     its attempt ended (attemptTimeout, deadline, cancel, timer gone) is ignored.
//   - An attempt that never completes: with attemptTimeout it fails with "timeout"; with a deadline
//     the run ends there; with neither the run waits until cancel() (or the timer goes away).
//   - An operation that throws: the attempt fails with "exception".
//   - An operation that completes its attempt and keeps running: the next attempt may start (on
//     the wheel thread) before that call returns, so the operation must tolerate that overlap.
//   - The timer is stopped (or refuses a timeout: maxPendingTimeouts) when a retry, the deadline
//     or an attempt timeout must be scheduled: the run ends with TimerUnavailable. A retry waiting
//     on a timer that is stopped never runs; the run ends with TimerUnavailable when the timer
//     destroys its pending tasks (in its destructor), or earlier by cancel().
//
// Threads
//   run(), RetryHandle::cancel() and every query: any thread, also from inside the operation or
//   the final callback. The operation runs on run()'s caller (attempt 1) and on the wheel thread
//   (retries). AttemptDone: any thread, also inside the operation (a retry is never started
//   inside it: it waits at least for the next tick). The final callback runs, with no lock held,
//   on the thread that ended the run: the one that completed the last attempt (Ok, GaveUp,
//   Deadline decided on a failure), the wheel thread (deadline, attempt timeout), the caller of
//   cancel() (Cancelled), run()'s caller (an attempt 1 completed synchronously), or the thread
//   destroying the timer (TimerUnavailable). An exception it throws is logged and dropped.
// Lifetime: a run owns what it needs (its operation, callbacks, state); neither the runner nor
// the handle has to outlive it. The timer must outlive every run started on it, with one
// tolerated exception: a run that only waits on the timer (a retry, the deadline) when the timer
// is destroyed ends there with TimerUnavailable; a run with an attempt in flight must end first
// (complete it or cancel() it), since its end touches the timer.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/retry_budget.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace wheelbeat::tasks {

enum class RetryOutcome : std::uint8_t {
  Ok,                // an attempt succeeded
  GaveUp,            // the policy refused a retry: RetryResult::reason says why
  Deadline,          // the policy's deadline passed (reason GiveUp::Deadline)
  Cancelled,         // RetryHandle::cancel()
  TimerUnavailable,  // the timer was stopped or refused a timeout (maxPendingTimeouts)
};
// "ok", "gave-up", "deadline", "cancelled", "timer-unavailable".
[[nodiscard]] std::string_view retryOutcomeName(RetryOutcome outcome) noexcept;

struct RetryResult {
  RetryOutcome outcome = RetryOutcome::Ok;
  // GaveUp: NotRetryable, MaxAttempts or BudgetExhausted; Deadline: Deadline; otherwise None.
  GiveUp reason = GiveUp::None;
  // Calls of the operation made (attempt 1 included): 1 when the first try succeeded.
  std::int64_t attempts = 0;
  std::string lastError;  // the last failed attempt's error name; "" if none failed
  // From run() to the end of the run, on the timer's clock.
  std::chrono::nanoseconds elapsed{0};
};

namespace detail {
struct RetryRun;
}  // namespace detail

// The completion of one attempt, handed to the operation. Copyable; the first call of succeed()
// or fail() on any copy counts, later ones are ignored. Thread: any.
class AttemptDone {
public:
  void succeed() const;
  // `errorName`: non-empty, e.g. errors::kTimeout; throws std::invalid_argument for "" (and then
  // counts as nothing: the attempt is still open).
  void fail(std::string_view errorName) const;
  // Which attempt this completes (from 1).
  [[nodiscard]] std::int64_t attempt() const noexcept { return attempt_; }

private:
  friend struct detail::RetryRun;
  AttemptDone(std::shared_ptr<detail::RetryRun> run, std::int64_t attempt)
      : run_(std::move(run)), attempt_(attempt) {}
  std::shared_ptr<detail::RetryRun> run_;
  std::int64_t attempt_;
};

// Performs attempt `attempt` (from 1) and calls `done` once, from any thread, now or later.
using RetryOperation = std::function<void(std::int64_t attempt, AttemptDone done)>;
using RetryCallback = std::function<void(const RetryResult& result)>;

// One run, as seen by its starter. Copyable; dropping it does not cancel the run.
class RetryHandle {
public:
  RetryHandle() = default;
  // Ends the run with Cancelled and calls its final callback on this thread, unless it already
  // ended. True only for the call that ended it. Thread: any, also inside the operation.
  bool cancel() const;
  // True once the run ended (its final callback is running or ran). Thread: any.
  [[nodiscard]] bool finished() const noexcept;
  // Calls of the operation so far. Thread: any.
  [[nodiscard]] std::int64_t attempts() const noexcept;

private:
  friend class RetryRunner;
  explicit RetryHandle(std::shared_ptr<detail::RetryRun> run) : run_(std::move(run)) {}
  std::shared_ptr<detail::RetryRun> run_;
};

struct RetryRunnerOptions {
  // Shared by every run of this runner (and any other user of it); nullptr = no budget.
  std::shared_ptr<RetryBudget> budget = nullptr;
  // Seeds the jitter: run number k (from 0) of this runner uses RetryState seed `seed + k`, so a
  // test can predict the delays; 0 = a base from std::random_device (a fleet must not retry in
  // lockstep, so production code leaves it 0).
  std::uint64_t seed = 0;
  // > 0: an attempt not completed within it fails with "timeout" (and its late completion is
  // ignored); 0 = attempts may take any time.
  std::chrono::nanoseconds attemptTimeout{0};
};

// A policy bound to a timer: run() starts independent runs of it. Thread: any (run() may be
// called concurrently). Cheap to keep one per called service.
class RetryRunner {
public:
  // Throws std::invalid_argument for an invalid policy (see validate(RetryOptions)) or
  // attemptTimeout < 0, naming the field, its value and the expectation.
  RetryRunner(core::HashedWheelTimer& timer, RetryOptions policy, RetryRunnerOptions options = {});

  // Starts a run (see the file comment): attempt 1 is called before run() returns. Throws
  // std::invalid_argument for an empty operation or callback, core::TimerStoppedError when the
  // timer is stopped (and then nothing ran).
  RetryHandle run(RetryOperation operation, RetryCallback done);

  [[nodiscard]] const RetryOptions& policy() const noexcept { return policy_; }

private:
  core::HashedWheelTimer& timer_;
  RetryOptions policy_;
  RetryRunnerOptions options_;
  std::atomic<std::uint64_t> runs_{0};
};

}  // namespace wheelbeat::tasks
