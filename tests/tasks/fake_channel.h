// Helpers shared by the timer-task tests: a fake Channel whose timestamps and state the test
// scripts, a listener that records every event, a scripted AbstractTimerTask, and a
// Drive::Manual timer on a ManualClock moved one tick at a time.
#pragma once

#include "support.h"

#include <wheelbeat/core/clock.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/abstract_timer_task.h>
#include <wheelbeat/tasks/channel.h>
#include <wheelbeat/tasks/failure_detector.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>
#include <wheelbeat/tasks/task_listener.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wbtest {

using wheelbeat::core::Clock;
using wheelbeat::core::Drive;
using wheelbeat::core::HashedWheelTimer;
using wheelbeat::core::ManualClock;
using wheelbeat::core::TimerHooks;
using wheelbeat::core::TimerStoppedError;
using wheelbeat::core::WheelOptions;
using wheelbeat::tasks::AbstractTimerTask;
using wheelbeat::tasks::Channel;
using wheelbeat::tasks::CloseTimerTask;
using wheelbeat::tasks::HeartbeatOptions;
using wheelbeat::tasks::HeartbeatTimerTask;
using wheelbeat::tasks::ReconnectTimerTask;
using wheelbeat::tasks::TaskListener;
using wheelbeat::tasks::TaskMetrics;
using wheelbeat::tasks::TaskMetricsSnapshot;

// A channel the test scripts. Every action is recorded with the clock's time.
class FakeChannel final : public Channel {
public:
  explicit FakeChannel(std::shared_ptr<const Clock> clock, bool connected = true)
      : clock_(std::move(clock)), connected_(connected) {
    stamp();
  }

  ns lastRead() const noexcept override { return ns(lastRead_.load()); }
  ns lastWrite() const noexcept override { return ns(lastWrite_.load()); }
  bool isConnected() const noexcept override { return connected_.load(); }
  bool isConnecting() const noexcept override { return connecting_.load(); }
  bool isClosed() const noexcept override { return closed_.load(); }
  bool hasUnreadInput() const noexcept override { return unreadInput.load(); }
  const wheelbeat::tasks::PhiAccrualDetector* phiDetector() const noexcept override {
    return detector.get();
  }
  std::string logName() const override { return name; }

  void sendHeartbeat() override {
    if (throwOnHeartbeat) throw std::runtime_error("heartbeat refused");
    heartbeats_.fetch_add(1);
    if (writesLater) {  // the loop writes it later: the test calls written() (and read())
      return;
    }
    written();         // the ping frame
    if (echo) read();  // the peer answers within the same tick
  }
  void reconnect(std::string_view reason) override {
    {
      std::lock_guard lock(mutex_);
      reconnects_.push_back({now(), std::string(reason)});
    }
    connected_.store(false);  // a reconnect first tears the old connection down
    if (attemptsHang) {
      connecting_.store(true);  // until endAttempt()
    } else if (reconnectSucceeds) {
      connected_.store(true);
      stamp();  // a connect stamps both (see Channel)
    } else {
      down();  // refused at once
    }
  }
  // The attempt in flight ends: connected, or failed (the owner's close event).
  void endAttempt(bool ok) {
    connecting_.store(false);
    if (ok) {
      setConnected(true);
    } else {
      down();
    }
  }
  // The socket closed (EOF, RST, a failed attempt): what net/ tells the reconnect task.
  void drop() {
    connected_.store(false);
    down();
  }
  void close(std::string_view reason) override {
    std::lock_guard lock(mutex_);
    closes_.push_back({now(), std::string(reason)});
    connected_.store(false);
  }

  // Scripting.
  void read() {
    lastRead_.store(now().count());
    if (detector) detector->heartbeat(now());
  }
  void written() { lastWrite_.store(now().count()); }
  void traffic() {
    read();
    written();
  }
  void setConnected(bool connected) {
    connected_.store(connected);
    if (connected) stamp();
  }
  void setClosed() { closed_.store(true); }

  struct Action {
    ns at;
    std::string reason;
  };
  std::uint64_t heartbeats() const { return heartbeats_.load(); }
  std::vector<Action> reconnects() const {
    std::lock_guard lock(mutex_);
    return reconnects_;
  }
  std::vector<Action> closes() const {
    std::lock_guard lock(mutex_);
    return closes_;
  }

  std::string name = "fake";                   // its name in log lines; set before tasks start
  std::atomic<bool> echo{false};               // sendHeartbeat() also stamps a read
  std::atomic<bool> reconnectSucceeds{false};  // reconnect() connects at once
  std::atomic<bool> throwOnHeartbeat{false};
  std::atomic<bool> writesLater{false};   // sendHeartbeat() only queues: no write stamped yet
  std::atomic<bool> unreadInput{false};   // bytes wait unread: the loop is behind
  std::atomic<bool> attemptsHang{false};  // reconnect() stays connecting until endAttempt()
  std::function<void()> onDown;           // the owner's close event (e.g. task->wake())
  // Set before the tasks start: fed by read(), like net/'s channels.
  std::unique_ptr<wheelbeat::tasks::PhiAccrualDetector> detector;

private:
  ns now() const { return clock_->now(); }
  void stamp() { traffic(); }
  void down() {
    if (onDown) onDown();
  }

  std::shared_ptr<const Clock> clock_;
  std::atomic<std::int64_t> lastRead_{0};
  std::atomic<std::int64_t> lastWrite_{0};
  std::atomic<bool> connected_;
  std::atomic<bool> connecting_{false};
  std::atomic<bool> closed_{false};
  std::atomic<std::uint64_t> heartbeats_{0};
  mutable std::mutex mutex_;
  std::vector<Action> reconnects_;
  std::vector<Action> closes_;
};

