#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/tasks/cluster/hedging.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

namespace wheelbeat::tasks::cluster {
namespace {

using std::chrono::nanoseconds;

constexpr std::int64_t kMicro = 1000;

// Moves a ring of `kSlices` slices from slice `*current` to slice `target`, zeroing the slices
// that fell out of the window (all of them after a long gap).
template <typename Clear>
void rotate(std::int64_t& current, std::int64_t target, int slices, Clear clear) {
  if (current < 0 || target - current >= slices) {
    for (int i = 0; i < slices; ++i) clear(i);
  } else {
    for (std::int64_t s = current + 1; s <= target; ++s) clear(static_cast<int>(s % slices));
  }
  current = std::max(current, target);
}

}  // namespace

void validate(const HedgeDelayOptions& o) {
  const auto fail = [](std::string_view field, const std::string& value,
                       std::string_view expected) {
    throw std::invalid_argument(
        fmt::format("HedgeDelayOptions.{} = {} (expected: {})", field, value, expected));
  };
  if (o.fixed < nanoseconds(0)) fail("fixed", core::formatDurationExact(o.fixed), ">= 0");
  if (!(o.percentile >= 50 && o.percentile < 100)) {
    fail("percentile", fmt::format("{}", o.percentile), "50 <= percentile < 100");
  }
  if (o.floor < nanoseconds(0)) fail("floor", core::formatDurationExact(o.floor), ">= 0");
  if (o.window < std::chrono::milliseconds(10)) {
    fail("window", core::formatDurationExact(o.window), ">= 10ms");
  }
  if (o.minSamples < 1) fail("minSamples", std::to_string(o.minSamples), ">= 1");
}

HedgeDelay::HedgeDelay(HedgeDelayOptions options)
    : options_(options), sliceLength_((validate(options), options.window.count() / kSlices)) {}

int HedgeDelay::bucketOf(nanoseconds latency) noexcept {
  const std::int64_t us = latency.count() / kMicro;
  if (us < 1) return 0;
  const auto u = static_cast<std::uint64_t>(us);
  const int octave = std::bit_width(u) - 1;  // 2^octave <= us < 2^(octave + 1)
  if (octave >= kOctaves) return kBuckets - 1;
  // The next three bits below the leading one pick the eighth of the octave.
  const int sub = octave >= 3 ? static_cast<int>((u >> (octave - 3)) & 7)
                              : static_cast<int>((u << (3 - octave)) & 7);
  return 1 + octave * kSubBuckets + sub;
}

nanoseconds HedgeDelay::upperBound(int bucket) noexcept {
  if (bucket <= 0) return nanoseconds(kMicro);
  const int octave = (bucket - 1) / kSubBuckets;
  const int sub = (bucket - 1) % kSubBuckets;
  const double us = std::ldexp(1.0 + (sub + 1) / static_cast<double>(kSubBuckets), octave);
  return nanoseconds(static_cast<std::int64_t>(us * kMicro));
}

void HedgeDelay::advance(nanoseconds now) {
  rotate(currentSlice_, now.count() / sliceLength_, kSlices, [this](int i) {
    counts_[static_cast<std::size_t>(i)].fill(0);
    totals_[static_cast<std::size_t>(i)] = 0;
  });
}

void HedgeDelay::observe(nanoseconds latency, nanoseconds now) {
  advance(now);
  const auto slice = static_cast<std::size_t>(currentSlice_ % kSlices);
  ++counts_[slice][static_cast<std::size_t>(bucketOf(std::max(latency, nanoseconds(0))))];
  ++totals_[slice];
}

std::uint64_t HedgeDelay::samples(nanoseconds now) {
  advance(now);
  std::uint64_t n = 0;
  for (const std::uint32_t t : totals_) n += t;
  return n;
}

std::optional<nanoseconds> HedgeDelay::delay(nanoseconds now) {
  if (options_.fixed > nanoseconds(0)) return options_.fixed;
  const std::uint64_t n = samples(now);
  if (n < options_.minSamples) return std::nullopt;
  // The smallest bucket whose cumulative count reaches percentile % of the samples.
  const auto rank =
      static_cast<std::uint64_t>(std::ceil(static_cast<double>(n) * options_.percentile / 100));
  std::uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    for (const auto& slice : counts_) seen += slice[static_cast<std::size_t>(b)];
    if (seen >= rank) return std::max(options_.floor, upperBound(b));
  }
  return std::max(options_.floor, upperBound(kBuckets - 1));
}

LoadCap::LoadCap(double percent) : percent_(percent) {
  if (!(percent >= 0 && percent <= 100)) {
    throw std::invalid_argument(fmt::format("LoadCap percent = {} (expected: 0..100)", percent));
  }
}

void LoadCap::advance(nanoseconds now) {
  rotate(currentSlice_, now.count() / kSliceNs, kSlices, [this](int i) {
    calls_[static_cast<std::size_t>(i)] = 0;
    extras_[static_cast<std::size_t>(i)] = 0;
  });
}

void LoadCap::onCall(nanoseconds now) {
  advance(now);
  ++calls_[static_cast<std::size_t>(currentSlice_ % kSlices)];
}

bool LoadCap::tryExtra(nanoseconds now) {
  advance(now);
  std::uint64_t calls = 0;
  std::uint64_t extras = 0;
  for (int i = 0; i < kSlices; ++i) {
    calls += calls_[static_cast<std::size_t>(i)];
    extras += extras_[static_cast<std::size_t>(i)];
  }
  if (static_cast<double>(extras + 1) * 100 > percent_ * static_cast<double>(calls)) {
    ++refusals_;
    return false;
  }
  ++extras_[static_cast<std::size_t>(currentSlice_ % kSlices)];
  return true;
}

}  // namespace wheelbeat::tasks::cluster
