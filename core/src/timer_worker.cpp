// HashedWheelTimer, the wheel thread's side: drain, collect the due tick, run it, sleep until
// the next tick that holds something (or until a producer needs an earlier wake-up).
#include "timer_impl.h"

#include <wheelbeat/core/log.h>

#include <pthread.h>

#include <utility>

namespace wheelbeat::core {

using detail::Entry;
using detail::kDetached;
using detail::kInSubmit;
using detail::kInSubmitCancelSeen;
using detail::kNil;
using detail::stateWord;

namespace detail {

void TaskErrorReporter::report(const std::exception_ptr& error, const Timeout& timeout) noexcept {
  count_.fetch_add(1, std::memory_order_relaxed);
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& ex) {
    log(LogLevel::Error, "timer task threw {}; the wheel goes on", ex.what());
  } catch (...) {
    log(LogLevel::Error, "timer task threw a non-std exception; the wheel goes on");
  }
  if (!hook_) return;
  try {
    hook_(error, timeout);
  } catch (...) {
    log(LogLevel::Error, "the onTaskError hook threw; its exception is dropped");
  }
}

void safeRun(const void* timer, TaskErrorReporter& errors, TimerTask& task,
             const Timeout& timeout) noexcept {
  const void* outer = tlRunningTimer;
  tlRunningTimer = timer;
  try {
    task(timeout);
  } catch (...) {
    errors.report(std::current_exception(), timeout);
  }
  tlRunningTimer = outer;
}

}  // namespace detail

void HashedWheelTimer::Impl::run() {
  // Named for top -H, perf and gdb (a loop's thread is named too); 15 characters at most.
  pthread_setname_np(pthread_self(), "wheelbeat-wheel");
  while (lifecycle_.load(std::memory_order_acquire) == kStarted) {
    cycle();
    const std::int64_t next = wheel_.nextEventTick();
    // next < 2^44 ticks and tickNs_ * 2^30 fits: compute the wake time without overflow.
    const std::int64_t wakeNs =
        next == detail::Wheel::kNoTick || next > (kNever - startNs_) / tickNs_
            ? kNever
            : startNs_ + next * tickNs_;
    sleepUntil(wakeNs);
  }
}

std::size_t HashedWheelTimer::Impl::advance() {
  if (hooks_.drive != Drive::Manual) {
    throw std::logic_error(
        "HashedWheelTimer::advance() needs Drive::Manual (this timer runs its own worker thread)");
  }
  if (detail::tlRunningTimer == this) {
    throw std::logic_error("HashedWheelTimer::advance() called from inside one of its tasks");
  }
  std::lock_guard lock(lifecycleMutex_);
  startLocked();  // throws TimerStoppedError once stopped
  return cycle();
}