// Records every listener call. Optionally throws from each one (the tasks must drop it).
class RecordingListener final : public TaskListener {
public:
  struct Reconnect {
    std::string reason;
    std::int64_t attempt;
    ns backoff;
  };

  void onHeartbeatSent(Channel& /*channel*/) override {
    heartbeats_.fetch_add(1);
    maybeThrow();
  }
  void onReconnect(Channel& /*channel*/, std::string_view reason, std::int64_t attempt,
                   ns backoff) override {
    record([&] { reconnects_.push_back({std::string(reason), attempt, backoff}); });
  }
  void onGiveUp(Channel& /*channel*/, GiveUp reason) override {
    record([&] { giveUps_.push_back(reason); });
  }
  void onClose(Channel& /*channel*/, std::string_view reason) override {
    record([&] { closes_.emplace_back(reason); });
  }
  void onTaskError(std::exception_ptr error) override {
    std::string what = "(not a std::exception)";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {  // NOLINT(bugprone-empty-catch): recorded as such
    }
    record([&] { errors_.push_back(what); });
  }
  void onTaskEnded(std::string_view why) override {
    record([&] { ended_.emplace_back(why); });
  }

  std::uint64_t heartbeats() const { return heartbeats_.load(); }
  std::vector<Reconnect> reconnects() const { return copy(reconnects_); }
  std::vector<GiveUp> giveUps() const { return copy(giveUps_); }
  std::vector<std::string> closes() const { return copy(closes_); }
  std::vector<std::string> errors() const { return copy(errors_); }
  std::vector<std::string> ended() const { return copy(ended_); }

  std::atomic<bool> throwing{false};

private:
  template <typename Fn>
  void record(Fn&& fn) {
    {
      std::lock_guard lock(mutex_);
      fn();
    }
    maybeThrow();
  }
  void maybeThrow() const {
    if (throwing) throw std::runtime_error("listener failure");
  }
  template <typename T>
  std::vector<T> copy(const std::vector<T>& v) const {
    std::lock_guard lock(mutex_);
    return v;
  }

  std::atomic<std::uint64_t> heartbeats_{0};
  mutable std::mutex mutex_;
  std::vector<Reconnect> reconnects_;
  std::vector<GiveUp> giveUps_;
  std::vector<std::string> closes_;
  std::vector<std::string> errors_;
  std::vector<std::string> ended_;
};

// An AbstractTimerTask whose body the test supplies; the body gets the task itself (to cancel
// or finish it from inside) and the run's time.
class ScriptedTask final : public AbstractTimerTask {
public:
  using Body = std::function<ns(ScriptedTask& self, Channel& channel, ns now)>;

  ScriptedTask(HashedWheelTimer& timer, std::weak_ptr<Channel> channel, Body body,
               std::shared_ptr<TaskListener> listener = nullptr,
               std::shared_ptr<TaskMetrics> metrics = nullptr)
      : AbstractTimerTask(timer, std::move(channel), std::move(listener), std::move(metrics)),
        body_(std::move(body)) {}

  using AbstractTimerTask::finish;

protected:
  ns runOnce(Channel& channel, ns now) override { return body_(*this, channel, now); }

private:
  Body body_;
};

// A Drive::Manual timer (10 ms ticks, 512 slots) on a ManualClock; the constructor starts it,
// so elapsed() 0 is tick 0 and a run due at elapsed d (a multiple of the tick) runs when
// elapsed() reaches d.
class Rig {
public:
  explicit Rig(WheelOptions options = defaultWheel(), TimerHooks hooks = {})
      : clock_(std::make_shared<ManualClock>()), timer_(options, manual(std::move(hooks), clock_)) {
    origin_ = clock_->now();
    timer_.start();
    timer_.advance();
  }

  HashedWheelTimer& timer() noexcept { return timer_; }
  std::shared_ptr<const Clock> clock() const { return clock_; }
  ns origin() const noexcept { return origin_; }
  ns elapsed() const noexcept { return clock_->now() - origin_; }
  ns tick() const noexcept { return timer_.tickDuration(); }
  std::uint64_t pending() const noexcept { return timer_.pendingTimeouts(); }

  std::shared_ptr<FakeChannel> channel(bool connected = true) const {
    return std::make_shared<FakeChannel>(clock_, connected);
  }

  // Moves the clock one tick at a time until elapsed() == t; before each tick is processed,
  // `beforeTick` (if any) scripts the channels (e.g. traffic stamped at the tick's time).
  void runUntil(ns t, const std::function<void()>& beforeTick = {}) {
    while (elapsed() < t) {
      clock_->advance(tick());
      if (beforeTick) beforeTick();
      timer_.advance();
    }
  }

  static WheelOptions defaultWheel() {
    WheelOptions o;
    o.tickDuration = 10ms;
    o.ticksPerWheel = 512;
    return o;
  }

private:
  static TimerHooks manual(TimerHooks hooks, std::shared_ptr<ManualClock> clock) {
    hooks.clock = std::move(clock);
    hooks.drive = Drive::Manual;
    return hooks;
  }

  std::shared_ptr<ManualClock> clock_;
  HashedWheelTimer timer_;
  ns origin_{0};
};

// Heartbeat 3 s (checks every 1 s), idleTimeout 9 s and closeTimeout 9 s (checks every 3 s),
// reconnect backoff without jitter (1 s, 1.6 s, 2.56 s, ...), a fixed seed.
inline HeartbeatOptions testOptions() {
  HeartbeatOptions o;
  o.interval = 3s;
  o.reconnect.jitter = Jitter::None;
  o.seed = 7;
  return o;
}

}  // namespace wbtest
