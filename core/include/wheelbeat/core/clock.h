// Clocks for the wheel: the real monotonic clock and a manual clock for tests.
//
// Contract: now() is monotonic (never goes back), in nanoseconds since an arbitrary epoch, and
// safe to call from any thread. A HashedWheelTimer reads its clock on every newTimeout() and
// whenever its worker wakes; pass nullptr (the default) to use the steady clock without a
// virtual call (newTimeout() then reads SteadyClock::readNotBefore(), see below).
#pragma once

#include <wheelbeat/core/cxx20.h>

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

  // A reading of the same clock that is never earlier than read() at the moment of the call,
  // and at most ~17 us later (81 us in the worst case): what a deadline needs ("never early"),
  // at less than half of read()'s cost (~10 ns vs ~24 ns here; a new pair, every 64 us per
  // thread, costs ~60 ns). newTimeout() uses it on the steady clock. Any thread.
  //
  // How: with the kernel's clocksource on an invariant, synchronised TSC (Linux x86-64 with
  // clocksource "tsc", constant_tsc and nonstop_tsc), CLOCK_MONOTONIC is the TSC scaled by a
  // factor that NTP may move by at most 10% (ADJ_TICK) + 0.1% (frequency and adjtime slew). So
  // each thread keeps a base pair (TSC, read()) no older than 64 us and extrapolates from it
  // with 1.25x an upper bound of the rate measured over >= 20 ms (1.25 > 1.101 / 0.899): every
  // error (calibration, NTP slew, a vCPU preempted between the two reads of a pair, a
  // migration between CPUs whose TSCs the kernel keeps in sync) makes the value later, never
  // earlier. A TSC that went back (suspend) or a stale base forces a new pair; every new pair
  // also checks the previous one's bound, and a violation turns the TSC path off for good. The
  // hot path's rdtsc is not fenced (a fence doubles its cost); 1 us added to every value covers
  // how far it can run ahead of the instructions before it.
  // Elsewhere, until calibrated (the first 20 ms of the process) and after such a violation it
  // returns read() itself.
  [[nodiscard]] static std::chrono::nanoseconds readNotBefore() noexcept;
  // True once readNotBefore() extrapolates from the TSC (false: it returns read()). Any thread.
  [[nodiscard]] static bool readNotBeforeUsesTsc() noexcept;
};

// A clock that moves only when told to. Starts at 1 s (not 0, so "time 0" is never special).
// Pair it with TimerHooks::drive = Drive::Manual and HashedWheelTimer::advance(): time moves
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
