#include "format.h"

#include <wheelbeat/tasks/heartbeat_tasks.h>

#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace wheelbeat::tasks {
namespace {

using detail::formatDuration;
using std::chrono::nanoseconds;

[[noreturn]] void reject(std::string_view field, std::string_view value,
                         std::string_view expected) {
  throw std::invalid_argument(
      fmt::format("HeartbeatOptions.{} = {} (expected: {})", field, value, expected));
}

nanoseconds saturatingTimes(nanoseconds d, std::int64_t k) noexcept {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(d.count(), k, &product)) {
    product = std::numeric_limits<std::int64_t>::max();
  }
  return nanoseconds(product);
}

nanoseconds effectiveIdle(const HeartbeatOptions& o) noexcept {
  return o.idleTimeout == nanoseconds(0) ? saturatingTimes(o.heartbeat, 3) : o.idleTimeout;
}

nanoseconds effectiveClose(const HeartbeatOptions& o) noexcept {
  return o.closeTimeout == nanoseconds(0) ? effectiveIdle(o) : o.closeTimeout;
}

const HeartbeatOptions& checked(const HeartbeatOptions& o) {
  validate(o);
  return o;
}

std::string readIdleReason(nanoseconds idle, nanoseconds timeout) {
  return fmt::format("read idle {} >= idleTimeout {}", formatDuration(idle),
                     formatDuration(timeout));
}

}  // namespace

HeartbeatOptions HeartbeatOptions::resolved() const {
  HeartbeatOptions r = *this;
  r.idleTimeout = effectiveIdle(*this);
  r.closeTimeout = effectiveClose(*this);
  while (r.seed == 0) {
    std::random_device device;
    r.seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }
  return r;
}

void validate(const HeartbeatOptions& o) {
  if (o.heartbeat <= nanoseconds(0)) reject("heartbeat", formatDuration(o.heartbeat), "> 0");
  const nanoseconds twice = saturatingTimes(o.heartbeat, 2);
  if (o.idleTimeout != nanoseconds(0) && o.idleTimeout < twice) {
    reject("idleTimeout", formatDuration(o.idleTimeout),
           fmt::format(">= 2 * heartbeat = {}", formatDuration(twice)));
  }
  if (o.closeTimeout < nanoseconds(0)) {
    reject("closeTimeout", formatDuration(o.closeTimeout), ">= 0");
  }
  try {
    validate(o.reconnectBackoff);
  } catch (const std::invalid_argument& e) {
    constexpr std::string_view kPrefix = "RetryOptions.";
    std::string_view message = e.what();
    if (message.starts_with(kPrefix)) message.remove_prefix(kPrefix.size());
    throw std::invalid_argument(fmt::format("HeartbeatOptions.reconnectBackoff.{}", message));
  }
}

// HeartbeatTimerTask

HeartbeatTimerTask::HeartbeatTimerTask(core::HashedWheelTimer& timer,
                                       std::weak_ptr<Channel> channel,
                                       const HeartbeatOptions& options,
                                       std::shared_ptr<TaskListener> listener,
                                       std::shared_ptr<TaskMetrics> metrics)
    : AbstractTimerTask(timer, std::move(channel), std::move(listener), std::move(metrics)),
      heartbeat_(checked(options).heartbeat),
      interval_(heartbeat_ / 3) {}

nanoseconds HeartbeatTimerTask::runOnce(Channel& channel, nanoseconds now) {
  if (channel.isConnected() &&
      (now - channel.lastRead() >= heartbeat_ || now - channel.lastWrite() >= heartbeat_)) {
    channel.sendHeartbeat();
    count(&TaskMetrics::heartbeatsSent);
    notify([&channel](TaskListener& l) { l.onHeartbeatSent(channel); });
  }
  return interval_;
}

// ReconnectTimerTask

ReconnectTimerTask::ReconnectTimerTask(core::HashedWheelTimer& timer,
                                       std::weak_ptr<Channel> channel,
                                       const HeartbeatOptions& options,
                                       std::shared_ptr<TaskListener> listener,
                                       std::shared_ptr<TaskMetrics> metrics)
    : ReconnectTimerTask(Resolved{}, timer, std::move(channel), checked(options).resolved(),
                         std::move(listener), std::move(metrics)) {}

