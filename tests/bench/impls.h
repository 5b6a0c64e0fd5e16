// One face for the two timers under test, so each scenario is written once as a template:
//   Impl(tick)        constructs and starts the timer (its fixed cost stays out of the timings)
//   schedule(f, d)    returns a handle;  cancel(handle) -> bool
//   pending()         scheduled, neither fired nor cancelled
//   stop()            stops, joins, returns how many timeouts had not run
// Templates rather than virtual calls: the hot loops call each timer exactly as a user would.
#pragma once

#include "heap_timer.h"
#include "scenarios.h"

#include <wheelbeat/core/hashed_wheel_timer.h>

#include <chrono>
#include <type_traits>
#include <utility>

namespace wheelbeat::bench {

class WheelImpl {
public:
  using Handle = core::Timeout;
  static constexpr ImplKind kKind = ImplKind::Wheelbeat;

  explicit WheelImpl(std::chrono::nanoseconds tick) : timer_(options(tick)) { timer_.start(); }

  template <typename F>
  Handle schedule(F&& f, std::chrono::nanoseconds delay) {
    return timer_.newTimeout(core::TimerTask(std::forward<F>(f)), delay);
  }
  static bool cancel(const Handle& h) noexcept { return h.cancel(); }
  [[nodiscard]] std::uint64_t pending() const noexcept { return timer_.pendingTimeouts(); }
  std::size_t stop() { return timer_.stop().size(); }

private:
  static core::WheelOptions options(std::chrono::nanoseconds tick) {
    core::WheelOptions o;  // default 512 ticks per wheel, unlimited pending
    o.tickDuration = tick;
    return o;
  }
  core::HashedWheelTimer timer_;
};

class HeapImpl {
public:
  using Handle = HeapTimer::Handle;
  static constexpr ImplKind kKind = ImplKind::Heap;

  // A heap timer has no tick: it fires at each deadline.
  explicit HeapImpl(std::chrono::nanoseconds /*tick*/) { timer_.start(); }

  template <typename F>
  Handle schedule(F&& f, std::chrono::nanoseconds delay) {
    return timer_.schedule(HeapTimer::Task(std::forward<F>(f)), delay);
  }
  static bool cancel(const Handle& h) noexcept { return h.cancel(); }
  [[nodiscard]] std::uint64_t pending() const noexcept { return timer_.pending(); }
  std::size_t stop() { return timer_.stop(); }

private:
  HeapTimer timer_;
};

// Calls fn(std::type_identity<Impl>{}) with the adapter type of `kind`.
template <typename Fn>
auto withImpl(ImplKind kind, Fn&& fn) {
  if (kind == ImplKind::Wheelbeat) return fn(std::type_identity<WheelImpl>{});
  return fn(std::type_identity<HeapImpl>{});
}

}  // namespace wheelbeat::bench
