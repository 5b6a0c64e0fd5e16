#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/core/option_error.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace wheelbeat::tasks {
namespace {

using core::formatDuration;
using std::chrono::nanoseconds;

[[noreturn]] void reject(std::string field, std::string value, std::string expected,
                         std::string other = {}, std::string otherExpected = {}) {
  throw core::OptionError("HeartbeatOptions", std::move(field), std::move(value),
                          std::move(expected), std::move(other), std::move(otherExpected));
}

nanoseconds saturatingTimes(nanoseconds d, std::int64_t k) noexcept {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(d.count(), k, &product)) {
    product = std::numeric_limits<std::int64_t>::max();
  }
  return nanoseconds(product);
}

nanoseconds effectiveIdle(const HeartbeatOptions& o) noexcept {
  return o.idleTimeout == nanoseconds(0) ? saturatingTimes(o.interval, 3) : o.idleTimeout;
}

nanoseconds effectiveClose(const HeartbeatOptions& o) noexcept {
  return o.closeTimeout == nanoseconds(0) ? effectiveIdle(o) : o.closeTimeout;
}

// Validated against the wheel that will run the task.
const HeartbeatOptions& checked(const HeartbeatOptions& o, const core::HashedWheelTimer& timer) {
  validate(o, timer.tickDuration());
  return o;
}

// A period of a task on a wheel of ticks `tick` must span at least 2 ticks: the wheel fires a
// timeout at the first tick at or after its deadline, so a shorter period is stretched to the tick
// and idle times measured against it are off by up to a whole period.
void atLeastTwoTicks(std::string field, nanoseconds value, nanoseconds tick) {
  const nanoseconds least = saturatingTimes(tick, 2);
  if (value < least) {
    reject(std::move(field), core::formatDurationExact(value),
           fmt::format("at least 2 wheel ticks = {}; the wheel's tick is {}",
                       core::formatDurationExact(least), core::formatDurationExact(tick)));
  }
}

// Runs a nested validate(), renaming its messages: "RetryOptions.maxDelay = ..." becomes
// "HeartbeatOptions.reconnect.maxDelay = ...".
template <typename Check>
void nested(std::string_view field, Check check) {
  try {
    check();
  } catch (const core::OptionError& e) {
    throw e.within("HeartbeatOptions", field);
  }
}

// How often the reconnect and close tasks check: a third of their timeout, or with the φ detector
// a third of the heartbeat (φ can cross its threshold well before the timeout).
nanoseconds checkEvery(const HeartbeatOptions& o, nanoseconds timeout) noexcept {
  return o.detector == DetectorKind::Phi ? std::min(timeout, o.interval) / 3 : timeout / 3;
}

// The fixed idle rule of a healthy channel cannot hold before `untilDue` from now (its idle times
// only restart; they never jump ahead), so of the checks every `interval` from now, the ones
// before that are skipped: the first that could act is the next. Decisions are exactly those of a
// check every interval (Dubbo's cadence, and the tolerance of pauses benchmark D1 rests on), with
// fewer runs: at the defaults a channel kept alive by heartbeats is looked at every 2-3 intervals.
nanoseconds skipToDue(nanoseconds untilDue, nanoseconds interval) noexcept {
  if (untilDue <= interval) return interval;
  const std::int64_t checks = (untilDue.count() + interval.count() - 1) / interval.count();
  return interval * checks;
}

// "phi 8.4 >= 8 after read idle 2.3s", or "" while the channel's detector does not suspect it
// (or it keeps none).
std::string suspicion(const Channel& channel, nanoseconds now, nanoseconds readIdle) {
  const PhiAccrualDetector* detector = channel.phiDetector();
  if (detector == nullptr) return {};
  const double phi = detector->phi(now);
  if (phi < detector->options().threshold) return {};
  return fmt::format("phi {:.1f} >= {} after read idle {}", phi, detector->options().threshold,
                     formatDuration(readIdle));
}

