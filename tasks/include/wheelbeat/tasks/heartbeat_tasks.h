// The connection-keeping tasks, with Dubbo's semantics and defaults, all on one shared wheel (no
// timer and no thread per connection):
//   HeartbeatTimerTask (client)  sends a heartbeat once read- or write-idle >= interval;
//                                checks at that deadline, and interval/3 after a send.
//   ReconnectTimerTask (client)  every idleTimeout/3: reconnects if disconnected or read-idle
//                                >= idleTimeout (half-open), with backoff and jitter.
//   CloseTimerTask (server)      every closeTimeout/3: closes the channel if read- or write-idle
//                                > closeTimeout, then ends.
// The reconnect and close tasks skip the checks of a healthy channel that could not act: idle
// times only restart, so a check before the older timestamp + the timeout cannot fire, and the
// task sleeps to the first check on its cadence after that. Decisions (and their times) are those
// of a check at every interval; the runs are fewer (every 2-3 intervals while heartbeats flow).
// With the φ detector (DetectorKind::Phi) they check every min(timeout, interval)/3, none skipped.
// Unlike Dubbo, check intervals are not raised to 1 s: interval only has to be at least 2 ticks of
// the wheel that runs the tasks (tests and tight deployments use short ones). Idle times are now -
// lastRead() / now - lastWrite() on the timer's clock. Create each task with std::make_shared, then
// start(firstDelay) it (usually its checkInterval()); see AbstractTimerTask for the chain's rules,
// threads and cancel(). Each action is also a core::log line naming the channel
// (Channel::logName()), at Debug: "heartbeat sent (read idle 3s, write idle 3s)", "reconnect #2
// in 1.6s: disconnected", "reconnect #1 now: read idle 9s >= idleTimeout 9s", "closing: read idle
// 12s > closeTimeout 9s"; and at Warn "reconnect given up: max-attempts (after 3 reconnect(s))".
// Nothing is formatted below the level.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/abstract_timer_task.h>
#include <wheelbeat/tasks/channel.h>
#include <wheelbeat/tasks/failure_detector.h>
#include <wheelbeat/tasks/retry_policy.h>
#include <wheelbeat/tasks/task_listener.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>

namespace wheelbeat::tasks {

// Plain options of the three tasks (config/ parses JSON into this struct).
struct HeartbeatOptions {
  // Time without traffic before a heartbeat is sent (Dubbo: `heartbeat`), > 0. Dubbo's default.
  std::chrono::nanoseconds interval = std::chrono::seconds(60);
  // 0 = 3 × interval (Dubbo's default); otherwise >= 2 × interval, so that at least one
  // heartbeat (and its answer) fits in before the connection counts as dead.
  std::chrono::nanoseconds idleTimeout{0};
  // Server side. 0 = idleTimeout (after its own default); otherwise > 0.
  std::chrono::nanoseconds closeTimeout{0};
  // Delay between reconnect attempts (gRPC's defaults: 1 s, × 1.6, ±20 %, 120 s cap, forever).
  // Error names for retryOn / ignore: "disconnected", "read-idle".
  RetryOptions reconnect{};
  // Seed of the reconnect jitter and of spreadFirst. 0 = a fresh one from std::random_device for
  // each task, so a fleet does not reconnect in lockstep; a fixed seed shared by many channels
  // would.
  std::uint64_t seed = 0;
  // Which rule finds a silent connection dead (failure_detector.h). Fixed: read idle >=
  // idleTimeout (client) / closeTimeout (server), checked every timeout / 3. Phi: also as soon as
  // the channel's φ-accrual detector reaches phi.threshold, checked every interval / 3; the fixed
  // rule stays the upper bound, evaluated at its own cadence (timeout / 3), so enabling φ never
  // makes the fixed rule stricter than it was.
  DetectorKind detector = DetectorKind::Fixed;
  PhiOptions phi{};
  // Client: the first heartbeat of each connection goes out at a random point of its first
  // interval (uniform between the first check after the connect and the idle rule's own
  // deadline) instead of once idle >= interval: channels that connect together (a client
  // starting against a fleet, every client of a restarted server) then beat spread over the
  // interval, not in the same few ticks of every interval, forever (their deadlines follow
  // their connect). Costs at most one heartbeat per connect. Off by default (Dubbo's rule
  // alone): in benchmark H1 it costs more CPU per heartbeat for the same RTT, for a reason not
  // yet found (docs/performance.md, "Open questions").
  bool spreadFirst = false;

