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

void writeMetrics(const TaskMetrics& metrics, core::MetricsWriter& out) {
  const TaskMetricsSnapshot s = metrics.snapshot();
  auto d = [](std::uint64_t v) { return static_cast<double>(v); };
  out.counter("wheelbeat_tasks_heartbeats_sent_total", d(s.heartbeatsSent));
  out.counter("wheelbeat_tasks_reconnects_total", d(s.reconnectsStarted));
  out.counter("wheelbeat_tasks_give_ups_total", d(s.giveUps));
  out.counter("wheelbeat_tasks_idle_closes_total", d(s.closes));
  out.counter("wheelbeat_tasks_idle_deferred_total", d(s.idleDeferred));
  out.counter("wheelbeat_tasks_errors_total", d(s.taskErrors));
  out.counter("wheelbeat_tasks_runs_total", d(s.runs));
}

}  // namespace wheelbeat::tasks
