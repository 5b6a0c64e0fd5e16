// HashedWheelTimer: the one timer a process shares for heartbeats, reconnects, idle checks and
// retries. Public semantics follow io.netty.util.HashedWheelTimer; the inside does not walk
// entries that are not due, sleeps through empty ticks, and schedules/cancels in O(1) without a
// lock or an allocation per call once warm.
//
// Time and ticks
//   The wheel advances in ticks of `tickDuration`. A timeout with delay d, scheduled at time t,
//   runs on the first tick whose time is >= t' + d: never early, at most one tick late (plus the
//   wake-up latency of the worker thread). t' is the clock's now() inside newTimeout(); on the
//   steady clock (no TimerHooks::clock) it is SteadyClock::readNotBefore(), never earlier than
//   the call and typically a few microseconds (at most 81 us) later, which is cheaper to read.
//   Tick k's time is start + k * tick, where start is the moment the timer started (lazily, on
//   first use).
//   delay <= 0   runs on the next tick — never inside newTimeout(), never inside the task that
//                scheduled it.
//   huge delays  saturate (at about 73 years); they never overflow into firing early.
//   Within one tick, timeouts run in the order newTimeout() accepted them.
//
// Threads
//   newTimeout(), Timeout::cancel(), pendingTimeouts(), metrics(), isStopped(): any thread,
//   including from inside a task. stop(): any thread except inside a task of this timer.
//   Tasks run on the wheel thread (Drive::Thread: the timer's own worker thread, named
//   "wheelbeat-wheel", started on first use; Drive::Manual: the thread calling advance()), or on
//   TimerHooks::executor if one is set.
//   Tasks should be short; hand slow work to an executor.
//
// Safe-run
//   An exception escaping a task (or the executor) is caught, logged once (wheelbeat::core::log,
//   level Error), counted in metrics().taskErrors and passed to TimerHooks::onTaskError; the wheel
//   goes on. A task may schedule, cancel (itself or a sibling due in the same tick) and re-arm
//   timeouts with any delay, also longer than a wheel revolution.
//
// Sharing
//   Create one timer per process and share it (Netty's rule). Creating more than 64 live timers
//   logs a one-time warning.
#pragma once

#include <wheelbeat/core/clock.h>
#include <wheelbeat/core/metrics.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/core/timer_metrics.h>
#include <wheelbeat/core/timer_task.h>
#include <wheelbeat/core/users.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace wheelbeat::core {

// Plain options (config/ parses JSON into this struct).
struct WheelOptions {
  // Length of one tick. Values in (0, 1 ms) are raised to 1 ms with a warning; <= 0 is rejected.
  std::chrono::nanoseconds tickDuration = std::chrono::milliseconds(100);
  // Slots of the finest wheel level, rounded up to a power of two; must be in [1, 2^30].
  // 512 slots of 100 ms = 51.2 s of near-future timeouts with no cascading (Netty's default).
  // Each slot costs 16 bytes up front (2^20 slots = 16 MiB; 2^30 would be 16 GiB).
  std::int64_t ticksPerWheel = 512;
  // newTimeout() is rejected while this many timeouts are pending; <= 0 means unlimited.
  std::int64_t maxPendingTimeouts = 0;
};

// Throws core::OptionError (option_error.h) naming the first bad member, its value and the
// expectation: tickDuration > 0; ticksPerWheel in 1..2^30; tickDuration (at least 1 ms) times
// ticksPerWheel rounded up to a power of two within int64 nanoseconds. HashedWheelTimer's
// constructor checks the same. Thread: any.
void validate(const WheelOptions& options);

enum class Drive {
  Thread,  // the timer owns a worker thread, started on first use (Netty's model)
  Manual,  // no thread: the owner calls advance() (tests with a ManualClock, or an event loop:
           // net::LoopWheel)
};

struct TimerHooks {
  // Runs task bodies instead of the wheel thread, e.g. to post them to a thread pool. Called on
  // the wheel thread with a closure that runs the task under safe-run; it must not block long.
  // A closure may run after the timer was stopped or destroyed (it owns its task).
  std::function<void(std::function<void()>)> executor;
  // Called (on the thread that ran the task) with each exception a task or the executor threw.
  // An exception thrown by the hook itself is logged and dropped.
  std::function<void(std::exception_ptr, const Timeout&)> onTaskError;
  // Time source; nullptr = the steady clock. Drive::Thread needs a clock that follows real time.
  std::shared_ptr<const Clock> clock;
  Drive drive = Drive::Thread;
};

// newTimeout() after stop() (or on a timer being stopped).
class TimerStoppedError : public std::logic_error {
public:
  TimerStoppedError() : std::logic_error("wheelbeat: timer stopped: cannot be used after stop()") {}
};

// newTimeout() while maxPendingTimeouts timeouts are pending. Nothing was scheduled.
class RejectedTimeoutError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class HashedWheelTimer {
public:
  // Throws std::invalid_argument naming the parameter, its value and what was expected:
  // tickDuration <= 0; ticksPerWheel <= 0 or > 2^30; tickDuration * ticksPerWheel overflowing.
  explicit HashedWheelTimer(WheelOptions options = {}, TimerHooks hooks = {});
  // Stops (the tasks still pending are destroyed without running) and joins the worker.
  // Must not run inside a task of this timer. With a user still registered (use()), ends the
  // process instead, naming the users (core/users.h): a client or server destroyed after its
  // timer would otherwise touch freed memory.
  ~HashedWheelTimer();