  // A copy with the 0-defaults filled in (idleTimeout, closeTimeout, seed). Products saturate.
  [[nodiscard]] HeartbeatOptions resolved() const;
};

// Throws std::invalid_argument naming the first bad field, its value and the expectation, e.g.
// "HeartbeatOptions.idleTimeout = 90s (expected: >= 2 * interval = 2m)". Rules: interval
// > 0; idleTimeout 0 or >= 2 * interval; closeTimeout >= 0; reconnect valid (its
// messages read "HeartbeatOptions.reconnect.maxDelay = ..."); phi valid
// ("HeartbeatOptions.phi.threshold = ...").
void validate(const HeartbeatOptions& options);
// validate(options), then the rules of the wheel that runs the tasks, of tick `tick` (its
// HashedWheelTimer::tickDuration()): interval, and idleTimeout and closeTimeout when not 0, each
// at least 2 ticks — a wheel fires at the first tick at or after a deadline, so a shorter period
// is stretched to the tick. "HeartbeatOptions.interval = 50ms (expected: at least 2 wheel ticks =
// 200ms; the wheel's tick is 100ms)". The defaults (0) derive from interval: 3 x interval and
// idleTimeout pass when interval does. Reconnect delays are not periods: a delay shorter than a
// tick waits one tick, never less, and nothing is measured against it. Thread: any.
void validate(const HeartbeatOptions& options, std::chrono::nanoseconds tick);

// When the fixed idle rule may be evaluated: every run without φ; with φ (whose checks run every
// interval / 3) only every timeout / 3, as without it. Wheel thread only.
class FixedRuleCadence {
public:
  FixedRuleCadence(bool phi, std::chrono::nanoseconds period) noexcept
      : phi_(phi), period_(period) {}
  // True if the rule is due at `now` (and then the next one is a period later).
  bool due(std::chrono::nanoseconds now) noexcept {
    if (!phi_) return true;
    if (next_ && now < *next_) return false;
    next_ = now + period_;
    return true;
  }

private:
  bool phi_;
  std::chrono::nanoseconds period_;
  std::optional<std::chrono::nanoseconds> next_;
};

// Client: keeps the connection's traffic alive. Each run: if the channel is connected and
// read-idle or write-idle >= interval, calls sendHeartbeat() (TaskMetrics::heartbeatsSent,
// TaskListener::onHeartbeatSent). While traffic flows both ways it sends nothing.
// When it runs (Netty's IdleStateHandler, with Dubbo's rule): not sending, it re-arms for the
// moment the first of the two idle times reaches heartbeat (min(lastRead, lastWrite) +
// heartbeat); a run before that could not have sent (the timestamps only move forward), so the
// heartbeats are those of a check every checkInterval(), sent at the deadline itself rather than
// at the next check after it. After a send, one heartbeat later: the heartbeat's write resets
// the write idleness, and a silent peer gets one heartbeat per heartbeat interval, as Dubbo's
// Netty transport sends them (an IdleStateHandler of `heartbeat` on reads), not one per check
// as Dubbo's HeartbeatTimerTask did (one run per heartbeat instead of two).
// If the write is still queued for the loop (lastWrite() < now), the first tick strictly after
// that instant, when a write made within one tick is due. Disconnected: every checkInterval().
// With spreadFirst the first connected run also picks the connection's phase: a
// heartbeat at a random point before the idle rule's first deadline, the rule from then on.
class HeartbeatTimerTask final : public AbstractTimerTask {
public:
  // Throws core::OptionError for invalid options (validate(options, timer.tickDuration())).
  HeartbeatTimerTask(core::HashedWheelTimer& timer, std::weak_ptr<Channel> channel,
                     const HeartbeatOptions& options,
                     std::shared_ptr<TaskListener> listener = nullptr,
                     std::shared_ptr<TaskMetrics> metrics = nullptr);

  // interval / 3 (Dubbo's tick): the first delay to start() with, and the cadence while
  // disconnected or after a sendHeartbeat() that threw. Thread: any.
  [[nodiscard]] std::chrono::nanoseconds checkInterval() const noexcept { return interval_; }

protected:
  std::chrono::nanoseconds runOnce(Channel& channel, std::chrono::nanoseconds now) override;

private:
  [[nodiscard]] std::chrono::nanoseconds afterSend(const Channel& channel,
                                                   std::chrono::nanoseconds now) const noexcept;

  [[nodiscard]] std::chrono::nanoseconds pickPhase(std::chrono::nanoseconds until) noexcept;

  // phaseAt_ besides a time (ns, the timer's clock): no phase pending, or one to pick at the
  // next connected run. Two words for spreadFirst, a task per client connection (RSS).
  static constexpr std::int64_t kNoPhase = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kPickPhase = kNoPhase + 1;

