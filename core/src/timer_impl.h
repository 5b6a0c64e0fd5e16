// HashedWheelTimer's inside. Threads and ownership:
//  - producers (any thread) fill an entry, push it on the lock-free submission stack and, only
//    when the new deadline is earlier than the worker's planned wake-up, wake the worker;
//  - cancel() (any thread) wins a CAS on the entry's state and pushes it on the cancel stack;
//  - the wheel thread alone owns the Wheel: it drains both stacks, collects the due tick, then
//    runs what it collected, and frees entries back to the pool.
#pragma once

#include "entry_pool.h"
#include "wheel.h"

#include <wheelbeat/core/hashed_wheel_timer.h>

#include <condition_variable>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>

namespace wheelbeat::core {

namespace detail {
// The timer whose task this thread is running (nullptr outside tasks): stop() and advance()
// refuse to run inside a task of their own timer.
inline thread_local const void* tlRunningTimer = nullptr;

// The timeout whose task this thread runs inline (runOne() without an executor): the only one
// tryRearm() may put back on the wheel, once (`rearmed`).
struct RunningEntry {
  const void* timer = nullptr;
  std::uint32_t index = kNil;
  std::uint32_t gen = 0;
  bool rearmed = false;
};
inline thread_local RunningEntry tlRunningEntry;

// Counts, logs and forwards task exceptions. Shared with executor closures, which may outlive
// the timer.
class TaskErrorReporter {
public:
  explicit TaskErrorReporter(std::function<void(std::exception_ptr, const Timeout&)> hook)
      : hook_(std::move(hook)) {}
  void report(const std::exception_ptr& error, const Timeout& timeout) noexcept;
  [[nodiscard]] std::uint64_t count() const noexcept {
    return count_.load(std::memory_order_relaxed);
  }

private:
  std::function<void(std::exception_ptr, const Timeout&)> hook_;
  std::atomic<std::uint64_t> count_{0};
};

// Runs a task under safe-run on the calling thread, marked as inside `timer`.
void safeRun(const void* timer, TaskErrorReporter& errors, TimerTask& task,
             const Timeout& timeout) noexcept;
}  // namespace detail

class HashedWheelTimer::Impl {
public:
  Impl(HashedWheelTimer& owner, WheelOptions options, TimerHooks hooks);
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Impl(Impl&&) = delete;
  Impl& operator=(Impl&&) = delete;

  Timeout newTimeout(TimerTask&& task, std::chrono::nanoseconds delay);
  Timeout tryRearm(std::uint32_t index, std::uint32_t gen, std::chrono::nanoseconds delay);
  void start();
  void startLocked();
  std::vector<Timeout> stop();
  std::size_t advance();
  bool cancel(std::uint32_t index, std::uint32_t gen) noexcept;
  TimeoutState state(std::uint32_t index, std::uint32_t gen) const noexcept;
  TimerTask* task(std::uint32_t index, std::uint32_t gen) const noexcept;
  TimerMetrics metrics() const;
  void writeMetrics(MetricsWriter& out) const;

  // The timer's clock, in ns (no virtual call for the steady clock). Thread: any.
  std::int64_t now() const noexcept {
    return clock_ ? clock_->now().count() : SteadyClock::read().count();
  }
  // The time a deadline is computed from: now() or, on the steady clock, a cheaper reading that
  // is never earlier than now() (SteadyClock::readNotBefore()). Thread: any.
  std::int64_t scheduleNow() const noexcept {
    return clock_ ? clock_->now().count() : SteadyClock::readNotBefore().count();
  }
  std::int64_t tickNs() const noexcept { return tickNs_; }
  std::int64_t ticksPerWheel() const noexcept { return std::int64_t{1} << wheelBits_; }
  std::uint64_t pending() const noexcept;
  bool isStopped() const noexcept { return lifecycle_.load() >= kStopping; }
  std::int64_t nextTickNs() const noexcept;
  Drive drive() const noexcept { return hooks_.drive; }

private:
  enum Lifecycle : int { kInit, kStarted, kStopping, kStopped };
  static constexpr std::int64_t kAwake = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  // producer side
  void reservePending();
  std::uint64_t cancelledCount() const noexcept;
  void releaseLimit() noexcept {
    if (maxPending_ > 0) limitCount_.fetch_sub(1, std::memory_order_relaxed);
  }
  std::int64_t deadlineFor(std::chrono::nanoseconds delay) const noexcept;
  void pushSubmission(std::uint32_t index) noexcept;
  void wakeIfEarlier(std::int64_t deadlineNs) noexcept;
  Timeout settleAfterStopRace(std::uint32_t index, std::uint32_t gen);

