// Helpers shared by the core tests: a Drive::Manual timer on a ManualClock that moves tick by
// tick, a log capture that restores the previous sink, and a completion counter for the
// real-time tests (waits on a condition variable with a deadline, never sleeps).
#pragma once

#include <wheelbeat/core/clock.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/core/timer_metrics.h>
#include <wheelbeat/core/timer_task.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace wbtest {

using namespace std::chrono_literals;
using wheelbeat::core::Drive;
using wheelbeat::core::HashedWheelTimer;
using wheelbeat::core::LogLevel;
using wheelbeat::core::ManualClock;
using wheelbeat::core::RejectedTimeoutError;
using wheelbeat::core::Timeout;
using wheelbeat::core::TimeoutState;
using wheelbeat::core::TimerHooks;
using wheelbeat::core::TimerMetrics;
using wheelbeat::core::TimerStoppedError;
using wheelbeat::core::TimerTask;
using wheelbeat::core::WheelOptions;
using ns = std::chrono::nanoseconds;

inline WheelOptions wheelOptions(ns tick, std::int64_t ticksPerWheel, std::int64_t maxPending = 0) {
  WheelOptions o;
  o.tickDuration = tick;
  o.ticksPerWheel = ticksPerWheel;
  o.maxPendingTimeouts = maxPending;
  return o;
}

// A Drive::Manual timer whose clock the test moves. start() pins tick 0 at the clock's
// current time and processes it, so from then on "tick k" is origin() + k * tick() and a
// timeout scheduled right after step() with delay d runs exactly at tick current + ceil(d/tick)
// (delay <= 0: current + 1).
class ManualWheel {
public:
  explicit ManualWheel(WheelOptions options = wheelOptions(10ms, 32), TimerHooks hooks = {})
      : clock_(std::make_shared<ManualClock>()),
        timer_(options, withManualClock(std::move(hooks), clock_)) {}

  HashedWheelTimer& timer() noexcept { return timer_; }
  ManualClock& clock() noexcept { return *clock_; }
  const std::shared_ptr<ManualClock>& clockPtr() const noexcept { return clock_; }
  ns now() const noexcept { return clock_->now(); }
  ns tick() const noexcept { return timer_.tickDuration(); }

  // Starts the timer at the current clock time (tick 0) and processes tick 0.
  void start() {
    origin_ = clock_->now();
    timer_.start();
    timer_.advance();
  }
  ns origin() const noexcept { return origin_; }
  ns tickTime(std::int64_t k) const noexcept { return origin_ + k * tick(); }
  // The last tick whose time has been reached (the clock is kept on tick boundaries).
  std::int64_t currentTick() const noexcept { return (clock_->now() - origin_) / tick(); }

  // Moves the clock one tick at a time and processes each; returns the tasks run.
  std::size_t step(std::int64_t ticks = 1) {
    std::size_t ran = 0;
    for (std::int64_t i = 0; i < ticks; ++i) {
      clock_->advance(tick());
      ran += timer_.advance();
    }
    return ran;
  }

  Timeout schedule(TimerTask&& task, ns delay) { return timer_.newTimeout(std::move(task), delay); }

private:
  static TimerHooks withManualClock(TimerHooks hooks, std::shared_ptr<ManualClock> clock) {
    hooks.clock = std::move(clock);
    hooks.drive = Drive::Manual;
    return hooks;
  }

  std::shared_ptr<ManualClock> clock_;
  HashedWheelTimer timer_;
  ns origin_{0};
};

// Routes the library's log into a list for the lifetime of the object, then restores the
// previous sink.
class LogCapture {
public:
  struct Line {
    LogLevel level;
    std::string text;
  };

  LogCapture() {
    previous_ = wheelbeat::core::setLogSink([this](LogLevel level, std::string_view text) {
      std::lock_guard lock(mutex_);
      lines_.push_back(Line{level, std::string(text)});
    });
  }
  ~LogCapture() { wheelbeat::core::setLogSink(std::move(previous_)); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<Line> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  std::size_t count(LogLevel level) const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& line : lines_) n += line.level == level ? 1 : 0;
    return n;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    lines_.clear();
  }

private:
  mutable std::mutex mutex_;
  std::vector<Line> lines_;
  wheelbeat::core::LogSink previous_;
};

// Counts arrivals; waitFor() returns once `expected` arrived or the deadline passed.
class Completion {
public:
  explicit Completion(std::uint64_t expected) : expected_(expected) {}

  void arrive() {
    std::lock_guard lock(mutex_);
    if (++arrived_ >= expected_) cv_.notify_all();
  }
  bool waitFor(std::chrono::steady_clock::duration limit) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [&] { return arrived_ >= expected_; });
  }
  std::uint64_t arrived() const {
    std::lock_guard lock(mutex_);
    return arrived_;
  }

private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t expected_;
  std::uint64_t arrived_ = 0;
};

// Runs `body` on a detached thread and waits up to `limit` for it to finish. Returns false if
// it did not (e.g. a deadlock): the thread is then abandoned with everything `body` owns, so a
// hanging implementation fails the test instead of hanging the suite. `body` must own (by
// value or shared_ptr) whatever it touches.
inline bool finishesWithin(std::function<void()> body, std::chrono::steady_clock::duration limit) {
  auto done = std::make_shared<Completion>(1);
  std::thread([body = std::move(body), done] {
    body();
    done->arrive();
  }).detach();
  return done->waitFor(limit);
}

// Real-time tests: the steady clock, and the deadline for waits that must succeed (generous:
// the suites also run under sanitizers on 2 busy cores).
using Steady = std::chrono::steady_clock;
inline constexpr auto kGenerous = 20s;
inline std::int64_t nowNs() { return wheelbeat::core::SteadyClock::read().count(); }

inline bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace wbtest