  // Registers `name` ("TcpClient 127.0.0.1:20880") as a user of this timer until the token is
  // destroyed: clients, servers and directories hold one for their lifetime. Any thread.
  // `onStop` (optional) runs if stop() comes while the token lives (see stop()).
  [[nodiscard]] Users::Use use(std::string name, std::function<void()> onStop = {}) {
    return users_.add(std::move(name), std::move(onStop));
  }
  // The users registered now, in the order they came. Any thread.
  [[nodiscard]] std::vector<std::string> users() const { return users_.names(); }

  HashedWheelTimer(const HashedWheelTimer&) = delete;
  HashedWheelTimer& operator=(const HashedWheelTimer&) = delete;

  // Schedules `task` to run once after `delay` (see "Time and ticks"). Starts the timer on first
  // use. Throws TimerStoppedError after stop(), RejectedTimeoutError when maxPendingTimeouts are
  // pending (and then changes nothing), std::invalid_argument for an empty task.
  // Thread: any. Cost: O(1); no lock and no allocation once warm (inline-sized tasks).
  // The task is taken (moved from) only when the call succeeds: a rejected call leaves it intact.
  Timeout newTimeout(TimerTask&& task, std::chrono::nanoseconds delay);

  // The cheap re-arm of a task that schedules itself again (a heartbeat, a periodic check): from
  // inside the task of `running` (the handle it was called with), schedules that same task to
  // run again after `delay`, as newTimeout(task, delay) would, but the task stays where it is:
  // no move, no new entry, no allocation. Returns the new timeout's handle; `running` then
  // reads Expired (for as long as its slot remembers it, see timeout.h).
  // Returns an empty handle and changes nothing when the task cannot be re-armed in place: the
  // call is not made from inside the run of `running` on this thread (TimerHooks::executor runs
  // the tasks, or another task's handle was passed), or this run re-armed already. The caller
  // then uses newTimeout().
  // Throws as newTimeout() does: RejectedTimeoutError (nothing changed), TimerStoppedError (the
  // task is then not scheduled; it is kept until the timer is destroyed, as stop()'s are).
  // Thread: the thread running the task of `running`.
  Timeout tryRearm(const Timeout& running, std::chrono::nanoseconds delay);

  // Starts the worker now rather than on first use (Drive::Thread); no-op if started.
  // Throws TimerStoppedError after stop(). Thread: any.
  void start();

  // Stops the timer: wakes the worker at once, joins it, and returns every timeout that had
  // neither run nor been cancelled, each now marked cancelled (their tasks are kept until the
  // timer is destroyed; see Timeout::task()). A second call returns an empty vector. Users still
  // registered (use()) are told first: logged at Warn by name, each runs its stop handler (a
  // client closes itself with reason "the timer stopped": never left connected with its
  // heartbeats off).
  // Throws std::logic_error when called from inside a task of this timer. With Drive::Manual it
  // waits for an advance() running on another thread to finish first.
  // Thread: any other.
  std::vector<Timeout> stop();
  [[nodiscard]] bool isStopped() const noexcept;

  // Drive::Manual only: processes every tick due at clock->now() on the calling thread, running
  // their tasks tick by tick; returns how many tasks ran (or were dispatched). A timeout that a
  // task schedules never runs before that task returns: with delay <= 0 it is due on the tick
  // after the one being processed, so it runs in this call only if the clock is already past
  // that tick. Throws std::logic_error with Drive::Thread or when called from inside a task,
  // TimerStoppedError after stop().
  // Thread: one at a time; that thread is the wheel thread for the duration of the call.
  std::size_t advance();

  // When advance() next has a tick to process: the first tick boundary after now() (at most
  // tickDuration() ahead), or now() itself before the timer started (advance() starts it). For
  // a driver that calls advance() on its own schedule (net::LoopWheel). Thread: any.
  [[nodiscard]] std::chrono::nanoseconds nextTickTime() const noexcept;
  [[nodiscard]] Drive drive() const noexcept;

  // Timeouts scheduled and neither run nor cancelled. Exact: a cancel or expiry is reflected by
  // the time the call that caused it returns. Thread: any.
  [[nodiscard]] std::uint64_t pendingTimeouts() const noexcept;
  [[nodiscard]] TimerMetrics metrics() const;
  // Writes the wheel's metrics (wheelbeat_wheel_*, see metrics.h) into `out`: the counters of
  // metrics(), the lateness of every timeout run and the worker lag (how late each tick holding
  // timeouts was processed after its time: the worker's wake-up latency, or with Drive::Manual
  // how late advance() was called), both as duration histograms. Thread: any.
  void writeMetrics(MetricsWriter& out) const;

  // The timer's clock (TimerHooks::clock, or the steady clock): deadlines are measured on it, and
  // so should the timestamps tasks compare against (e.g. a channel's last read). Thread: any.
  [[nodiscard]] std::chrono::nanoseconds now() const noexcept;

  // The effective settings (after the 1 ms floor and the power-of-two rounding).
  [[nodiscard]] std::chrono::nanoseconds tickDuration() const noexcept;
  [[nodiscard]] std::int64_t ticksPerWheel() const noexcept;

  // Live HashedWheelTimer instances in this process (for the sharing warning and tests).
  [[nodiscard]] static std::int64_t instanceCount() noexcept;
  static constexpr std::int64_t kInstanceCountLimit = 64;

private:
  friend class Timeout;
  class Impl;
  Users users_;  // declared first: checked before anything else goes
  std::unique_ptr<Impl> impl_;
};

}  // namespace wheelbeat::core