  // wheel thread
  void run();
  std::size_t cycle();
  void drainCancels();
  void drainSubmissions();
  std::size_t runDue();
  void runOne(std::uint32_t index, std::uint32_t gen);
  void freeEntry(std::uint32_t index, bool cancelled) noexcept;
  void sleepUntil(std::int64_t wakeNs);
  void wakeWorker();
  std::vector<Timeout> collectUnprocessed();

  detail::Entry& at(std::uint32_t index) const noexcept { return pool_->at(index); }

  HashedWheelTimer& owner_;
  const std::int64_t tickNs_;
  const int wheelBits_;
  const std::int64_t maxPending_;
  const TimerHooks hooks_;
  const Clock* clock_;  // nullptr: steady clock without a virtual call
  std::shared_ptr<detail::EntryPool> pool_;

  // Written by every newTimeout(): one cache line, so concurrent producers pass one line, not two.
  // submitWord_ = (timeouts accepted, mod 2^32) << 32 | head of the submission stack: one CAS
  // both publishes an entry and counts it, so pending() = accepted - fired - cancelled -
  // withdrawn costs newTimeout() and the worker no atomic read-modify-write of its own.
  alignas(64) std::atomic<std::uint64_t> submitWord_{detail::kNil};
  // Reservations against maxPendingTimeouts (only used when it is > 0: a limit needs a count
  // that is incremented before the entry is published).
  std::atomic<std::int64_t> limitCount_{0};
  // cancelWord_ = (cancels, mod 2^32) << 32 | head of the cancel stack, as submitWord_: one CAS
  // both pushes a cancel record and counts it. cancelsDrained_ (64 bits, written by whoever
  // drains: the wheel thread, or stop() after joining it) extends the count to 64 bits for
  // metrics(); fewer than 2^32 records are ever waiting.
  alignas(64) std::atomic<std::uint64_t> cancelWord_{detail::kNil};
  alignas(64) std::atomic<std::int64_t> sleepUntil_{kAwake};  // worker's planned wake-up (ns)
  std::atomic<bool> cancelWakeArmed_{false};
  std::atomic<int> lifecycle_{kInit};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> cancelsDrained_{0};
  std::atomic<std::uint64_t> cancelledByStop_{0};  // pending timeouts stop() handed back
  std::atomic<std::uint64_t> withdrawn_{0};        // published, then refused by a stop() race
  std::shared_ptr<detail::TaskErrorReporter> errors_;

  // Written by the wheel thread only (relaxed atomics so metrics() may read them anywhere).
  alignas(64) std::atomic<std::uint64_t> fired_{0};
  std::atomic<std::uint64_t> rounds_{0};  // cycle() calls: the worker's wake-ups, or advance()
  detail::LatenessHistogram lateness_;
  Histogram latenessSeconds_;  // the same samples in Prometheus buckets
  Histogram workerLag_;

  std::int64_t startNs_ = 0;  // set once, before lifecycle_ becomes kStarted
  detail::Wheel wheel_;
  std::vector<detail::Ref> due_;
  bool cancelCooldown_ = false;  // a cancel woke us: next sleep is at most a tick, unarmed
  bool churnCooldown_ = false;   // the last look found cancels: next sleep is to drainedAt_'s tick
  std::int64_t drainedAt_ = 0;   // when the last cycle began draining (ns, the timer's clock)

  std::mutex lifecycleMutex_;  // start/stop transitions, and advance() in Drive::Manual
  std::thread worker_;
  std::mutex sleepMutex_;
  std::condition_variable sleepCv_;
  bool wakeRequested_ = false;  // guarded by sleepMutex_
};

}  // namespace wheelbeat::core
