// Channel: what a connection offers the timer tasks (heartbeat, reconnect, close-idle). net/
// implements it over a libuv TCP channel; the tests use a fake. tasks/ holds a channel only by
// std::weak_ptr: a channel destroyed by its owner ends its tasks at their next run.
//
// Time
//   lastRead() and lastWrite() are on the timer's clock (HashedWheelTimer::now()). A channel
//   that has not read or written yet reports the time it connected (never 0), and a (re)connect
//   stamps both: otherwise a fresh connection would look idle since the epoch and the reconnect
//   task would tear it down again at its first check.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <chrono>
#include <string>
#include <string_view>

namespace wheelbeat::tasks {
class PhiAccrualDetector;
}

namespace wheelbeat::tasks {

class Channel {
public:
  virtual ~Channel() = default;

  // Queries. Thread: any (the wheel thread reads them on every check). Cheap: atomics in net/.
  [[nodiscard]] virtual std::chrono::nanoseconds lastRead() const noexcept = 0;   // last inbound
  [[nodiscard]] virtual std::chrono::nanoseconds lastWrite() const noexcept = 0;  // last outbound
  [[nodiscard]] virtual bool isConnected() const noexcept = 0;
  // A connect attempt is in flight (bounded by its own connect timeout). The reconnect task
  // neither starts another nor counts it as failed meanwhile. Thread: any. Default: false.
  [[nodiscard]] virtual bool isConnecting() const noexcept { return false; }
  // Closed for good by its owner: every task of this channel ends at its next run.
  [[nodiscard]] virtual bool isClosed() const noexcept = 0;
  // Activity the timestamps do not show yet: input waiting unread, e.g. bytes in the socket's
  // receive buffer while the channel's event loop is busy elsewhere. The reconnect and close
  // tasks ask before acting on idleness, so a lagging loop cannot make a live peer look idle
  // (the decision is taken on the wheel thread, the timestamps are written by the loop).
  // Thread: any. Default: false (the timestamps are always complete).
  [[nodiscard]] virtual bool hasUnreadInput() const noexcept { return false; }
  // The φ-accrual detector fed with this channel's inbound frames, if it keeps one
  // (HeartbeatOptions::detector = Phi). Thread: any. Default: none.
  [[nodiscard]] virtual const PhiAccrualDetector* phiDetector() const noexcept { return nullptr; }
  // How the tasks' log lines name this channel, e.g. "client 127.0.0.1:20880". Called only for a
  // line that is logged (core::logEnabled()). Thread: any. Default: "channel".
  [[nodiscard]] virtual std::string logName() const { return "channel"; }

  // Actions. Thread: the wheel thread (inside a task). An implementation hands the work to its
  // own loop and returns at once: it must never block the wheel. An exception thrown here is
  // caught by the calling task (counted in TaskMetrics::taskErrors, reported to the listener).
  virtual void sendHeartbeat() = 0;
  // Force-disconnect if connected (also a half-open connection), then connect again.
  virtual void reconnect(std::string_view reason) = 0;
  virtual void close(std::string_view reason) = 0;
};

}  // namespace wheelbeat::tasks
