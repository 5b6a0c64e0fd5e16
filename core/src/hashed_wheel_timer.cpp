// HashedWheelTimer: construction, the producer side (newTimeout, cancel) and the
// lifecycle (start, stop). The wheel thread's side is in timer_worker.cpp.
#include "timer_impl.h"
#include "wheel_options.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>

#include <fmt/format.h>

namespace wheelbeat::core {
namespace {

using detail::Entry;
using detail::kCancelled;
using detail::kInSubmit;
using detail::kMinTickNs;
using detail::kPending;
using detail::stateWord;
using detail::wheelBits;

std::atomic<std::int64_t> gInstances{0};
std::atomic<bool> gTooManyWarned{false};

// Deadlines saturate this far after start (~73 years), which keeps tick numbers below 2^42.
constexpr std::int64_t kMaxDeadlineOffsetNs = std::numeric_limits<std::int64_t>::max() / 4;

std::int64_t usedTickNs(std::chrono::nanoseconds tick) {
  if (tick.count() < kMinTickNs) {
    log(LogLevel::Warn, "HashedWheelTimer: tickDuration = {} is below the 1ms minimum; using 1ms",
        formatDurationExact(tick));
    return kMinTickNs;
  }
  return tick.count();
}

const WheelOptions& checked(const WheelOptions& o) {
  validate(o);
  return o;
}

}  // namespace

// ---- HashedWheelTimer -------------------------------------------------------------------------

HashedWheelTimer::HashedWheelTimer(WheelOptions options, TimerHooks hooks)
    : impl_(std::make_unique<Impl>(*this, options, std::move(hooks))) {
  if (gInstances.fetch_add(1) + 1 > kInstanceCountLimit && !gTooManyWarned.exchange(true)) {
    log(LogLevel::Warn,
        "more than {} HashedWheelTimer instances exist: HashedWheelTimer is a shared resource; "
        "create one per process and share it (this warning is logged once)",
        kInstanceCountLimit);
  }
}

HashedWheelTimer::~HashedWheelTimer() {
  users_.checkNoneLeft("HashedWheelTimer");
  impl_.reset();
  gInstances.fetch_sub(1);
}

Timeout HashedWheelTimer::newTimeout(TimerTask&& task, std::chrono::nanoseconds delay) {
  return impl_->newTimeout(std::move(task), delay);
}
Timeout HashedWheelTimer::tryRearm(const Timeout& running, std::chrono::nanoseconds delay) {
  if (running.timer_ != this) return Timeout{};
  return impl_->tryRearm(running.index_, running.generation_, delay);
}
void HashedWheelTimer::start() { impl_->start(); }
std::vector<Timeout> HashedWheelTimer::stop() { return impl_->stop(); }
bool HashedWheelTimer::isStopped() const noexcept { return impl_->isStopped(); }
std::size_t HashedWheelTimer::advance() { return impl_->advance(); }
std::uint64_t HashedWheelTimer::pendingTimeouts() const noexcept { return impl_->pending(); }
TimerMetrics HashedWheelTimer::metrics() const { return impl_->metrics(); }
void HashedWheelTimer::writeMetrics(MetricsWriter& out) const { impl_->writeMetrics(out); }
std::chrono::nanoseconds HashedWheelTimer::now() const noexcept {
  return std::chrono::nanoseconds(impl_->now());
}
std::chrono::nanoseconds HashedWheelTimer::nextTickTime() const noexcept {
  return std::chrono::nanoseconds(impl_->nextTickNs());
}
Drive HashedWheelTimer::drive() const noexcept { return impl_->drive(); }
std::chrono::nanoseconds HashedWheelTimer::tickDuration() const noexcept {
  return std::chrono::nanoseconds(impl_->tickNs());
}
std::int64_t HashedWheelTimer::ticksPerWheel() const noexcept { return impl_->ticksPerWheel(); }
std::int64_t HashedWheelTimer::instanceCount() noexcept { return gInstances.load(); }

// ---- construction -----------------------------------------------------------------------------

HashedWheelTimer::Impl::Impl(HashedWheelTimer& owner, WheelOptions options, TimerHooks hooks)
    : owner_(owner),
      tickNs_(usedTickNs(checked(options).tickDuration)),
      wheelBits_(wheelBits(options.ticksPerWheel)),
      maxPending_(options.maxPendingTimeouts),
      hooks_(std::move(hooks)),
      clock_(hooks_.clock.get()),
      pool_(std::make_shared<detail::EntryPool>()),
      errors_(std::make_shared<detail::TaskErrorReporter>(hooks_.onTaskError)),
      wheel_(*pool_, wheelBits_) {}

HashedWheelTimer::Impl::~Impl() {
  if (detail::tlRunningTimer == this) {
    log(LogLevel::Error, "HashedWheelTimer destroyed from inside one of its own tasks");
    std::terminate();  // the worker cannot join itself; continuing would corrupt memory
  }
  if (!isStopped()) {
    try {
      stop();  // cannot throw logic_error here (checked above); bad_alloc for the result can
    } catch (const std::exception& error) {
      log(LogLevel::Error, "HashedWheelTimer: stop() during destruction failed: {}", error.what());
      lifecycle_.store(kStopped);
    }
  }
  if (worker_.joinable()) worker_.join();
  // Every task still held (pending at stop, handed back by stop, lost to a stop race) dies here.
  pool_->forEachEntry([](Entry& e) { e.task.reset(); });
}

// ---- producer side ----------------------------------------------------------------------------

Timeout HashedWheelTimer::Impl::newTimeout(TimerTask&& task, std::chrono::nanoseconds delay) {
  if (!task)
    throw std::invalid_argument(
        "HashedWheelTimer::newTimeout: task is empty (expected: a callable)");
  if (lifecycle_.load(std::memory_order_acquire) != kStarted) start();
  reservePending();
  std::uint32_t index = 0;
  try {
    index = pool_->allocate();
  } catch (const std::length_error& capacity) {
    releaseLimit();
    rejected_.fetch_add(1, std::memory_order_relaxed);
    throw RejectedTimeoutError(capacity.what());
  } catch (...) {
    releaseLimit();
    throw;
  }
  Entry& e = at(index);
  const std::uint32_t gen = detail::genOf(e.state.load(std::memory_order_relaxed));
  const std::int64_t deadline = deadlineFor(delay);
  e.task = std::move(task);
  e.deadline = deadline;
  e.where = kInSubmit;
  e.state.store(stateWord(gen, kPending), std::memory_order_relaxed);
  pushSubmission(index);  // publishes the entry; from here on the wheel thread may free it
  wakeIfEarlier(deadline);
  if (lifecycle_.load() != kStarted) {
    Timeout raced = settleAfterStopRace(index, gen);
    if (!raced) {
      task = std::move(at(index).task);  // give the task back: a refused call loses nothing
      throw TimerStoppedError();
    }
    return raced;
  }
  return Timeout(&owner_, index, gen);
}

Timeout HashedWheelTimer::Impl::tryRearm(std::uint32_t index, std::uint32_t gen,
                                         std::chrono::nanoseconds delay) {
  detail::RunningEntry& running = detail::tlRunningEntry;
  if (running.timer != this || running.index != index || running.gen != gen || running.rearmed)
    return Timeout{};
  if (lifecycle_.load(std::memory_order_acquire) != kStarted) throw TimerStoppedError();
  reservePending();
  // What freeEntry() and newTimeout() do, minus the pool and the task: the run's outcome is
  // recorded for its handle, the entry takes the next generation and is submitted again. The
  // wheel thread (this one) owns the entry until the task returns: runOne() sees `rearmed` and
  // does not free it.
  Entry& e = at(index);
  const std::uint32_t history = e.history.load(std::memory_order_relaxed);
  e.history.store(history & ~(1u << (gen & 31)), std::memory_order_release);
  const std::uint32_t next = (gen + 1) & detail::kGenMask;
  const std::int64_t deadline = deadlineFor(delay);
  e.deadline = deadline;
  e.where = kInSubmit;
  e.state.store(stateWord(next, kPending), std::memory_order_release);
  running.rearmed = true;
  pushSubmission(index);
  wakeIfEarlier(deadline);
  if (lifecycle_.load() != kStarted) {
    // Withdrawn, the entry stays in the submission stack, where stop()'s drain detaches it.
    Timeout raced = settleAfterStopRace(index, next);
    if (!raced) throw TimerStoppedError();
    return raced;
  }
  return Timeout(&owner_, index, next);
}

void HashedWheelTimer::Impl::reservePending() {
  if (maxPending_ <= 0) return;  // counted by pushSubmission()
  std::int64_t current = limitCount_.load(std::memory_order_relaxed);
  do {
    if (current >= maxPending_) {
      rejected_.fetch_add(1, std::memory_order_relaxed);
      throw RejectedTimeoutError(
          fmt::format("HashedWheelTimer::newTimeout rejected: pending timeouts = {} (expected: < "
                      "maxPendingTimeouts = {})",
                      current, maxPending_));
    }
  } while (!limitCount_.compare_exchange_weak(current, current + 1, std::memory_order_relaxed));
}

std::int64_t HashedWheelTimer::Impl::deadlineFor(std::chrono::nanoseconds delay) const noexcept {
  // Saturate, never wrap: at ~73 years after start, and below the clock's own maximum (a clock
  // may start late in its range).
  const std::int64_t cap =
      std::min(kMaxDeadlineOffsetNs, std::numeric_limits<std::int64_t>::max() - startNs_);
  const std::int64_t sinceStart = std::min(scheduleNow() - startNs_, cap);
  const std::int64_t d = std::max<std::int64_t>(delay.count(), 0);
  const std::int64_t offset = d >= cap - sinceStart ? cap : sinceStart + d;
  return startNs_ + offset;
}

void HashedWheelTimer::Impl::pushSubmission(std::uint32_t index) noexcept {
  std::uint32_t& link = pool_->next(index);
  std::uint64_t word = submitWord_.load(std::memory_order_relaxed);
  do {
    link = static_cast<std::uint32_t>(word);
    // seq_cst: pairs with the worker's store of sleepUntil_ before its last look at the stack.
    // The count in the high half wraps (unsigned): pending() only needs it mod 2^32.
  } while (!submitWord_.compare_exchange_weak(word, ((word >> 32) + 1) << 32 | index,
                                              std::memory_order_seq_cst,
                                              std::memory_order_relaxed));
}

void HashedWheelTimer::Impl::wakeIfEarlier(std::int64_t deadlineNs) noexcept {
  // The worker's plan is a tick time: a deadline after the tick before it is handled when the
  // worker wakes as planned. Only an earlier tick needs a wake-up, and only the producer that
  // flips the plan to kAwake pays for it.
  std::int64_t planned = sleepUntil_.load();
  while (planned != kAwake && deadlineNs <= planned - tickNs_) {
    if (sleepUntil_.compare_exchange_weak(planned, kAwake)) {
      wakeWorker();
      return;
    }
  }
}

Timeout HashedWheelTimer::Impl::settleAfterStopRace(std::uint32_t index, std::uint32_t gen) {
  // stop() may have drained the stack before our push. Whoever flips Pending wins: if we do,
  // the call is refused; if stop() did, it handed the timeout back and the call stands.
  std::uint32_t expected = stateWord(gen, kPending);
  if (at(index).state.compare_exchange_strong(expected, stateWord(gen, kCancelled))) {
    withdrawn_.fetch_add(1);
    releaseLimit();
    return Timeout{};
  }
  return Timeout(&owner_, index, gen);
}

bool HashedWheelTimer::Impl::cancel(std::uint32_t index, std::uint32_t gen) noexcept {
  Entry& e = at(index);
  std::uint32_t expected = stateWord(gen, kPending);
  if (!e.state.compare_exchange_strong(expected, stateWord(gen, kCancelled),
                                       std::memory_order_acq_rel)) {
    return false;
  }
  releaseLimit();
  // One CAS pushes the record and counts the cancel (pending() reads the count).
  std::uint64_t word = cancelWord_.load(std::memory_order_relaxed);
  do {
    e.clink = static_cast<std::uint32_t>(word);
  } while (!cancelWord_.compare_exchange_weak(word, ((word >> 32) + 1) << 32 | index,
                                              std::memory_order_seq_cst,
                                              std::memory_order_relaxed));
  // The first cancel of a batch wakes a long-sleeping worker so the memory comes back within a
  // tick; the worker re-arms this at most once per tick.
  if (static_cast<std::uint32_t>(word) == detail::kNil && cancelWakeArmed_.load() &&
      cancelWakeArmed_.exchange(false)) {
    wakeWorker();
  }
  return true;
}

// ---- lifecycle --------------------------------------------------------------------------------

void HashedWheelTimer::Impl::start() {
  // Started already: no lock (a task calling start() inside advance() must not deadlock).
  if (lifecycle_.load(std::memory_order_acquire) == kStarted) return;
  std::lock_guard lock(lifecycleMutex_);
  startLocked();
}

// startNs_ is written before lifecycle_ becomes kStarted (seq_cst): seeing kStarted, it is set.
std::int64_t HashedWheelTimer::Impl::nextTickNs() const noexcept {
  const std::int64_t nowNs = now();
  if (lifecycle_.load() != kStarted) return nowNs;
  const std::int64_t tick = (nowNs - startNs_) / tickNs_ + 1;
  return tick > (kNever - startNs_) / tickNs_ ? kNever : startNs_ + tick * tickNs_;
}

void HashedWheelTimer::Impl::startLocked() {
  const int current = lifecycle_.load();
  if (current == kStarted) return;
  if (current >= kStopping) throw TimerStoppedError();
  startNs_ = now();
  wheel_.setTickMath(startNs_, tickNs_);
  lifecycle_.store(kStarted);  // before the thread starts: its loop runs while kStarted
  if (hooks_.drive == Drive::Thread) {
    try {
      worker_ = std::thread([this] { run(); });
    } catch (...) {
      lifecycle_.store(kInit);
      throw;
    }
  }
}

std::vector<Timeout> HashedWheelTimer::Impl::stop() {
  if (detail::tlRunningTimer == this) {
    throw std::logic_error(
        "HashedWheelTimer::stop() called from inside one of its tasks (expected: another thread)");
  }
  if (!isStopped()) (void)owner_.users_.stopEach("HashedWheelTimer");
  {
    std::lock_guard lock(lifecycleMutex_);
    const int current = lifecycle_.load();
    if (current >= kStopping) return {};
    lifecycle_.store(current == kInit ? kStopped : kStopping);
    if (current == kInit) return {};
  }
  wakeWorker();
  if (worker_.joinable()) worker_.join();  // not under the lock: a task may be starting a timeout
  std::lock_guard lock(lifecycleMutex_);
  std::vector<Timeout> unprocessed = collectUnprocessed();
  lifecycle_.store(kStopped);
  return unprocessed;
}

std::vector<Timeout> HashedWheelTimer::Impl::collectUnprocessed() {
  drainCancels();
  drainSubmissions();
  std::vector<detail::Ref> left;
  wheel_.removeAll(left);
  std::vector<Timeout> result;
  result.reserve(left.size());
  for (const detail::Ref ref : left) {
    const std::uint32_t index = detail::refIndex(ref);
    const std::uint32_t gen = detail::refGen(ref);
    Entry& e = at(index);
    e.where = detail::kDetached;
    std::uint32_t expected = stateWord(gen, kPending);
    // A cancel racing with stop() may win; then the entry simply stays until destruction.
    if (e.state.compare_exchange_strong(expected, stateWord(gen, kCancelled))) {
      releaseLimit();
      cancelledByStop_.fetch_add(1);
      result.push_back(Timeout(&owner_, index, gen));
    }
  }
  return result;
}

// ---- queries ----------------------------------------------------------------------------------

std::uint64_t HashedWheelTimer::Impl::cancelledCount() const noexcept {
  // Drained first: the records it counts were pushed (and counted in the word) before.
  const std::uint64_t drained = cancelsDrained_.load(std::memory_order_acquire);
  const auto pushed = static_cast<std::uint32_t>(cancelWord_.load() >> 32);
  return drained + static_cast<std::uint32_t>(pushed - static_cast<std::uint32_t>(drained)) +
         cancelledByStop_.load();
}

std::uint64_t HashedWheelTimer::Impl::pending() const noexcept {
  // Every timeout counted as finished was counted as accepted before (its push happened before
  // the release that counted it): read the finished first, so the difference is never negative
  // and reflects every call that returned before this one. Fewer than 2^32 are ever pending.
  const std::uint64_t finished = fired_.load(std::memory_order_acquire) +
                                 (cancelWord_.load() >> 32) + cancelledByStop_.load() +
                                 withdrawn_.load();
  const auto accepted = static_cast<std::uint32_t>(submitWord_.load() >> 32);
  const std::uint32_t diff = accepted - static_cast<std::uint32_t>(finished);
  return static_cast<std::int32_t>(diff) < 0 ? 0 : diff;
}

TimerMetrics HashedWheelTimer::Impl::metrics() const {
  TimerMetrics m;
  m.pending = pending();
  m.fired = fired_.load(std::memory_order_relaxed);
  m.cancelled = cancelledCount();
  m.scheduled = m.pending + m.fired + m.cancelled;  // every accepted timeout is in one of these
  m.rejected = rejected_.load(std::memory_order_relaxed);
  m.taskErrors = errors_->count();
  m.rounds = rounds_.load(std::memory_order_relaxed);
  m.latenessP50 = std::chrono::nanoseconds(lateness_.quantile(0.50));
  m.latenessP99 = std::chrono::nanoseconds(lateness_.quantile(0.99));
  m.latenessMax = std::chrono::nanoseconds(lateness_.max());
  m.latenessSamples = lateness_.count();
  return m;
}

void HashedWheelTimer::Impl::writeMetrics(MetricsWriter& out) const {
  const TimerMetrics m = metrics();
  out.gauge("wheelbeat_wheel_pending_timeouts", static_cast<double>(m.pending));
  out.counter("wheelbeat_wheel_scheduled_total", static_cast<double>(m.scheduled));
  out.counter("wheelbeat_wheel_expired_total", static_cast<double>(m.fired));
  out.counter("wheelbeat_wheel_cancelled_total", static_cast<double>(m.cancelled));
  out.counter("wheelbeat_wheel_rejected_total", static_cast<double>(m.rejected));
  out.counter("wheelbeat_wheel_task_errors_total", static_cast<double>(m.taskErrors));
  out.counter("wheelbeat_wheel_rounds_total", static_cast<double>(m.rounds));
  out.histogram("wheelbeat_wheel_lateness_seconds", latenessSeconds_.snapshot());
  out.histogram("wheelbeat_wheel_worker_lag_seconds", workerLag_.snapshot());
}

}  // namespace wheelbeat::core