  const std::chrono::nanoseconds heartbeat_;
  const std::chrono::nanoseconds interval_;
  std::uint64_t spreadState_;  // splitmix64 state; 0: spreadFirst is off
  std::int64_t phaseAt_;       // the connection's first heartbeat, kNoPhase or kPickPhase
};

// Client: brings a dead connection back, gRPC's way: the first attempt after an outage waits the
// policy's first backoff delay (with jitter), each failed attempt the next one.
//   - Disconnected (the socket closed: EOF, RST, error, or a failed attempt): the task asks its
//     RetryState for the next attempt and makes it (reconnect("disconnected")) once the granted
//     delay has passed; refused: gives up (TaskMetrics::giveUps, TaskListener::onGiveUp) and
//     ends. The owner calls wake() when its socket closes, so the delay counts from the close,
//     not from the next check (up to checkInterval() later).
//   - Connecting (Channel::isConnecting()): an attempt is in flight, ended by its own connect
//     timeout; it is not a failure, consumes no backoff step, and no second attempt is started.
//   - Read-idle >= idleTimeout while connected ("read idle 9s >= idleTimeout 9s": half-open) and
//     no input waits unread (Channel::hasUnreadInput(): the loop is only behind;
//     TaskMetrics::idleDeferred): the dead connection is torn down and attempt 1 made at once
//     (the link already had idleTimeout to prove itself).
// A backoff step is consumed only by an attempt made (TaskMetrics::reconnectsStarted,
// TaskListener::onReconnect). A check that finds the channel connected and fresh resets the
// RetryState, so the next outage starts again at the initial delay. Checks run every
// checkInterval() otherwise.
class ReconnectTimerTask final : public AbstractTimerTask {
public:
  // Throws core::OptionError for invalid options (validate(options, timer.tickDuration())).
  ReconnectTimerTask(core::HashedWheelTimer& timer, std::weak_ptr<Channel> channel,
                     const HeartbeatOptions& options,
                     std::shared_ptr<TaskListener> listener = nullptr,
                     std::shared_ptr<TaskMetrics> metrics = nullptr);

  // idleTimeout / 3. Thread: any.
  [[nodiscard]] std::chrono::nanoseconds checkInterval() const noexcept { return interval_; }

protected:
  std::chrono::nanoseconds runOnce(Channel& channel, std::chrono::nanoseconds now) override;

private:
  struct Resolved {};  // tag: `options` are validated and resolved
  ReconnectTimerTask(Resolved /*tag*/, core::HashedWheelTimer& timer,
                     std::weak_ptr<Channel> channel, const HeartbeatOptions& options,
                     std::shared_ptr<TaskListener> listener, std::shared_ptr<TaskMetrics> metrics);

  std::chrono::nanoseconds attemptNow(Channel& channel, std::string_view reason,
                                      std::chrono::nanoseconds now);
  std::chrono::nanoseconds scheduleAttempt(Channel& channel, std::chrono::nanoseconds now);
  std::chrono::nanoseconds attemptIfDue(Channel& channel, std::chrono::nanoseconds now);
  bool granted(Channel& channel, const Decision& decision);

  const std::chrono::nanoseconds idleTimeout_;
  const std::chrono::nanoseconds interval_;
  const bool phi_;  // also ask the channel's φ detector
  // Wheel thread only.
  FixedRuleCadence idleRule_;
  RetryState retry_;
  struct Scheduled {  // an attempt granted by retry_, not made yet
    std::chrono::nanoseconds at;
    std::chrono::nanoseconds backoff;
    std::int64_t attempt;
  };
  std::optional<Scheduled> scheduled_;
};

// Server: drops connections whose client went silent. Each run: if read-idle or write-idle >
// closeTimeout and no input waits unread (Channel::hasUnreadInput(), else the check is deferred:
// TaskMetrics::idleDeferred), calls close(reason) ("read idle 12s > closeTimeout 9s";
// TaskMetrics::closes, TaskListener::onClose) and ends ("closed idle channel").
class CloseTimerTask final : public AbstractTimerTask {
public:
  // Throws core::OptionError for invalid options (validate(options, timer.tickDuration())).
  CloseTimerTask(core::HashedWheelTimer& timer, std::weak_ptr<Channel> channel,
                 const HeartbeatOptions& options, std::shared_ptr<TaskListener> listener = nullptr,
                 std::shared_ptr<TaskMetrics> metrics = nullptr);

  // closeTimeout / 3. Thread: any.
  [[nodiscard]] std::chrono::nanoseconds checkInterval() const noexcept { return interval_; }

protected:
  std::chrono::nanoseconds runOnce(Channel& channel, std::chrono::nanoseconds now) override;

private:
  const std::chrono::nanoseconds closeTimeout_;
  const std::chrono::nanoseconds interval_;
  const bool phi_;             // also ask the channel's φ detector
  FixedRuleCadence idleRule_;  // wheel thread only
};

}  // namespace wheelbeat::tasks