// The decision lines of the tasks, at Debug (give-up at Warn: it ends the service). Each checks
// the level first: logName() builds a string.
template <typename... Args>
void logDecision(core::LogLevel level, const Channel& channel, fmt::format_string<Args...> format,
                 Args&&... args) noexcept {
  if (!core::logEnabled(level)) return;
  try {
    core::log(level, "{}: {}", channel.logName(), fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {  // NOLINT(bugprone-empty-catch): a log line never fails the task
  }
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
  if (o.interval <= nanoseconds(0))
    reject("interval", core::formatDurationExact(o.interval), "> 0");
  const nanoseconds twice = saturatingTimes(o.interval, 2);
  if (o.idleTimeout != nanoseconds(0) && o.idleTimeout < twice) {
    reject("idleTimeout", core::formatDurationExact(o.idleTimeout),
           fmt::format(">= 2 * interval = {}", core::formatDurationExact(twice)), "interval",
           fmt::format("<= idleTimeout / 2 = {}", core::formatDurationExact(o.idleTimeout / 2)));
  }
  if (o.closeTimeout < nanoseconds(0)) {
    reject("closeTimeout", core::formatDurationExact(o.closeTimeout), ">= 0");
  }
  nested("reconnect", [&] { validate(o.reconnect); });
  nested("phi", [&] { validate(o.phi); });
}

void validate(const HeartbeatOptions& o, nanoseconds tick) {
  validate(o);
  atLeastTwoTicks("interval", o.interval, tick);
  if (o.idleTimeout != nanoseconds(0)) atLeastTwoTicks("idleTimeout", o.idleTimeout, tick);
  if (o.closeTimeout != nanoseconds(0)) atLeastTwoTicks("closeTimeout", o.closeTimeout, tick);
}

// HeartbeatTimerTask

HeartbeatTimerTask::HeartbeatTimerTask(core::HashedWheelTimer& timer,
                                       std::weak_ptr<Channel> channel,
                                       const HeartbeatOptions& options,
                                       std::shared_ptr<TaskListener> listener,
                                       std::shared_ptr<TaskMetrics> metrics)
    : AbstractTimerTask(timer, std::move(channel), std::move(listener), std::move(metrics)),
      heartbeat_(checked(options, timer).interval),
      interval_(heartbeat_ / 3),
      spreadState_(options.spreadFirst ? options.resolved().seed | 1 : 0),
      phaseAt_(options.spreadFirst ? kPickPhase : kNoPhase) {}

// Dubbo's rule (a heartbeat once read- or write-idle >= interval), re-armed for the channel's own
// next deadline as Netty's IdleStateHandler does: a check before min(lastRead, lastWrite) +
// heartbeat could not send (the timestamps only move forward), so the task sleeps until then
// instead of waking every interval / 3. After a send it sleeps a whole heartbeat (afterSend()).
// So one run per heartbeat, where checks every interval / 3 took 3 to 4.
nanoseconds HeartbeatTimerTask::runOnce(Channel& channel, nanoseconds now) {
  if (!channel.isConnected()) {
    phaseAt_ = spreadState_ != 0 ? kPickPhase : kNoPhase;  // the next connection picks its own
    return interval_;  // a (re)connect stamps both: look again soon
  }
  const nanoseconds readIdle = now - channel.lastRead();
  const nanoseconds writeIdle = now - channel.lastWrite();
  const nanoseconds idle = std::max(readIdle, writeIdle);
  if (phaseAt_ == kPickPhase) {  // spreadFirst: this connection's phase
    phaseAt_ = idle < heartbeat_ ? (now + pickPhase(heartbeat_ - idle)).count() : kNoPhase;
  }
  const bool phased = phaseAt_ != kNoPhase;
  if (idle < heartbeat_ && !(phased && now.count() >= phaseAt_)) {
    return phased ? std::min(heartbeat_ - idle, nanoseconds(phaseAt_) - now) : heartbeat_ - idle;
  }
  phaseAt_ = kNoPhase;
  retryAfter(interval_);  // if sendHeartbeat() throws: the next check, as before
  channel.sendHeartbeat();
  logDecision(core::LogLevel::Debug, channel, "heartbeat sent (read idle {}, write idle {})",
              core::human(readIdle), core::human(writeIdle));
  count(&TaskMetrics::heartbeatsSent);
  notify([&channel](TaskListener& l) { l.onHeartbeatSent(channel); });
  return afterSend(channel, now);
}

// The heartbeat's write resets the write idleness: nothing can be due before one heartbeat after
// it, and a peer that stays silent gets its next heartbeat then (once per heartbeat interval, as
// Dubbo's Netty transport sends them), not at every check. A write the loop has not made yet
// happens after `now`: the check goes to the first tick strictly after now + heartbeat, which is
// that write's own deadline rounded up to the tick when the loop wrote within one tick (a later
// write only re-arms once more for what is left).
nanoseconds HeartbeatTimerTask::afterSend(const Channel& channel, nanoseconds now) const noexcept {
  return channel.lastWrite() >= now ? heartbeat_ : heartbeat_ + nanoseconds(1);
}

// Uniform in [0, until): the first heartbeat of a connection, at its own point of the interval.
nanoseconds HeartbeatTimerTask::pickPhase(nanoseconds until) noexcept {
  // splitmix64's mix over one word of state, stepped by an even constant: the state stays odd,
  // so never 0 (which means "off").
  spreadState_ += 0x3c6ef372fe94f82aULL;
  std::uint64_t z = spreadState_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return nanoseconds(static_cast<std::int64_t>(z % static_cast<std::uint64_t>(until.count())));
}

// ReconnectTimerTask

ReconnectTimerTask::ReconnectTimerTask(core::HashedWheelTimer& timer,
                                       std::weak_ptr<Channel> channel,
                                       const HeartbeatOptions& options,
                                       std::shared_ptr<TaskListener> listener,
                                       std::shared_ptr<TaskMetrics> metrics)
    : ReconnectTimerTask(Resolved{}, timer, std::move(channel), checked(options, timer).resolved(),
                         std::move(listener), std::move(metrics)) {}

ReconnectTimerTask::ReconnectTimerTask(Resolved /*tag*/, core::HashedWheelTimer& timer,
                                       std::weak_ptr<Channel> channel,
                                       const HeartbeatOptions& options,
                                       std::shared_ptr<TaskListener> listener,
                                       std::shared_ptr<TaskMetrics> metrics)
    : AbstractTimerTask(timer, std::move(channel), std::move(listener), std::move(metrics)),
      idleTimeout_(options.idleTimeout),
      interval_(checkEvery(options, idleTimeout_)),
      phi_(options.detector == DetectorKind::Phi),
      idleRule_(phi_, idleTimeout_ / 3),
      retry_(options.reconnect, timer.now(), options.seed) {}

nanoseconds ReconnectTimerTask::runOnce(Channel& channel, nanoseconds now) {
  // In flight: its connect timeout ends it, and the owner's wake() brings us back then.
  if (channel.isConnecting()) return interval_;
  if (!channel.isConnected()) return attemptIfDue(channel, now);
  scheduled_.reset();  // connected again by someone else: what was planned is moot
  const nanoseconds readIdle = now - channel.lastRead();
  std::string dead;
  if (idleRule_.due(now) && readIdle >= idleTimeout_) {
    dead = readIdleReason(readIdle, idleTimeout_);
  } else if (phi_) {
    dead = suspicion(channel, now, readIdle);
  }
  if (!dead.empty()) return deferredForInput(channel) ? interval_ : attemptNow(channel, dead, now);
  retry_.reset(now);  // healthy: the next outage starts again at the initial delay
  return phi_ ? interval_ : skipToDue(idleTimeout_ - readIdle, interval_);
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
  logDecision(core::LogLevel::Debug, channel, "reconnect #{} in {}: disconnected", decision.attempt,
              core::human(decision.delay));
  return decision.delay;
}

// False, and the chain ends (reported), when the policy refused.
bool ReconnectTimerTask::granted(Channel& channel, const Decision& decision) {
  if (decision.retry) return true;
  count(&TaskMetrics::giveUps);
  logDecision(core::LogLevel::Warn, channel, "reconnect given up: {} (after {} reconnect(s))",
              giveUpName(decision.reason), decision.attempt - 1);
  notify([&](TaskListener& l) { l.onGiveUp(channel, decision.reason); });
  finish(fmt::format("gave up: {}", giveUpName(decision.reason)));
  return false;
}

// Half-open: the connection is torn down and attempt 1 (normally) made at once.
nanoseconds ReconnectTimerTask::attemptNow(Channel& channel, std::string_view reason,
                                           nanoseconds now) {
  const Decision decision = retry_.next(now, "read-idle");
  if (!granted(channel, decision)) return interval_;
  logDecision(core::LogLevel::Debug, channel, "reconnect #{} now: {}", decision.attempt, reason);
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
      closeTimeout_(effectiveClose(checked(options, timer))),
      interval_(checkEvery(options, closeTimeout_)),
      phi_(options.detector == DetectorKind::Phi),
      idleRule_(phi_, closeTimeout_ / 3) {}

nanoseconds CloseTimerTask::runOnce(Channel& channel, nanoseconds now) {
  const nanoseconds readIdle = now - channel.lastRead();
  const nanoseconds writeIdle = now - channel.lastWrite();
  std::string reason;
  if (idleRule_.due(now) && (readIdle > closeTimeout_ || writeIdle > closeTimeout_)) {
    const bool read = readIdle > closeTimeout_;
    reason =
        fmt::format("{} idle {} > closeTimeout {}", read ? "read" : "write",
                    formatDuration(read ? readIdle : writeIdle), formatDuration(closeTimeout_));
  } else if (phi_) {
    reason = suspicion(channel, now, readIdle);
  }
  if (reason.empty()) {  // healthy; under the fixed rule, due once an idle time exceeds (>) it
    const nanoseconds untilDue = closeTimeout_ - std::max(readIdle, writeIdle) + nanoseconds(1);
    return phi_ ? interval_ : skipToDue(untilDue, interval_);
  }
  if (deferredForInput(channel)) return interval_;
  logDecision(core::LogLevel::Debug, channel, "closing: {}", reason);
  channel.close(reason);  // if this throws, the next check tries again
  finish("closed idle channel");
  count(&TaskMetrics::closes);
  notify([&](TaskListener& l) { l.onClose(channel, reason); });
  return interval_;
}

}  // namespace wheelbeat::tasks
