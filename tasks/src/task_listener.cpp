#include <wheelbeat/tasks/task_listener.h>

#include <fmt/format.h>

namespace wheelbeat::tasks {

void TaskListener::onHeartbeatSent(Channel& /*channel*/) {}
void TaskListener::onReconnect(Channel& /*channel*/, std::string_view /*reason*/,
                               std::int64_t /*attempt*/, std::chrono::nanoseconds /*backoff*/) {}
void TaskListener::onGiveUp(Channel& /*channel*/, GiveUp /*reason*/) {}
void TaskListener::onClose(Channel& /*channel*/, std::string_view /*reason*/) {}
// By value, as std::rethrow_exception takes it: a listener may keep it.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void TaskListener::onTaskError(std::exception_ptr /*error*/) {}
void TaskListener::onTaskEnded(std::string_view /*why*/) {}

std::string TaskMetricsSnapshot::toString() const {
  return fmt::format(
      "heartbeatsSent={} reconnectsStarted={} closes={} giveUps={} taskErrors={} runs={} "
      "idleDeferred={}",
      heartbeatsSent, reconnectsStarted, closes, giveUps, taskErrors, runs, idleDeferred);
}

TaskMetricsSnapshot TaskMetrics::snapshot() const noexcept {
  constexpr auto relaxed = std::memory_order_relaxed;
  TaskMetricsSnapshot s;
  s.heartbeatsSent = heartbeatsSent.load(relaxed);
  s.reconnectsStarted = reconnectsStarted.load(relaxed);
  s.closes = closes.load(relaxed);
  s.giveUps = giveUps.load(relaxed);
  s.taskErrors = taskErrors.load(relaxed);
  s.runs = runs.load(relaxed);
  s.idleDeferred = idleDeferred.load(relaxed);
  return s;
}

}  // namespace wheelbeat::tasks
