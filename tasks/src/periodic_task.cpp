#include <wheelbeat/tasks/periodic_task.h>

#include <stdexcept>
#include <utility>

namespace wheelbeat::tasks {

PeriodicTask::PeriodicTask(core::HashedWheelTimer& timer, std::weak_ptr<const void> owner,
                           Body body, std::shared_ptr<TaskListener> listener,
                           std::shared_ptr<TaskMetrics> metrics)
    : TimerChain(timer, std::move(listener), std::move(metrics)),
      owner_(std::move(owner)),
      body_(std::move(body)) {
  if (!body_) throw std::invalid_argument("wheelbeat: PeriodicTask: the body is empty");
}

void PeriodicTask::fire() {
  // Held for the whole run: the owner may drop its last reference meanwhile on another thread.
  const std::shared_ptr<const void> owner = owner_.lock();
  if (!owner) return finish("owner gone");
  runBody([this](std::chrono::nanoseconds now) { return body_(*this, now); });
}

}  // namespace wheelbeat::tasks
