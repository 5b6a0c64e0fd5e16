// RttHistogram: heartbeat round trips, recorded on the wheel thread without a lock or an
// allocation (a fixed array of relaxed atomic counters), snapshot from any thread.
//
// Log-linear buckets on nanoseconds: values below 64 ns exactly, above that 32 buckets per power
// of two, so a bucket is at most 1/32 (3.1 %) wide relative to its values. 1024 buckets reach
// past 10^11 ns; larger values land in the last one.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::bench::netbench {

class RttHistogram {
public:
  static constexpr std::size_t kBuckets = 1024;
  using Counts = std::vector<std::uint64_t>;  // kBuckets entries

  void record(std::int64_t ns) noexcept;
  [[nodiscard]] Counts snapshot() const;

  [[nodiscard]] static std::size_t bucketOf(std::int64_t ns) noexcept;
  // The smallest value of bucket i, and the middle of its range (what a percentile reports).
  [[nodiscard]] static std::int64_t lowerBound(std::size_t i) noexcept;
  [[nodiscard]] static double midpoint(std::size_t i) noexcept;

private:
  std::array<std::atomic<std::uint64_t>, kBuckets> counts_{};
};

// "rtt i:c i:c ..." with the non-empty buckets only, and back.
std::string formatCounts(const RttHistogram::Counts& counts);
RttHistogram::Counts parseCounts(std::string_view line);

// later - earlier, per bucket (the window's samples).
RttHistogram::Counts minus(const RttHistogram::Counts& later, const RttHistogram::Counts& earlier);
void addTo(RttHistogram::Counts& sum, const RttHistogram::Counts& more);
std::uint64_t total(const RttHistogram::Counts& counts);
// The value (ns, bucket midpoint) at quantile q in [0, 1]; 0 for an empty histogram.
double quantile(const RttHistogram::Counts& counts, double q);

}  // namespace wheelbeat::bench::netbench
