#include <wheelbeat/core/timer_metrics.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <bit>
#include <cmath>

namespace wheelbeat::core {

std::string TimerMetrics::toString() const {
  using Us = std::chrono::duration<double, std::micro>;
  return fmt::format(
      "pending={} scheduled={} fired={} cancelled={} rejected={} taskErrors={} rounds={} "
      "lateness(n={}) p50={:.1f}us p99={:.1f}us max={:.1f}us",
      pending, scheduled, fired, cancelled, rejected, taskErrors, rounds, latenessSamples,
      Us(latenessP50).count(), Us(latenessP99).count(), Us(latenessMax).count());
}

namespace detail {

// Values below 2^kSubBits map to themselves; above, 16 sub-buckets per power of two.
int LatenessHistogram::bucketOf(std::uint64_t v) noexcept {
  if (v < (std::uint64_t{1} << kSubBits)) return static_cast<int>(v);
  const int exponent = 63 - std::countl_zero(v);  // >= kSubBits
  const auto mantissa = static_cast<int>((v >> (exponent - kSubBits)) & ((1u << kSubBits) - 1));
  return ((exponent - kSubBits + 1) << kSubBits) + mantissa;
}

std::uint64_t LatenessHistogram::bucketUpper(int bucket) noexcept {
  if (bucket < (1 << kSubBits)) return static_cast<std::uint64_t>(bucket);
  const int exponent = (bucket >> kSubBits) + kSubBits - 1;
  const auto mantissa = static_cast<std::uint64_t>(bucket & ((1 << kSubBits) - 1));
  const std::uint64_t lower = (std::uint64_t{1} << exponent) | (mantissa << (exponent - kSubBits));
  return lower + (std::uint64_t{1} << (exponent - kSubBits)) - 1;
}

void LatenessHistogram::record(std::int64_t ns) noexcept {
  const std::uint64_t v = ns < 0 ? 0 : static_cast<std::uint64_t>(ns);
  auto& slot = counts_[static_cast<std::size_t>(bucketOf(v))];
  // Single writer: plain read-modify-write through relaxed atomics (no locked instruction).
  slot.store(slot.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  total_.store(total_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);
}

std::uint64_t LatenessHistogram::count() const noexcept {
  return total_.load(std::memory_order_relaxed);
}

std::int64_t LatenessHistogram::quantile(double q) const noexcept {
  std::uint64_t total = 0;
  for (const auto& c : counts_) total += c.load(std::memory_order_relaxed);
  if (total == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total)));
  std::uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[static_cast<std::size_t>(b)].load(std::memory_order_relaxed);
    if (seen >= rank && seen > 0) {
      // Never report more than the exact maximum.
      return std::min(static_cast<std::int64_t>(bucketUpper(b)), max());
    }
  }
  return max();
}

}  // namespace detail
}  // namespace wheelbeat::core
