#include <wheelbeat/tasks/timer_chain.h>

#include <exception>
#include <stdexcept>
#include <utility>

namespace wheelbeat::tasks {

TimerChain::TimerChain(core::HashedWheelTimer& timer, std::shared_ptr<TaskListener> listener,
                       std::shared_ptr<TaskMetrics> metrics)
    : timer_(timer), listener_(std::move(listener)), metrics_(std::move(metrics)) {}

void TimerChain::start(std::chrono::nanoseconds firstDelay) {
  if (weak_from_this().expired()) {
    throw std::logic_error(
        "wheelbeat: timer task start(): the task must be owned by a "
        "std::shared_ptr (create it with std::make_shared)");
  }
  if (started_.exchange(true)) {
    throw std::logic_error("wheelbeat: timer task start(): already started");
  }
  lastDelay_ = firstDelay;
  try {
    arm(firstDelay);
  } catch (...) {
    started_.store(false);  // nothing was armed: the caller may try again
    throw;
  }
}

bool TimerChain::cancel() noexcept {
  if (cancelled_.exchange(true)) return false;
  core::Timeout pending;
  {
    std::lock_guard lock(timeoutMutex_);
    pending = timeout_;
  }
  // Outside the lock: Timeout::cancel() never calls back into this task, but keeping the
  // critical section to a copy makes that irrelevant.
  pending.cancel();
  return true;
}

void TimerChain::wake() noexcept {
  if (!started_.load(std::memory_order_acquire) || isEnded()) return;
  std::exception_ptr failure;
  {
    std::lock_guard lock(timeoutMutex_);
    // A pending run not yet due is moved to the next tick; a run already due or in progress
    // sees the request when it re-arms.
    if (!timeout_.cancel()) {
      wakeRequested_ = true;
      return;
    }
    try {
      timeout_ = schedule(std::chrono::nanoseconds(0));
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // The old run is cancelled and no new one exists: the chain ends, as a failed re-arm does
  // (the listener is called outside the lock: it may call cancel()).
  if (failure) endAfterArmFailure(failure);
}

void TimerChain::finish(std::string_view why) {
  finishing_ = true;
  finishWhy_ = why;
}

// The wheel keeps only a weak_ptr: a task its owner dropped is destroyed, not kept alive by its
// own pending timeout (16 bytes: stored inline, no allocation).
core::Timeout TimerChain::schedule(std::chrono::nanoseconds delay) {
  return timer_.newTimeout(
      [weak = weak_from_this()](const core::Timeout& self) {
        if (auto chain = weak.lock()) chain->run(self);
      },
      delay);
}

// `running` (inside a run: its handle) lets the wheel re-arm the same task in place, the common
// case; from start() and wake(), or with an executor, a new timeout is scheduled.
void TimerChain::arm(std::chrono::nanoseconds delay, const core::Timeout* running) {
  if (isCancelled()) return;
  core::Timeout next;
  {
    // Scheduled under the lock, so that a wake() either finds this timeout pending (and moves
    // it) or has left its request for this arm() to see.
    std::lock_guard lock(timeoutMutex_);
    if (std::exchange(wakeRequested_, false)) delay = std::chrono::nanoseconds(0);
    if (running != nullptr) next = timer_.tryRearm(*running, delay);
    if (!next) next = schedule(delay);
    timeout_ = next;
  }
  // A cancel() that ran between the check above and the store saw the old handle: cancel the
  // new one here. (cancel() sets its flag before it reads the handle, so one of the two sees
  // the other.)
  if (isCancelled()) next.cancel();
}

void TimerChain::run(const core::Timeout& self) {
  if (isCancelled() || ended_.load(std::memory_order_acquire)) return;
  fire();
  if (finishing_) return end(finishWhy_);
  try {
    arm(lastDelay_, &self);
  } catch (...) {
    endAfterArmFailure(std::current_exception());
  }
}

void TimerChain::endAfterArmFailure(const std::exception_ptr& error) noexcept {
  try {
    std::rethrow_exception(error);
  } catch (const core::TimerStoppedError&) {
    end("timer stopped");
  } catch (...) {  // RejectedTimeoutError (maxPendingTimeouts), or an allocation failure
    count(&TaskMetrics::taskErrors);
    notify([error](TaskListener& l) { l.onTaskError(error); });
    end("re-arm rejected");
  }
}

void TimerChain::countRun() noexcept {
  // Runs never overlap, and each is ordered after the one before (it arms it): one writer at a
  // time, so a plain add (no locked instruction per run).
  runs_.store(runs_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  count(&TaskMetrics::runs);
}

void TimerChain::bodyThrew(const std::exception_ptr& error) noexcept {
  count(&TaskMetrics::taskErrors);
  notify([&error](TaskListener& l) { l.onTaskError(error); });
}

void TimerChain::end(std::string_view why) {
  ended_.store(true, std::memory_order_release);
  notify([why](TaskListener& l) { l.onTaskEnded(why); });
}

}  // namespace wheelbeat::tasks
