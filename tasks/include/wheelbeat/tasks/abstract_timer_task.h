// AbstractTimerTask: a task that re-arms itself on the shared wheel and watches one Channel
// (Dubbo's AbstractTimerTask), the base of HeartbeatTimerTask, ReconnectTimerTask and
// CloseTimerTask. The chain itself (re-arming, a throwing body, cancel(), wake(), lifetime) is
// TimerChain's: see timer_chain.h. What this class adds:
//   - The task holds its channel by std::weak_ptr. Each run first locks it: the chain ends,
//     without running the body, if the channel is gone ("channel gone") or isClosed() ("channel
//     closed"); the listener's onTaskEnded() is told why. The channel stays alive for the run.
//   - Otherwise the body runOnce(channel, timer.now()) runs, and returns the delay until the next
//     run (<= 0: the next tick).
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/channel.h>
#include <wheelbeat/tasks/task_listener.h>
#include <wheelbeat/tasks/timer_chain.h>

#include <chrono>
#include <memory>

namespace wheelbeat::tasks {

class AbstractTimerTask : public TimerChain {
protected:
  // `listener` and `metrics` may be null; both may be shared with other tasks.
  AbstractTimerTask(core::HashedWheelTimer& timer, std::weak_ptr<Channel> channel,
                    std::shared_ptr<TaskListener> listener,
                    std::shared_ptr<TaskMetrics> metrics = nullptr);

  // The body: one check of `channel` at `now` (timer.now()), returning the delay until the next
  // run. It may call finish(why) to end the chain. Thread: the wheel thread.
  virtual std::chrono::nanoseconds runOnce(Channel& channel, std::chrono::nanoseconds now) = 0;

  // Before acting on idleness: true (and TaskMetrics::idleDeferred counted) if the channel has
  // unread input, i.e. it is not idle, only not read yet. Thread: the wheel thread.
  bool deferredForInput(const Channel& channel) noexcept;

private:
  void fire() final;

  const std::weak_ptr<Channel> channel_;
};

}  // namespace wheelbeat::tasks
