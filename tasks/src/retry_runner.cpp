// RetryRunner: see retry_runner.h. One RetryRun per run() holds the whole state under one mutex;
// user code (the operation, the final callback) and newTimeout() are never called with it held.
//
// Each timeout the run arms (the retry, the deadline, an attempt's timeout) carries a Due guard:
// run, it hands its event to the run; destroyed without running while it is still the run's live
// timeout — the timer was stopped or refused it, or the timer is being destroyed — it ends the
// run with TimerUnavailable. That is what makes the final callback exactly-once even when the
// timer goes away under a waiting retry. That path must not touch the timer (it may be inside
// its destructor): arm() does the cleanup when newTimeout() refused the task.
#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/tasks/error_names.h>
#include <wheelbeat/tasks/retry_runner.h>

#include <mutex>
#include <random>
#include <stdexcept>
#include <utility>

namespace wheelbeat::tasks {

using std::chrono::nanoseconds;

std::string_view retryOutcomeName(RetryOutcome outcome) noexcept {
  switch (outcome) {
    case RetryOutcome::Ok: return "ok";
    case RetryOutcome::GaveUp: return "gave-up";
    case RetryOutcome::Deadline: return "deadline";
    case RetryOutcome::Cancelled: return "cancelled";
    case RetryOutcome::TimerUnavailable: return "timer-unavailable";
  }
  return "unknown";
}

namespace detail {

enum class DueKind : std::uint8_t { Retry, Deadline, AttemptTimeout };

struct RetryRun : std::enable_shared_from_this<RetryRun> {
  enum class Phase : std::uint8_t { InFlight, Waiting, Finished };

  RetryRun(core::HashedWheelTimer& t, const RetryOptions& policy, std::uint64_t seed,
           std::shared_ptr<RetryBudget> budget, nanoseconds attemptLimit, RetryOperation op,
           RetryCallback cb)
      : timer(t),
        operation(std::move(op)),
        done(std::move(cb)),
        attemptTimeout(attemptLimit),
        start(t.now()),
        state(policy, start, seed, std::move(budget)) {}

  void begin();
  void launch(std::int64_t n, bool fromRetry);
  void complete(std::int64_t n, std::string_view error);
  bool cancel();
  void fire(DueKind kind, std::int64_t n);
  void dropped(DueKind kind, std::int64_t n);

  // Ends the run under the lock; the returned callback is to be delivered once unlocked.
  // `timerUsable` false: the timer may be inside its destructor (not read, nothing cancelled).
  RetryCallback finishLocked(RetryOutcome outcome, GiveUp reason, RetryResult& result,
                             bool timerUsable = true);
  [[nodiscard]] bool liveLocked(DueKind kind, std::int64_t n) const;
  void arm(DueKind kind, std::int64_t n, nanoseconds delay);
  static void deliver(const RetryCallback& cb, const RetryResult& result) noexcept;

  core::HashedWheelTimer& timer;
  const RetryOperation operation;  // kept until the run is destroyed: it may be running
  RetryCallback done;              // moved out by finishLocked()
  const nanoseconds attemptTimeout;
  const nanoseconds start;

  std::mutex mutex;
  RetryState state;
  Phase phase = Phase::InFlight;
  std::int64_t attempt = 0;  // the attempt in flight, or the last one made
  nanoseconds lastEvent{0};  // the timer's time at the run's last event (elapsed without timer)
  std::string lastError;
  core::Timeout retryTimer;
  core::Timeout deadlineTimer;
  core::Timeout attemptTimer;
  std::atomic<std::int64_t> attemptsMade{0};
  std::atomic<bool> ended{false};
};

namespace {

// The body of every timeout a run arms; see the file comment.
struct Due {
  std::shared_ptr<RetryRun> run;
  DueKind kind;
  std::int64_t n;

