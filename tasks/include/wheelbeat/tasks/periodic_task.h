// PeriodicTask: a self-re-arming task on the shared wheel with no Channel: periodic work of any
// owner (registration renewals, expiry sweeps, cache refreshes). Same chain rules as the channel
// tasks (TimerChain, timer_chain.h): held by std::shared_ptr, the wheel holds a std::weak_ptr,
// cancel() drops the pending timeout at once, a throwing body is caught, counted
// (TaskMetrics::taskErrors) and reported (TaskListener::onTaskError) and the chain re-arms with
// the last delay, wake() moves the next run to the next tick.
//
//   auto renew = PeriodicTask::create(timer, weakOwner, [](Owner& o, nanoseconds now) {
//     o.renew();
//     return 500ms;                 // the delay until the next run (<= 0: the next tick)
//   });
//   renew->start(500ms);            // the first run 500 ms from now
//   ...
//   renew->cancel();                // or drop the last shared_ptr, or let the owner go
//
// The owner
//   The task holds its owner by std::weak_ptr (any type): each run first locks it; if it is gone
//   the chain ends without running the body ("owner gone", TaskListener::onTaskEnded). The owner
//   stays alive until the run returns, so the last reference to it may be dropped on the wheel
//   thread. The owner typically holds the task (std::shared_ptr) and cancel()s it when it shuts
//   down: no cycle, since the task only holds a weak_ptr back.
//
// Times
//   A run due at t runs at the first tick >= t (HashedWheelTimer's rounding); the next run is
//   armed when the body returns, `delay` from then: with a constant delay d and a timer of tick
//   k (d a multiple of k), runs happen at start + d, start + 2d, ... exactly.
//
// The body runs on the wheel thread: it must be short and never block. Work that belongs to
// another thread (an event loop) is posted there from the body.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/task_listener.h>
#include <wheelbeat/tasks/timer_chain.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

namespace wheelbeat::tasks {

class PeriodicTask final : public TimerChain {
public:
  // One run at `now` (timer.now()), returning the delay until the next run (<= 0: the next tick).
  // It may call task.finish(why), task.cancel() or task.wake(). Thread: the wheel thread.
  using Body =
      std::function<std::chrono::nanoseconds(PeriodicTask& task, std::chrono::nanoseconds now)>;

  // `owner`: see the file comment; an empty weak_ptr counts as gone (the first run ends the
  // chain). `body` must not be empty (std::invalid_argument). `listener` and `metrics` may be
  // null and may be shared with other tasks.
  PeriodicTask(core::HashedWheelTimer& timer, std::weak_ptr<const void> owner, Body body,
               std::shared_ptr<TaskListener> listener = nullptr,
               std::shared_ptr<TaskMetrics> metrics = nullptr);

  // A task whose body gets the locked owner: fn(Owner&, nanoseconds now) -> nanoseconds. Not
  // started: call start(firstDelay).
  template <typename Owner, typename Fn>
  [[nodiscard]] static std::shared_ptr<PeriodicTask> create(
      core::HashedWheelTimer& timer, const std::weak_ptr<Owner>& owner, Fn fn,
      std::shared_ptr<TaskListener> listener = nullptr,
      std::shared_ptr<TaskMetrics> metrics = nullptr) {
    Body body = [owner, fn = std::move(fn)](PeriodicTask& task, std::chrono::nanoseconds now) {
      // The run already holds the owner (see fire()): this lock only recovers its type.
      const std::shared_ptr<Owner> self = owner.lock();
      if (!self) {
        task.finish("owner gone");
        return std::chrono::nanoseconds(0);
      }
      return std::chrono::nanoseconds(fn(*self, now));
    };
    return std::make_shared<PeriodicTask>(timer, owner, std::move(body), std::move(listener),
                                          std::move(metrics));
  }

  // From inside the body only: end the chain after this run (no re-arm); the listener's
  // onTaskEnded(why) is called once the body returns. Thread: the wheel thread.
  using TimerChain::finish;

private:
  void fire() override;

  const std::weak_ptr<const void> owner_;
  const Body body_;
};

}  // namespace wheelbeat::tasks
