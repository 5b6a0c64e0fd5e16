// LoopWheel: drives a HashedWheelTimer from an EventLoop, so that the wheel's tasks run on the
// loop's thread and the process needs no wheel thread.
//
// Why
//   By default the wheel has a thread of its own: it decides (a heartbeat is due) and queues, and
//   the loop writes. Each heartbeat then crosses threads (the channel's lock, its queue and its
//   reference count change cores twice), and a process runs two threads for one job. A
//   LoopWheel runs the tasks where the writes happen and saves that thread; since a send from
//   another thread hands its flush over with one compare-and-swap, the two cost about the same
//   per heartbeat (benchmarks H1 and H2, `--impl wheelbeat-loopwheel`: docs/performance.md).
//   Use it for a process, or a wheel, served by one loop; with an EventLoopGroup keep the wheel's
//   own thread (a wheel on one loop of the group would run every loop's tasks there).
//
// Use
//     core::TimerHooks hooks;
//     hooks.drive = core::Drive::Manual;
//     core::HashedWheelTimer timer(core::WheelOptions{}, hooks);
//     net::EventLoop loop;
//     net::LoopWheel driver(loop, timer);  // before the first client or server uses the timer
//   The loop and the timer must outlive the LoopWheel: destroy (or close()) it after the clients
//   and servers that use the timer, before the timer and before the loop object.
//   EventLoop::stop() also ends the driving.
//
// Timing
//   The loop calls timer.advance() at every tick boundary of the timer's clock (one libuv timer,
//   re-armed after each call for the next boundary, nextTickTime()): timeouts keep the wheel's
//   contract (never early; at most one tick late plus the loop's own delay: a loop busy with I/O
//   delays the wheel as it delays everything else on it). The loop wakes once per tick also
//   while nothing is pending (10 wake-ups a second at the default 100 ms tick).
//
// Threads
//   The constructor, close() and the destructor: any thread (on the loop thread they run inline,
//   also from inside a task). The timer's tasks run on the loop thread: they must not block.
//   newTimeout() and cancel() stay callable from any thread.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>

#include <cstdint>
#include <memory>

namespace wheelbeat::net {

class LoopWheel {
public:
  // Starts driving `timer` from `loop`. Throws std::invalid_argument if the timer has a thread
  // of its own ("LoopWheel: timer.drive() = Thread (expected: Manual, set in TimerHooks::drive)"),
  // core::TimerStoppedError if it is stopped, std::runtime_error if the loop is stopping or
  // stopped. Nothing is left running when it throws.
  LoopWheel(EventLoop& loop, core::HashedWheelTimer& timer);
  ~LoopWheel();  // close()

  LoopWheel(const LoopWheel&) = delete;
  LoopWheel& operator=(const LoopWheel&) = delete;

  // Stops driving: advance() is not called after it returns (timeouts still pending stay in the
  // timer: timer.stop() hands them back). Idempotent; a no-op once the loop stopped.
  void close();

  // Calls of advance() so far (each processes every tick due then). Thread: any.
  [[nodiscard]] std::uint64_t advances() const noexcept;

  class Core;

private:
  EventLoop& loop_;
  std::shared_ptr<Core> core_;
  // The loop and the timer must outlive this object: destroying either first ends the process
  // with a message naming "LoopWheel" (core/users.h). A timer stopped first is no misuse (the
  // wheel then has nothing left to advance), hence the timer's use is quiet.
  core::Users::Use loopUse_;
  core::Users::Use timerUse_;
};

}  // namespace wheelbeat::net