  Due(std::shared_ptr<RetryRun> r, DueKind k, std::int64_t attempt)
      : run(std::move(r)), kind(k), n(attempt) {}
  Due(Due&&) noexcept = default;
  Due& operator=(Due&&) = delete;
  Due(const Due&) = delete;
  Due& operator=(const Due&) = delete;
  ~Due() {
    if (run) run->dropped(kind, n);
  }
  void operator()() {
    const std::shared_ptr<RetryRun> r = std::move(run);  // ran: the destructor has nothing to do
    r->fire(kind, n);
  }
};

}  // namespace

void RetryRun::begin() {
  if (state.budget()) state.budget()->onRequest(start);
  if (state.options().deadline > nanoseconds(0)) {
    arm(DueKind::Deadline, 0, state.options().deadline);
  }
  launch(1, false);
}

void RetryRun::launch(std::int64_t n, bool fromRetry) {
  {
    const std::lock_guard lock(mutex);
    if (phase == Phase::Finished) return;
    if (fromRetry && (phase != Phase::Waiting || attempt != n - 1)) return;
    phase = Phase::InFlight;
    attempt = n;
    attemptsMade.store(n, std::memory_order_release);
    lastEvent = timer.now();
  }
  const nanoseconds called = timer.now();
  try {
    operation(n, AttemptDone(shared_from_this(), n));
  } catch (...) {
    complete(n, errors::kException);
  }
  if (attemptTimeout > nanoseconds(0)) {
    // Armed after the call so that a synchronous completion needs no timeout at all; the limit
    // still counts from the call.
    {
      const std::lock_guard lock(mutex);
      if (phase != Phase::InFlight || attempt != n) return;
    }
    arm(DueKind::AttemptTimeout, n, attemptTimeout - (timer.now() - called));
  }
}

void RetryRun::complete(std::int64_t n, std::string_view error) {
  RetryCallback cb;
  RetryResult result;
  nanoseconds delay{0};
  {
    const std::lock_guard lock(mutex);
    if (phase != Phase::InFlight || attempt != n) return;  // a second or a late completion
    attemptTimer.cancel();
    lastEvent = timer.now();
    if (error.empty()) {
      cb = finishLocked(RetryOutcome::Ok, GiveUp::None, result);
    } else {
      lastError = std::string(error);
      const Decision d = state.next(lastEvent, error);
      if (d.retry) {
        phase = Phase::Waiting;
        delay = d.delay;
      } else {
        const auto outcome =
            d.reason == GiveUp::Deadline ? RetryOutcome::Deadline : RetryOutcome::GaveUp;
        cb = finishLocked(outcome, d.reason, result);
      }
    }
  }
  if (cb) {
    deliver(cb, result);
  } else {
    arm(DueKind::Retry, n + 1, delay);
  }
}

bool RetryRun::cancel() {
  RetryCallback cb;
  RetryResult result;
  {
    const std::lock_guard lock(mutex);
    if (phase == Phase::Finished) return false;
    cb = finishLocked(RetryOutcome::Cancelled, GiveUp::None, result);
  }
  deliver(cb, result);
  return true;
}

void RetryRun::fire(DueKind kind, std::int64_t n) {
  switch (kind) {
    case DueKind::Retry: launch(n, true); return;
    case DueKind::AttemptTimeout: complete(n, errors::kTimeout); return;
    case DueKind::Deadline: break;
  }
  RetryCallback cb;
  RetryResult result;
  {
    const std::lock_guard lock(mutex);
    if (phase == Phase::Finished) return;
    cb = finishLocked(RetryOutcome::Deadline, GiveUp::Deadline, result);
  }
  deliver(cb, result);
}

bool RetryRun::liveLocked(DueKind kind, std::int64_t n) const {
  switch (kind) {
    case DueKind::Retry: return phase == Phase::Waiting && attempt == n - 1;
    case DueKind::AttemptTimeout: return phase == Phase::InFlight && attempt == n;
    case DueKind::Deadline: return phase != Phase::Finished;
  }
  return false;
}

void RetryRun::dropped(DueKind kind, std::int64_t n) {
  RetryCallback cb;
  RetryResult result;
  {
    const std::lock_guard lock(mutex);
    if (!liveLocked(kind, n)) return;  // cancelled by the run itself, or stale
    cb = finishLocked(RetryOutcome::TimerUnavailable, GiveUp::None, result, false);
  }
  deliver(cb, result);
}

RetryCallback RetryRun::finishLocked(RetryOutcome outcome, GiveUp reason, RetryResult& result,
                                     bool timerUsable) {
  phase = Phase::Finished;
  ended.store(true, std::memory_order_release);
  if (timerUsable) {
    retryTimer.cancel();
    deadlineTimer.cancel();
    attemptTimer.cancel();
    lastEvent = timer.now();
  }
  result.outcome = outcome;
  result.reason = reason;
  result.attempts = attempt;
  result.lastError = lastError;
  result.elapsed = lastEvent - start;
  return std::move(done);
}

void RetryRun::arm(DueKind kind, std::int64_t n, nanoseconds delay) {
  core::Timeout timeout;
  bool refused = false;
  try {
    timeout = timer.newTimeout(Due(shared_from_this(), kind, n), delay);
  } catch (const core::TimerStoppedError&) {
    refused = true;
  } catch (const core::RejectedTimeoutError&) {
    refused = true;
  }
  const std::lock_guard lock(mutex);
  if (refused) {
    // The refused task's Due ended the run (TimerUnavailable) without touching the timer: free
    // what the run still holds on it (e.g. the deadline, when the timer is full).
    retryTimer.cancel();
    deadlineTimer.cancel();
    attemptTimer.cancel();
    return;
  }
  if (!liveLocked(kind, n)) {
    // Its moment passed while it was being scheduled (the run ended, the attempt completed, the
    // retry already ran): a handle kept now could overwrite a newer one.
    timeout.cancel();
    return;
  }
  switch (kind) {
    case DueKind::Retry: retryTimer = timeout; break;
    case DueKind::Deadline: deadlineTimer = timeout; break;
    case DueKind::AttemptTimeout: attemptTimer = timeout; break;
  }
}

void RetryRun::deliver(const RetryCallback& cb, const RetryResult& result) noexcept {
  try {
    cb(result);
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "wheelbeat: a retry run's final callback threw: {}", e.what());
  } catch (...) {
    core::log(core::LogLevel::Error, "wheelbeat: a retry run's final callback threw");
  }
}

}  // namespace detail