std::size_t HashedWheelTimer::Impl::cycle() {
  std::size_t ran = 0;
  rounds_.store(rounds_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  drainedAt_ = now();
  drainCancels();
  drainSubmissions();
  const std::int64_t lastDueTick = (now() - startNs_) / tickNs_;
  while (lifecycle_.load(std::memory_order_acquire) == kStarted) {
    const std::int64_t tick = wheel_.nextEventTick();
    if (tick > lastDueTick) {
      wheel_.skipTo(lastDueTick + 1);  // nothing happens in between: no empty-tick walk
      break;
    }
    wheel_.collect(tick, due_);
    if (!due_.empty()) {
      workerLag_.recordSingleWriter(std::chrono::nanoseconds(now() - (startNs_ + tick * tickNs_)));
      ran += runDue();
    }
    // What the tasks scheduled or cancelled joins the wheel before the next tick is processed.
    drainCancels();
    drainSubmissions();
  }
  return ran;
}

std::size_t HashedWheelTimer::Impl::runDue() {
  // Entries of one tick are scattered in memory: keep several cache misses in flight.
  constexpr std::size_t kPrefetchAhead = 16;
  const std::int64_t nowNs = now();
  std::size_t ran = 0;
  // Indexing, not iterators: a task cannot touch due_, but keep the loop obviously safe.
  for (std::size_t i = 0; i < due_.size(); ++i) {
    if (i + kPrefetchAhead < due_.size())
      pool_->prefetch(detail::refIndex(due_[i + kPrefetchAhead]));
    const std::uint32_t index = detail::refIndex(due_[i]);
    const std::uint32_t gen = detail::refGen(due_[i]);
    Entry& e = at(index);
    std::uint32_t word = e.state.load(std::memory_order_acquire);
    if (detail::genOf(word) != gen) {  // cancelled and freed: the slot held a stale reference
      wheel_.dropStale();
      continue;
    }
    e.where = kDetached;  // out of the wheel: a cancel record for it now only frees it
    // A task earlier in this tick may have cancelled this one: then its cancel record frees it.
    if (detail::stOf(word) != detail::kPending ||
        !e.state.compare_exchange_strong(word, stateWord(gen, detail::kExpired),
                                         std::memory_order_acq_rel)) {
      continue;
    }
    releaseLimit();
    // Release: pending() reads fired_ first, then the submission count this entry is part of.
    fired_.store(fired_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    lateness_.record(nowNs - e.deadline);
    latenessSeconds_.recordSingleWriter(std::chrono::nanoseconds(nowNs - e.deadline));
    runOne(index, gen);
    ++ran;
  }
  due_.clear();
  return ran;
}

void HashedWheelTimer::Impl::runOne(std::uint32_t index, std::uint32_t gen) {
  Entry& e = at(index);
  const Timeout timeout(&owner_, index, gen);
  if (!hooks_.executor) {
    // Saved and restored: a task may drive another Drive::Manual timer (advance()) inline.
    detail::RunningEntry& running = detail::tlRunningEntry;
    const detail::RunningEntry outer = running;
    running = {this, index, gen, false};
    detail::safeRun(this, *errors_, e.task, timeout);
    const bool rearmed = running.rearmed;
    running = outer;
    if (!rearmed) freeEntry(index, false);  // re-armed: submitted again, the task in place
    return;
  }
  // std::function needs a copyable callable: share the (move-only) task with the closure.
  auto task = std::make_shared<TimerTask>(std::move(e.task));
  freeEntry(index, false);
  try {
    hooks_.executor([timer = static_cast<const void*>(this), errors = errors_, task, timeout] {
      detail::safeRun(timer, *errors, *task, timeout);
    });
  } catch (...) {
    errors_->report(std::current_exception(), timeout);
  }
}

void HashedWheelTimer::Impl::freeEntry(std::uint32_t index, bool cancelled) noexcept {
  Entry& e = at(index);
  e.task.reset();
  const std::uint32_t gen = detail::genOf(e.state.load(std::memory_order_relaxed));
  const std::uint32_t bit = 1u << (gen & 31);
  const std::uint32_t history = e.history.load(std::memory_order_relaxed);
  // Outcome first, then the new generation: a reader that sees the new generation sees it.
  e.history.store(cancelled ? (history | bit) : (history & ~bit), std::memory_order_release);
  e.state.store(stateWord(gen + 1, detail::kFree), std::memory_order_release);
  pool_->release(index);
}

void HashedWheelTimer::Impl::drainCancels() {
  // Sets the head to kNil and keeps the count.
  auto index = static_cast<std::uint32_t>(
      cancelWord_.fetch_or(std::uint64_t{kNil}, std::memory_order_acquire));
  std::uint64_t drained = 0;
  while (index != kNil) {
    ++drained;
    Entry& e = at(index);
    const std::uint32_t next = e.clink;
    if (e.where == kInSubmit) {
      e.where = kInSubmitCancelSeen;  // still linked in the submission stack: drain frees it
    } else {
      if (e.where == detail::kInWheel) wheel_.noteStale();  // its slot keeps a stale reference
      freeEntry(index, true);
    }
    index = next;
  }
  // One writer at a time (the wheel thread; stop() after joining it; advance() under its lock).
  cancelsDrained_.store(cancelsDrained_.load(std::memory_order_relaxed) + drained,
                        std::memory_order_release);
  wheel_.compactIfStale();
}

void HashedWheelTimer::Impl::drainSubmissions() {
  // Sets the head to kNil and keeps the count.
  auto index = static_cast<std::uint32_t>(
      submitWord_.fetch_or(std::uint64_t{kNil}, std::memory_order_acquire));
  std::uint32_t ordered = kNil;  // the stack is newest-first: reverse to acceptance order
  while (index != kNil) {
    const std::uint32_t next = std::exchange(pool_->next(index), ordered);
    ordered = index;
    index = next;
  }
  while (ordered != kNil) {
    Entry& e = at(ordered);
    const std::uint32_t next = pool_->next(ordered);
    if (detail::stOf(e.state.load(std::memory_order_acquire)) == detail::kCancelled) {
      // Cancelled before it reached the wheel: free it once both records have been seen.
      if (e.where == kInSubmitCancelSeen)
        freeEntry(ordered, true);
      else
        e.where = kDetached;
    } else {
      wheel_.insert(ordered, detail::genOf(e.state.load(std::memory_order_relaxed)));
      e.where = detail::kInWheel;
    }
    ordered = next;
  }
}

// `wakeNs` is a tick time (start + k * tick) or kNever.
//
// Churn: a thread that schedules and at once cancels (a loop issuing requests, each with its
// timeout) leaves cancels for every last look to find; the worker would go round and round,
// freeing entries that thread has just written on the other core (S2 then ran at 45-70 ns per
// pair instead of ~28, in spells). So after a round that cancels found in the last look started,
// the worker sleeps to the first tick boundary at or after that round's drain, without the look:
// what was pushed since that drain has a deadline at or after it (a deadline is never before
// its call), so it is due at that boundary at the earliest and runs on time; cancels only return
// memory, within that tick. Submissions alone still start another round at once (two threads
// only scheduling, S3, then share the cores with the worker and contend less).
void HashedWheelTimer::Impl::sleepUntil(std::int64_t wakeNs) {
  const bool churn = std::exchange(churnCooldown_, false);
  const bool arm = !cancelCooldown_ && !churn;
  if (cancelCooldown_ || churn) {
    // A tick boundary: plans stay tick-aligned (wakeIfEarlier() relies on it).
    const std::int64_t from = churn ? drainedAt_ - 1 : now();
    const std::int64_t nextTick = (from - startNs_) / tickNs_ + 1;
    if (nextTick <= (kNever - startNs_) / tickNs_)
      wakeNs = std::min(wakeNs, startNs_ + nextTick * tickNs_);
  }
  cancelCooldown_ = false;
  cancelWakeArmed_.store(arm);
  sleepUntil_.store(wakeNs);
  // Last look after publishing the plan (seq_cst, pairs with the producers' pushes): work that
  // arrived before it is handled now; work after it sees the plan and wakes us if needed.
  churnCooldown_ = !churn && arm && static_cast<std::uint32_t>(cancelWord_.load()) != kNil;
  const bool work = churnCooldown_ ||
                    (!churn && static_cast<std::uint32_t>(submitWord_.load()) != kNil) ||
                    lifecycle_.load() != kStarted;
  if (!work) {
    std::unique_lock lock(sleepMutex_);
    while (!wakeRequested_) {
      if (wakeNs == kNever) {
        sleepCv_.wait(lock);
        continue;
      }
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::nanoseconds(wakeNs - now());
      if (sleepCv_.wait_until(lock, until) == std::cv_status::timeout) break;
    }
    wakeRequested_ = false;
  }
  sleepUntil_.store(kAwake);
  // If a cancel consumed the arm, it woke us: rate-limit such wake-ups to one per tick.
  if (arm && !cancelWakeArmed_.exchange(false)) cancelCooldown_ = true;
}

void HashedWheelTimer::Impl::wakeWorker() {
  {
    std::lock_guard lock(sleepMutex_);
    wakeRequested_ = true;
  }
  sleepCv_.notify_one();
}

}  // namespace wheelbeat::core
