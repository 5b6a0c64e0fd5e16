// TimerChain: the machinery of a task that re-arms itself on the shared wheel, shared by
// AbstractTimerTask (a task watching a Channel: heartbeat, reconnect, close) and PeriodicTask (a
// task with any owner: renewals, sweeps). Not used directly: derive from one of those two.
//
// One run (on the wheel thread)
//   1. Nothing happens if the chain was cancelled or has ended.
//   2. The derived class's fire() checks what the task depends on (its channel, its owner) and
//      either calls finish(why) (the chain ends without running the body) or runBody(body) once.
//      runBody() counts the run (runs(), TaskMetrics::runs) and calls body(timer.now()), which
//      returns the delay until the next run (<= 0: the next tick). A body that throws is caught
//      there: counted in TaskMetrics::taskErrors, passed to TaskListener::onTaskError(), and the
//      chain re-arms with the last delay (the previous run's, or start()'s first delay).
//   3. If finish(why) was called (by fire() or by the body), the chain ends without re-arming and
//      the listener's onTaskEnded(why) is told. Otherwise the task re-arms with that delay. If the
//      timer is stopped meanwhile, the chain ends quietly ("timer stopped"); if the timer refuses
//      the timeout (RejectedTimeoutError: maxPendingTimeouts), the refusal is counted and
//      reported as a task error and the chain ends ("re-arm rejected").
//   Runs of one task never overlap: each run arms the next one. A run re-arms its own wheel entry
//   (HashedWheelTimer::tryRearm: no allocation, no new entry); with TimerHooks::executor it
//   schedules a new timeout instead.
//
// Lifetime
//   A task is held by std::shared_ptr (std::make_shared; start() throws std::logic_error
//   otherwise). The wheel holds only a std::weak_ptr to it: when the owner drops the last
//   shared_ptr, the task is destroyed and its pending timeout, once due, finds nothing and does
//   not run or re-arm (the timeout stays pending until then). The timer must outlive every call
//   to start(), wake() and cancel(), and every task run.
//
// cancel() stops the chain at once: it cancels the pending wheel timeout too, so
// timer.pendingTimeouts() drops when cancel() returns (Dubbo only set a flag, and the timeouts
// of destroyed providers' channels piled up). If a run is in progress on the wheel thread at that
// moment, that run cancels the timeout it arms before it returns. cancel() is not reported to the
// listener: its caller knows.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/tasks/task_listener.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace wheelbeat::tasks {

class TimerChain : public std::enable_shared_from_this<TimerChain> {
public:
  virtual ~TimerChain() = default;

  TimerChain(const TimerChain&) = delete;
  TimerChain& operator=(const TimerChain&) = delete;

  // Arms the first run `firstDelay` from now (<= 0: the next tick). Throws
  // core::TimerStoppedError if the timer is stopped, core::RejectedTimeoutError if it has
  // maxPendingTimeouts pending, std::logic_error if the task is not owned by a std::shared_ptr
  // or was started before. A task cancelled before start() is not armed.
  // Thread: any.
  void start(std::chrono::nanoseconds firstDelay);

  // Stops the chain and cancels the pending timeout (see the file comment). Returns true only
  // for the first call. Thread: any, including from inside this task's body or another task.
  bool cancel() noexcept;

  // Asks for the next run at the next tick instead of after the pending delay: an event the task
  // reacts to has happened (e.g. the owner saw its channel's socket close). A pending run is
  // moved forward; a run in progress re-arms for the next tick instead of its own delay. No
  // effect before start() or once the chain ended. Thread: any, including from inside a run.
  void wake() noexcept;
  // cancel() was called. Thread: any.
  [[nodiscard]] bool isCancelled() const noexcept {
    return cancelled_.load(std::memory_order_acquire);
  }
  // The chain has ended: cancelled, or ended by a run (finish(), the task's channel or owner
  // gone, timer stopped, re-arm rejected). Thread: any.
  [[nodiscard]] bool isEnded() const noexcept {
    return isCancelled() || ended_.load(std::memory_order_acquire);
  }
  // Bodies run so far (a throwing body counts). Thread: any.
  [[nodiscard]] std::uint64_t runs() const noexcept {
    return runs_.load(std::memory_order_relaxed);
  }

protected:
  // `listener` and `metrics` may be null; both may be shared with other tasks.
  TimerChain(core::HashedWheelTimer& timer, std::shared_ptr<TaskListener> listener,
             std::shared_ptr<TaskMetrics> metrics);

  // One due run of a live chain: check what the task depends on, then call finish(why) or
  // runBody() once (see the file comment). Thread: the wheel thread.
  virtual void fire() = 0;

  // From fire(): runs `body` (nanoseconds(nanoseconds now)) once; what it returns is the delay of
  // the re-arm. Thread: the wheel thread.
  template <typename Body>
  void runBody(Body&& body) noexcept {
    countRun();
    try {
      lastDelay_ = body(timer_.now());
    } catch (...) {
      bodyThrew(std::current_exception());
    }
  }

  // From the body: the delay of the re-arm should the body throw after this call (otherwise the
  // previous run's delay, see the file comment). Thread: the wheel thread.
  void retryAfter(std::chrono::nanoseconds delay) noexcept { lastDelay_ = delay; }

  // From fire() or the body: end the chain after this run (no re-arm); the listener's
  // onTaskEnded(why) is called once the run is over. Thread: the wheel thread.
  void finish(std::string_view why);

  // Adds one to a counter of the shared metrics, if any.
  void count(std::atomic<std::uint64_t> TaskMetrics::*counter) noexcept {
    if (metrics_) (metrics_.get()->*counter).fetch_add(1, std::memory_order_relaxed);
  }
  // Calls fn(listener) if there is a listener, dropping whatever it throws.
  template <typename Fn>
  void notify(Fn&& fn) noexcept {
    if (!listener_) return;
    try {
      fn(*listener_);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a listener must not break the chain
    }
  }

  [[nodiscard]] core::HashedWheelTimer& timer() const noexcept { return timer_; }

private:
  void run(const core::Timeout& self);
  void countRun() noexcept;
  void bodyThrew(const std::exception_ptr& error) noexcept;
  void arm(std::chrono::nanoseconds delay, const core::Timeout* running = nullptr);
  core::Timeout schedule(std::chrono::nanoseconds delay);
  void endAfterArmFailure(const std::exception_ptr& error) noexcept;
  void end(std::string_view why);

  core::HashedWheelTimer& timer_;
  const std::shared_ptr<TaskListener> listener_;
  const std::shared_ptr<TaskMetrics> metrics_;

  std::atomic<bool> cancelled_{false};
  std::atomic<bool> ended_{false};
  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> runs_{0};

  // Wheel thread only (runs never overlap).
  std::chrono::nanoseconds lastDelay_{0};
  bool finishing_ = false;
  std::string finishWhy_;

  // The handle of the pending run: written by each run (and start()), read by cancel() and
  // wake(). Taken once per run, never contended except by a cancel() or a wake().
  std::mutex timeoutMutex_;
  core::Timeout timeout_;
  bool wakeRequested_ = false;  // guarded by timeoutMutex_: the next arm() uses delay 0
};

}  // namespace wheelbeat::tasks
