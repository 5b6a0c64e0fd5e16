// Counters and the lateness histogram of a HashedWheelTimer.
//
// Lateness = the time the wheel ran (or dispatched) a timeout minus its deadline (schedule time +
// delay, a delay <= 0 counting as 0), measured on the timer's clock when its tick is processed.
// It is never negative (the wheel never fires early); with a tick of T it is normally within
// [0, T + wake-up latency] (delay 0 scheduled right on a processed tick is exactly T late).
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace wheelbeat::core {

struct TimerMetrics {
  std::uint64_t pending = 0;     // scheduled and neither run nor cancelled (exact)
  std::uint64_t scheduled = 0;   // accepted by newTimeout()
  std::uint64_t fired = 0;       // handed to their task (run, or given to the executor)
  std::uint64_t cancelled = 0;   // cancel() won, or stop() handed them back
  std::uint64_t rejected = 0;    // refused by newTimeout() because max pending was reached
  std::uint64_t taskErrors = 0;  // task bodies (or the executor) that threw
  // Rounds of the wheel: each drains what was scheduled and cancelled and runs what is due. With
  // Drive::Thread, one per wake-up of the worker (a quiet wheel: at most about one per tick that
  // holds timeouts, plus wake-ups for earlier deadlines and cancels, at most one per tick); with
  // Drive::Manual, one per advance(). Far more rounds per second than ticks means a busy worker.
  std::uint64_t rounds = 0;
  std::chrono::nanoseconds latenessP50{0};
  std::chrono::nanoseconds latenessP99{0};
  std::chrono::nanoseconds latenessMax{0};
  std::uint64_t latenessSamples = 0;

  // One line, e.g. for logs and the samples: "pending=0 scheduled=5 ... lateness p50=1.2ms".
  [[nodiscard]] std::string toString() const;
};

namespace detail {

// Log-linear histogram of non-negative nanosecond values: 16 sub-buckets per power of two
// (≤ 6.25 % relative error). One writer (the wheel thread), any number of readers: counts are
// relaxed atomics, so a snapshot taken while the wheel runs may be a few samples behind.
class LatenessHistogram {
public:
  static constexpr int kSubBits = 4;
  static constexpr int kBuckets = (64 - kSubBits + 1) << kSubBits;

  void record(std::int64_t ns) noexcept;  // writer thread only
  [[nodiscard]] std::uint64_t count() const noexcept;
  // Upper bound of the bucket holding the q-quantile (0 < q <= 1); 0 when empty.
  [[nodiscard]] std::int64_t quantile(double q) const noexcept;
  [[nodiscard]] std::int64_t max() const noexcept { return max_.load(std::memory_order_relaxed); }

  static int bucketOf(std::uint64_t v) noexcept;
  static std::uint64_t bucketUpper(int bucket) noexcept;

private:
  std::array<std::atomic<std::uint64_t>, kBuckets> counts_{};
  std::atomic<std::uint64_t> total_{0};
  std::atomic<std::int64_t> max_{0};
};

}  // namespace detail
}  // namespace wheelbeat::core
