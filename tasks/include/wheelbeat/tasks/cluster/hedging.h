// Hedging's two decisions: *when* a call still waiting gets a second attempt (HedgeDelay), and
// *whether* the service may afford one more attempt now (LoadCap).
//
//   HedgeDelay delay({.percentile = 95, .floor = 2ms});
//   delay.observe(latency, now);                 // each answered attempt
//   if (auto d = delay.delay(now)) ...           // hedge a call that waited *d; nullopt: not yet
//
//   LoadCap cap(5.0);                            // extra attempts <= 5 % of calls in any second
//   cap.onCall(now);                             // each call
//   if (cap.tryExtra(now)) ...                   // a hedge (or retry) may go; counted
//
// HedgeDelay is fixed (`fixed` > 0) or adaptive: the `percentile` of the latencies observed over
// the last `window` (ten slices of window / 10; a slice older than the window is dropped whole),
// never below `floor`; nullopt until the window holds `minSamples` observations (a young service
// is not hedged on a guess). Latencies are kept in buckets 1/8 of an octave wide (an estimate is
// at most 12.5 % above the true percentile), from 1 us to 2^38 us (~76 h).
//
// LoadCap: over the last second (ten slices of 100 ms), extra attempts stay <= percent % of
// calls: tryExtra() succeeds while (extras + 1) x 100 <= percent x calls.
//
// Thread: not thread-safe; one owner (the cluster client, on its loop). Times non-decreasing.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

namespace wheelbeat::tasks::cluster {

// Plain options (config/ parses JSON into this struct).
struct HedgeDelayOptions {
  std::chrono::nanoseconds fixed{0};  // > 0: always this delay; 0: adaptive
  double percentile = 95;             // adaptive: 50 <= percentile < 100
  std::chrono::nanoseconds floor = std::chrono::milliseconds(1);  // >= 0
  std::chrono::nanoseconds window = std::chrono::seconds(10);     // >= 10ms
  std::uint32_t minSamples = 100;                                 // >= 1
};

// Throws std::invalid_argument naming the field, its value and the expectation, e.g.
// "HedgeDelayOptions.percentile = 100 (expected: 50 <= percentile < 100)".
void validate(const HedgeDelayOptions& options);

class HedgeDelay {
public:
  // Throws std::invalid_argument for invalid options (see validate()).
  explicit HedgeDelay(HedgeDelayOptions options = {});

  // One answered attempt's latency (negative counts as 0).
  void observe(std::chrono::nanoseconds latency, std::chrono::nanoseconds now);
  // The delay after which a waiting call is hedged now; nullopt while too few observations.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> delay(std::chrono::nanoseconds now);
  // Observations in the window at `now`.
  [[nodiscard]] std::uint64_t samples(std::chrono::nanoseconds now);

  static constexpr int kSubBuckets = 8;                        // per octave
  static constexpr int kOctaves = 38;                          // 1 us .. 2^38 us
  static constexpr int kBuckets = kSubBuckets * kOctaves + 1;  // + below 1 us
  static constexpr int kSlices = 10;

  // The bucket of a latency and the upper bound of a bucket (exposed for the tests).
  [[nodiscard]] static int bucketOf(std::chrono::nanoseconds latency) noexcept;
  [[nodiscard]] static std::chrono::nanoseconds upperBound(int bucket) noexcept;

private:
  void advance(std::chrono::nanoseconds now);

  HedgeDelayOptions options_;
  std::int64_t sliceLength_;        // ns
  std::int64_t currentSlice_ = -1;  // index of the newest slice (now / sliceLength_)
  std::array<std::array<std::uint32_t, kBuckets>, kSlices> counts_{};
  std::array<std::uint32_t, kSlices> totals_{};
};

class LoadCap {
public:
  // 0 <= percent <= 100 (throws std::invalid_argument naming it otherwise).
  explicit LoadCap(double percent);

  void onCall(std::chrono::nanoseconds now);
  // True (and counted) if one more extra attempt stays within the cap.
  [[nodiscard]] bool tryExtra(std::chrono::nanoseconds now);
  // Extra attempts refused since construction.
  [[nodiscard]] std::uint64_t refusals() const noexcept { return refusals_; }

private:
  void advance(std::chrono::nanoseconds now);

  static constexpr int kSlices = 10;
  static constexpr std::int64_t kSliceNs = 100'000'000;  // 100 ms
  double percent_;
  std::int64_t currentSlice_ = -1;
  std::array<std::uint32_t, kSlices> calls_{};
  std::array<std::uint32_t, kSlices> extras_{};
  std::uint64_t refusals_ = 0;
};

}  // namespace wheelbeat::tasks::cluster