// --- public face ---------------------------------------------------------------------------------

void AttemptDone::succeed() const { run_->complete(attempt_, {}); }

void AttemptDone::fail(std::string_view errorName) const {
  if (errorName.empty()) {
    throw std::invalid_argument("AttemptDone::fail: errorName = \"\" (expected: a non-empty name)");
  }
  run_->complete(attempt_, errorName);
}

bool RetryHandle::cancel() const { return run_ && run_->cancel(); }

bool RetryHandle::finished() const noexcept {
  return run_ && run_->ended.load(std::memory_order_acquire);
}

std::int64_t RetryHandle::attempts() const noexcept {
  return run_ ? run_->attemptsMade.load(std::memory_order_acquire) : 0;
}

namespace {

RetryOptions validPolicy(RetryOptions policy, const RetryRunnerOptions& options) {
  validate(policy);
  if (options.attemptTimeout < nanoseconds(0)) {
    throw std::invalid_argument(
        fmt::format("RetryRunnerOptions.attemptTimeout = {} (expected: 0 (none) or > 0)",
                    core::formatDurationExact(options.attemptTimeout)));
  }
  return policy;
}

std::uint64_t seedBase(std::uint64_t seed) {
  while (seed == 0) {
    std::random_device device;
    seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }
  return seed;
}

}  // namespace

RetryRunner::RetryRunner(core::HashedWheelTimer& timer, RetryOptions policy,
                         RetryRunnerOptions options)
    : timer_(timer),
      policy_(validPolicy(std::move(policy), options)),
      options_(std::move(options)) {
  options_.seed = seedBase(options_.seed);
}

RetryHandle RetryRunner::run(RetryOperation operation, RetryCallback done) {
  if (!operation) throw std::invalid_argument("RetryRunner::run: operation = empty");
  if (!done) throw std::invalid_argument("RetryRunner::run: done = empty");
  if (timer_.isStopped()) throw core::TimerStoppedError();
  const std::uint64_t seed = options_.seed + runs_.fetch_add(1, std::memory_order_relaxed);
  auto run = std::make_shared<detail::RetryRun>(timer_, policy_, seed, options_.budget,
                                                options_.attemptTimeout, std::move(operation),
                                                std::move(done));
  run->begin();
  return RetryHandle(std::move(run));
}

}  // namespace wheelbeat::tasks
