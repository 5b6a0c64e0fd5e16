// Workload helpers shared by the scenarios: pre-generated delays, the steady clock in ns, a
// counter that wakes a blocked waiter when the last expected timeout has fired, and the small
// statistics (median, nearest-rank percentile) the report needs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace wheelbeat::bench {

using std::chrono::nanoseconds;

// steady_clock (CLOCK_MONOTONIC), the clock the wheel uses by default.
inline std::int64_t nowNs() noexcept {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

// n delays uniform in [lo, hi], deterministic for a seed (the same for both impls).
std::vector<nanoseconds> makeDelays(std::size_t n, nanoseconds lo, nanoseconds hi,
                                    std::uint64_t seed);

// Counts fires from any thread. The hot path is one atomic add; the first and the expected-th
// fire also read the clock, and the expected-th wakes waitAll() (a blocking wait, no spinning).
class FireCounter {
public:
  explicit FireCounter(std::uint64_t expected) : expected_(expected) {}
  FireCounter(const FireCounter&) = delete;
  FireCounter& operator=(const FireCounter&) = delete;
  FireCounter(FireCounter&&) = delete;
  FireCounter& operator=(FireCounter&&) = delete;
  ~FireCounter() = default;

  void onFire() noexcept;
  // Blocks until `expected` fires or the timeout; true when all fired.
  bool waitAll(nanoseconds timeout);
  [[nodiscard]] std::uint64_t count() const noexcept {
    return count_.load(std::memory_order_acquire);
  }
  // Valid once waitAll() returned true.
  [[nodiscard]] std::int64_t firstFireNs() const noexcept { return firstNs_.load(); }
  [[nodiscard]] std::int64_t lastFireNs() const noexcept { return lastNs_.load(); }

private:
  const std::uint64_t expected_;
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::int64_t> firstNs_{0};
  std::atomic<std::int64_t> lastNs_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;  // guarded by mutex_
};

// Median (mean of the two middle values for an even count). Precondition: !values.empty().
double median(std::vector<double> values);
// Nearest-rank q-quantile (0 < q <= 1) of an ascending-sorted vector. Precondition: !empty.
double percentileSorted(const std::vector<double>& sorted, double q);

}  // namespace wheelbeat::bench
