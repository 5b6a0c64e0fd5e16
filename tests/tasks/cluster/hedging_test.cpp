// HedgeDelay (fixed, adaptive percentile over a sliding window, floor, minimum samples) and
// LoadCap (extra attempts <= p % of the calls of the last second).
#include "support.h"

#include <wheelbeat/tasks/cluster/hedging.h>

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>

using namespace std::chrono_literals;
using std::chrono::nanoseconds;
using wheelbeat::tasks::cluster::HedgeDelay;
using wheelbeat::tasks::cluster::HedgeDelayOptions;
using wheelbeat::tasks::cluster::LoadCap;

namespace {

// validate()'s message for braced options ("" when accepted).
std::string validationError(const HedgeDelayOptions& o) { return cluster_test::validationError(o); }

}  // namespace

TEST_SUITE("cluster") {
TEST_CASE("hedging: a bucket's upper bound is above its values and within an eighth of them") {
  for (std::int64_t us = 1; us < 5'000'000; us += 1 + us / 97) {
    const nanoseconds v = std::chrono::microseconds(us);
    const nanoseconds bound = HedgeDelay::upperBound(HedgeDelay::bucketOf(v));
    CHECK(bound > v);
    CHECK(bound.count() <= v.count() + v.count() / 8 + 1000);
    CHECK(HedgeDelay::bucketOf(v) <= HedgeDelay::bucketOf(v + 1us));  // monotonic
  }
  CHECK(HedgeDelay::bucketOf(0ns) == 0);
  CHECK(HedgeDelay::bucketOf(999ns) == 0);
  CHECK(HedgeDelay::bucketOf(nanoseconds::max()) == HedgeDelay::kBuckets - 1);
}

TEST_CASE("hedging: the adaptive delay is the window's percentile, after enough samples") {
  HedgeDelay d({.percentile = 95, .floor = 0ns, .window = 10s, .minSamples = 1000});
  for (int i = 1; i <= 999; ++i) d.observe(std::chrono::microseconds(i), 1s);
  CHECK_FALSE(d.delay(1s).has_value());  // 999 < 1000
  d.observe(1000us, 1s);
  const nanoseconds p95 = d.delay(1s).value();
  CHECK(p95 >= 950us);
  CHECK(p95 <= 950us + 950us / 8 + 1us);
  // The floor wins over a smaller percentile.
  HedgeDelay floored({.percentile = 95, .floor = 5ms, .minSamples = 10});
  for (int i = 0; i < 10; ++i) floored.observe(100us, 1s);
  CHECK(floored.delay(1s) == 5ms);
}

TEST_CASE("hedging: observations leave the window a slice at a time") {
  HedgeDelay d({.percentile = 50, .floor = 0ns, .window = 10s, .minSamples = 1});
  for (int i = 0; i < 100; ++i) d.observe(50ms, 0s);  // slice 0
  for (int i = 0; i < 100; ++i) d.observe(1ms, 5s);   // slice 5
  CHECK(d.samples(9s) == 200);
  CHECK(d.samples(10s) == 100);  // slice 0 dropped when slice 10 starts
  CHECK(d.delay(10s).value() <= 1125us);
  CHECK(d.samples(15s) == 0);
  CHECK_FALSE(d.delay(15s).has_value());
  d.observe(3ms, 100s);  // after a long gap every old slice is gone
  CHECK(d.samples(100s) == 1);
}

TEST_CASE("hedging: a fixed delay needs no samples") {
  HedgeDelay d({.fixed = 7ms});
  CHECK(d.delay(0s) == 7ms);
}

TEST_CASE("hedging: extra attempts stay within the share of the last second's calls") {
  LoadCap cap(5);
  CHECK_FALSE(cap.tryExtra(0s));                                               // no calls: no extra
  for (int i = 0; i < 100; ++i) cap.onCall(std::chrono::milliseconds(i * 5));  // 0 .. 495 ms
  int allowed = 0;
  for (int i = 0; i < 10; ++i) allowed += cap.tryExtra(500ms) ? 1 : 0;
  CHECK(allowed == 5);
  CHECK(cap.refusals() == 6);
  // At 1.4 s the calls (slices 0 .. 4) have left the window, the 5 extras of 500 ms have not.
  CHECK_FALSE(cap.tryExtra(1400ms));
  for (int i = 0; i < 120; ++i) cap.onCall(1400ms);  // 120 calls: room for 6 extras, 5 taken
  CHECK(cap.tryExtra(1400ms));
  CHECK_FALSE(cap.tryExtra(1400ms));
  CHECK_THROWS_AS(LoadCap(101), std::invalid_argument);
}

TEST_CASE("hedging: options are checked, naming the field, the value and the expectation") {
  CHECK(validationError({}) == "");
  CHECK(validationError({.percentile = 100}) ==
        "HedgeDelayOptions.percentile = 100 (expected: 50 <= percentile < 100)");
  CHECK(validationError({.fixed = -1ms}) == "HedgeDelayOptions.fixed = -1ms (expected: >= 0)");
  CHECK(validationError({.window = 5ms}) == "HedgeDelayOptions.window = 5ms (expected: >= 10ms)");
  CHECK(validationError({.minSamples = 0}) == "HedgeDelayOptions.minSamples = 0 (expected: >= 1)");
  CHECK_THROWS_AS(HedgeDelay({.percentile = 20}), std::invalid_argument);
}
}  // TEST_SUITE("cluster")
