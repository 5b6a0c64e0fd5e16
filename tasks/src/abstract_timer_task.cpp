#include <wheelbeat/tasks/abstract_timer_task.h>

#include <utility>

namespace wheelbeat::tasks {

AbstractTimerTask::AbstractTimerTask(core::HashedWheelTimer& timer, std::weak_ptr<Channel> channel,
                                     std::shared_ptr<TaskListener> listener,
                                     std::shared_ptr<TaskMetrics> metrics)
    : TimerChain(timer, std::move(listener), std::move(metrics)), channel_(std::move(channel)) {}

void AbstractTimerTask::fire() {
  // Held for the whole run: the owner may drop the channel meanwhile on another thread.
  const std::shared_ptr<Channel> channel = channel_.lock();
  if (!channel) return finish("channel gone");
  if (channel->isClosed()) return finish("channel closed");
  runBody([this, &channel](std::chrono::nanoseconds now) { return runOnce(*channel, now); });
}

// The second look before acting on idleness (Channel::hasUnreadInput): unread input means the
// peer is alive and the loop is behind, not that the connection is idle.
bool AbstractTimerTask::deferredForInput(const Channel& channel) noexcept {
  if (!channel.hasUnreadInput()) return false;
  count(&TaskMetrics::idleDeferred);
  return true;
}

}  // namespace wheelbeat::tasks
