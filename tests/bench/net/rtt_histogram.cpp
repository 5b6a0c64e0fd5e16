#include "rtt_histogram.h"

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <stdexcept>

namespace wheelbeat::bench::netbench {
namespace {
constexpr int kSubBits = 5;                                      // 32 sub-buckets per power of two
constexpr std::uint64_t kLinear = std::uint64_t{2} << kSubBits;  // 64: below, one bucket per ns
}  // namespace

std::size_t RttHistogram::bucketOf(std::int64_t ns) noexcept {
  if (ns <= 0) return 0;
  const auto v = static_cast<std::uint64_t>(ns);
  if (v < kLinear) return v;
  const int shift = std::bit_width(v) - (kSubBits + 1);
  const std::uint64_t i = (std::uint64_t(shift) << kSubBits) + (v >> shift);
  return i < kBuckets ? i : kBuckets - 1;
}

std::int64_t RttHistogram::lowerBound(std::size_t i) noexcept {
  if (i < kLinear) return static_cast<std::int64_t>(i);
  const std::size_t shift = (i >> kSubBits) - 1;
  const std::uint64_t mantissa = i - (shift << kSubBits);
  return static_cast<std::int64_t>(mantissa << shift);
}

double RttHistogram::midpoint(std::size_t i) noexcept {
  const auto lo = static_cast<double>(lowerBound(i));
  const double hi = i + 1 < kBuckets ? static_cast<double>(lowerBound(i + 1)) : lo;
  return (lo + hi) / 2;
}

void RttHistogram::record(std::int64_t ns) noexcept {
  counts_[bucketOf(ns)].fetch_add(1, std::memory_order_relaxed);
}

RttHistogram::Counts RttHistogram::snapshot() const {
  Counts out(kBuckets);
  for (std::size_t i = 0; i < kBuckets; ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

std::string formatCounts(const RttHistogram::Counts& counts) {
  std::string out = "rtt";
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] != 0) out += fmt::format(" {}:{}", i, counts[i]);
  }
  return out;
}

RttHistogram::Counts parseCounts(std::string_view line) {
  if (line.substr(0, 3) != "rtt")
    throw std::runtime_error(fmt::format("not an rtt line: '{}'", line));
  RttHistogram::Counts out(RttHistogram::kBuckets);
  const char* p = line.data() + 3;
  const char* end = line.data() + line.size();
  while (p < end) {
    std::size_t i = 0;
    std::uint64_t c = 0;
    auto r1 = std::from_chars(p + 1, end, i);  // p points at the separating space
    if (r1.ec != std::errc{} || r1.ptr == end || *r1.ptr != ':' || i >= out.size()) {
      throw std::runtime_error(fmt::format("bad rtt line: '{}'", line));
    }
    auto r2 = std::from_chars(r1.ptr + 1, end, c);
    if (r2.ec != std::errc{}) throw std::runtime_error(fmt::format("bad rtt line: '{}'", line));
    out[i] = c;
    p = r2.ptr;
  }
  return out;
}

RttHistogram::Counts minus(const RttHistogram::Counts& later, const RttHistogram::Counts& earlier) {
  RttHistogram::Counts out(later.size());
  for (std::size_t i = 0; i < later.size(); ++i) out[i] = later[i] - earlier[i];
  return out;
}

void addTo(RttHistogram::Counts& sum, const RttHistogram::Counts& more) {
  sum.resize(std::max(sum.size(), more.size()));
  for (std::size_t i = 0; i < more.size(); ++i) sum[i] += more[i];
}

std::uint64_t total(const RttHistogram::Counts& counts) {
  std::uint64_t n = 0;
  for (const auto c : counts) n += c;
  return n;
}

double quantile(const RttHistogram::Counts& counts, double q) {
  const std::uint64_t n = total(counts);
  if (n == 0) return 0;
  // The rank-th smallest sample (1-based), nearest-rank definition.
  const auto rank =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(q * double(n) + 0.999999));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) return RttHistogram::midpoint(i);
  }
  return RttHistogram::midpoint(counts.size() - 1);
}

}  // namespace wheelbeat::bench::netbench
