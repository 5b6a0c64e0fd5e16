// Clocks for the wheel: the real monotonic clock and a manual clock for tests.
//
// Contract: now() is monotonic (never goes back), in nanoseconds since an arbitrary epoch, and
// safe to call from any thread. A HashedWheelTimer reads its clock on every newTimeout() and
// whenever its worker wakes; pass nullptr (the default) to use the steady clock without a
// virtual call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace wheelbeat::core {

class Clock {
public:
  virtual ~Clock() = default;
  // Monotonic time in nanoseconds. Any thread.
  [[nodiscard]] virtual std::chrono::nanoseconds now() const noexcept = 0;
};

// std::chrono::steady_clock (CLOCK_MONOTONIC).
class SteadyClock final : public Clock {
public:
  [[nodiscard]] std::chrono::nanoseconds now() const noexcept override { return read(); }
  [[nodiscard]] static std::chrono::nanoseconds read() noexcept {
    return std::chrono::steady_clock::now().time_since_epoch();
  }
};

// A clock that moves only when told to. Starts at 1 s (not 0, so "time 0" is never special).
// Pair it with TimerOptions::drive = Drive::Manual and HashedWheelTimer::advance(): time moves
// by advance()/set() on any thread, the wheel moves on the thread that calls timer.advance().
class ManualClock final : public Clock {
public:
  ManualClock() = default;
  explicit ManualClock(std::chrono::nanoseconds start) : ns_(start.count()) {}

  [[nodiscard]] std::chrono::nanoseconds now() const noexcept override {
    return std::chrono::nanoseconds(ns_.load(std::memory_order_acquire));
  }
  // Moves time forward by d (d < 0 is ignored: the clock never goes back).
  void advance(std::chrono::nanoseconds d) noexcept {
    if (d.count() > 0) ns_.fetch_add(d.count(), std::memory_order_acq_rel);
  }
  // Sets the time; a value earlier than now() is ignored.
  void set(std::chrono::nanoseconds t) noexcept {
    std::int64_t cur = ns_.load(std::memory_order_acquire);
    while (t.count() > cur && !ns_.compare_exchange_weak(cur, t.count())) {
    }
  }

private:
  std::atomic<std::int64_t> ns_{1'000'000'000};
};

}  // namespace wheelbeat::core