ReconnectTimerTask::ReconnectTimerTask(Resolved /*tag*/, core::HashedWheelTimer& timer,
                                       std::weak_ptr<Channel> channel,
                                       const HeartbeatOptions& options,
                                       std::shared_ptr<TaskListener> listener,
                                       std::shared_ptr<TaskMetrics> metrics)
    : AbstractTimerTask(timer, std::move(channel), std::move(listener), std::move(metrics)),
      idleTimeout_(options.idleTimeout),
      interval_(idleTimeout_ / 3),
      retry_(options.reconnectBackoff, timer.now(), options.seed) {}

nanoseconds ReconnectTimerTask::runOnce(Channel& channel, nanoseconds now) {
  // In flight: its connect timeout ends it, and the owner's wake() brings us back then.
  if (channel.isConnecting()) return interval_;
  if (!channel.isConnected()) return attemptIfDue(channel, now);
  scheduled_.reset();  // connected again by someone else: what was planned is moot
  const nanoseconds readIdle = now - channel.lastRead();
  if (readIdle >= idleTimeout_ && !deferredForInput(channel)) {
    return attemptNow(channel, readIdleReason(readIdle, idleTimeout_), now);
  }
  retry_.reset(now);  // healthy: the next outage starts again at the initial delay
  return interval_;
}

// Disconnected: the attempt granted earlier once its time has come, else a new grant.
nanoseconds ReconnectTimerTask::attemptIfDue(Channel& channel, nanoseconds now) {
  if (!scheduled_) return scheduleAttempt(channel, now);
  // A wake() before the time (another close event) keeps the schedule.
  if (now < scheduled_->at) return scheduled_->at - now;
  const Scheduled due = *scheduled_;
  scheduled_.reset();
  channel.reconnect("disconnected");
  count(&TaskMetrics::reconnectsStarted);
  notify(
      [&](TaskListener& l) { l.onReconnect(channel, "disconnected", due.attempt, due.backoff); });
  return interval_;  // the attempt's end (connected, or closed: wake()) decides what follows
}

nanoseconds ReconnectTimerTask::scheduleAttempt(Channel& channel, nanoseconds now) {
  const Decision decision = retry_.next(now, "disconnected");
  if (!granted(channel, decision)) return interval_;
  scheduled_ = Scheduled{now + decision.delay, decision.delay, decision.attempt};
  return decision.delay;
}

// False, and the chain ends (reported), when the policy refused.
bool ReconnectTimerTask::granted(Channel& channel, const Decision& decision) {
  if (decision.retry) return true;
  count(&TaskMetrics::giveUps);
  notify([&](TaskListener& l) { l.onGiveUp(channel, decision.reason); });
  finish(fmt::format("gave up: {}", giveUpName(decision.reason)));
  return false;
}

// Half-open: the connection is torn down and attempt 1 (normally) made at once.
nanoseconds ReconnectTimerTask::attemptNow(Channel& channel, std::string_view reason,
                                           nanoseconds now) {
  const Decision decision = retry_.next(now, "read-idle");
  if (!granted(channel, decision)) return interval_;
  channel.reconnect(reason);
  count(&TaskMetrics::reconnectsStarted);
  notify(
      [&](TaskListener& l) { l.onReconnect(channel, reason, decision.attempt, nanoseconds(0)); });
  return interval_;
}

// CloseTimerTask

CloseTimerTask::CloseTimerTask(core::HashedWheelTimer& timer, std::weak_ptr<Channel> channel,
                               const HeartbeatOptions& options,
                               std::shared_ptr<TaskListener> listener,
                               std::shared_ptr<TaskMetrics> metrics)
    : AbstractTimerTask(timer, std::move(channel), std::move(listener), std::move(metrics)),
      closeTimeout_(effectiveClose(checked(options))),
      interval_(closeTimeout_ / 3) {}

nanoseconds CloseTimerTask::runOnce(Channel& channel, nanoseconds now) {
  const nanoseconds readIdle = now - channel.lastRead();
  const nanoseconds writeIdle = now - channel.lastWrite();
  if (readIdle <= closeTimeout_ && writeIdle <= closeTimeout_) return interval_;
  if (deferredForInput(channel)) return interval_;

  const bool read = readIdle > closeTimeout_;
  const std::string reason =
      fmt::format("{} idle {} > closeTimeout {}", read ? "read" : "write",
                  formatDuration(read ? readIdle : writeIdle), formatDuration(closeTimeout_));
  channel.close(reason);  // if this throws, the next check tries again
  finish("closed idle channel");
  count(&TaskMetrics::closes);
  notify([&](TaskListener& l) { l.onClose(channel, reason); });
  return interval_;
}

}  // namespace wheelbeat::tasks
