// TaskListener and TaskMetrics: how the decisions of the timer tasks (heartbeat sent, reconnect
// started, give-up, idle close, task error, task end) are observed.
//
// Both are optional and may be shared: give the same listener and the same TaskMetrics to the
// tasks of every channel (or of a group of channels) to observe them together.
#pragma once

#include <wheelbeat/core/metrics.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

namespace wheelbeat::tasks {

class Channel;

// Every method is a no-op: override the ones you need (a PeriodicTask only calls onTaskError and
// onTaskEnded). Called on the wheel thread, from inside the task that made the decision, right
// after the channel action it reports; keep them short.
// An exception thrown by a listener method is caught and dropped (the task goes on, and the
// exception is not counted as a task error). A listener shared by several tasks is called by
// one thread at a time only if the timer has no executor (TimerHooks::executor).
class TaskListener {
public:
  virtual ~TaskListener() = default;

  // HeartbeatTimerTask called channel.sendHeartbeat().
  virtual void onHeartbeatSent(Channel& channel);
  // ReconnectTimerTask called channel.reconnect(reason); `attempt` counts from 1 since the last
  // check that found the channel healthy; `backoff` is the retry policy's delay the attempt
  // waited for since the outage (or the previous attempt's failure) was seen; 0 for an attempt
  // made at once (a half-open connection torn down).
  virtual void onReconnect(Channel& channel, std::string_view reason, std::int64_t attempt,
                           std::chrono::nanoseconds backoff);
  // ReconnectTimerTask stopped reconnecting because the retry policy refused (never with
  // maxAttempts -1 and no deadline, budget or error rules); the task then ends.
  virtual void onGiveUp(Channel& channel, GiveUp reason);
  // CloseTimerTask called channel.close(reason); the task then ends.
  virtual void onClose(Channel& channel, std::string_view reason);
  // A task body (or a channel action it called) threw; the task re-arms as usual.
  virtual void onTaskError(std::exception_ptr error);
  // A task ended for a reason a run found: "channel gone", "channel closed", "gave up:
  // max-attempts" (any giveUpName()), "closed idle channel", "timer stopped", "re-arm rejected";
  // a PeriodicTask: "owner gone", or the reason its body passed to finish(). Not called for
  // cancel(): its caller knows.
  virtual void onTaskEnded(std::string_view why);
};

// Plain numbers read from TaskMetrics.
struct TaskMetricsSnapshot {
  std::uint64_t heartbeatsSent = 0;     // Channel::sendHeartbeat() calls
  std::uint64_t reconnectsStarted = 0;  // Channel::reconnect() calls
  std::uint64_t closes = 0;             // Channel::close() calls by CloseTimerTask
  std::uint64_t giveUps = 0;            // reconnect tasks that gave up
  std::uint64_t taskErrors = 0;         // runs whose body threw
  std::uint64_t runs = 0;               // task bodies run (a throwing body counts)
  // Idle-looking checks (reconnect, close) that found unread input and did not act: the
  // channel's loop is behind. A steady rise means an overloaded loop, not dead peers.
  std::uint64_t idleDeferred = 0;

  friend bool operator==(const TaskMetricsSnapshot&, const TaskMetricsSnapshot&) = default;
  // One line, e.g. "heartbeatsSent=3 reconnectsStarted=0 closes=0 giveUps=0 taskErrors=0 runs=9".
  [[nodiscard]] std::string toString() const;
};

// Counters shared by every task given the same object. Relaxed atomics: each counter is exact,
// but a snapshot taken while tasks run is not one consistent instant across counters.
// Thread: any.
struct TaskMetrics {
  std::atomic<std::uint64_t> heartbeatsSent{0};
  std::atomic<std::uint64_t> reconnectsStarted{0};
  std::atomic<std::uint64_t> closes{0};
  std::atomic<std::uint64_t> giveUps{0};
  std::atomic<std::uint64_t> taskErrors{0};
  std::atomic<std::uint64_t> runs{0};
  std::atomic<std::uint64_t> idleDeferred{0};

  [[nodiscard]] TaskMetricsSnapshot snapshot() const noexcept;
};

// The counters of `metrics` as wheelbeat_tasks_* (core/metrics.h) into `out`: heartbeatsSent,
// reconnectsStarted (reconnects), giveUps, closes (idle_closes), idleDeferred, taskErrors
// (errors), runs. Thread: any.
void writeMetrics(const TaskMetrics& metrics, core::MetricsWriter& out);

}  // namespace wheelbeat::tasks
