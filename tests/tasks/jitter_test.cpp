// Jitter: the bounds of every kind over many seeded draws, and exact reproducibility (the same
// seed gives the same sequence, another seed another one).
#include "support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace wbtest;

namespace {

constexpr int kSeeds = 200;
constexpr int kAttempts = 20;  // 1.6^19 > 120: the last attempts are capped

// Calls `check(attempt, delay)` for attempts 1..kAttempts of kSeeds seeded states.
template <typename Check>
void forEachDraw(const RetryOptions& o, Check check) {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    RetryState state(o, kStart, seed);
    for (int i = 0; i < kAttempts; ++i) {
      const Decision d = state.next(kStart, "io");
      REQUIRE(d.retry);
      check(d.attempt, d.delay);
    }
  }
}

ns roundedTimes(ns b, double factor) {
  return ns(std::llround(static_cast<double>(b.count()) * factor));
}

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("jitter none gives exactly the capped backoff") {
  forEachDraw(withJitter(Jitter::None), [](std::int64_t attempt, ns d) {
    REQUIRE(d == cappedBackoff(withJitter(Jitter::None), attempt));
  });
}

TEST_CASE("full jitter stays in 0 to b and spreads over the whole range") {
  const auto o = withJitter(Jitter::Full);
  ns lowest = ns::max();
  ns highest = 0ns;
  forEachDraw(o, [&](std::int64_t attempt, ns d) {
    const ns b = cappedBackoff(o, attempt);
    REQUIRE(d >= 0ns);
    REQUIRE(d <= b);
    if (attempt == kAttempts) {  // b = 120s for every seed
      lowest = std::min(lowest, d);
      highest = std::max(highest, d);
    }
  });
  CHECK(lowest < 12s);    // below 10 % of b
  CHECK(highest > 108s);  // above 90 % of b
}

TEST_CASE("equal jitter stays in b/2 to b") {
  const auto o = withJitter(Jitter::Equal);
  ns lowest = ns::max();
  ns highest = 0ns;
  forEachDraw(o, [&](std::int64_t attempt, ns d) {
    const ns b = cappedBackoff(o, attempt);
    REQUIRE(d >= b / 2);
    REQUIRE(d <= b);
    if (attempt == kAttempts) {
      lowest = std::min(lowest, d);
      highest = std::max(highest, d);
    }
  });
  CHECK(lowest < 66s);
  CHECK(highest > 114s);
}

TEST_CASE("decorrelated jitter stays in initialDelay to maxDelay and within 3x the previous") {
  const auto o = withJitter(Jitter::Decorrelated);
  bool reachedCap = false;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    RetryState state(o, kStart, seed);
    ns previous = o.initialDelay;
    for (int i = 0; i < 50; ++i) {
      const ns d = state.next(kStart, "io").delay;
      REQUIRE(d >= 1s);
      REQUIRE(d <= 120s);
      REQUIRE(d <= 3 * previous);
      reachedCap = reachedCap || d == 120s;
      previous = d;
    }
  }
  CHECK(reachedCap);
}

TEST_CASE("decorrelated first delay is in initialDelay to 3x initialDelay") {
  const auto o = withJitter(Jitter::Decorrelated);
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    RetryState state(o, kStart, seed);
    const ns d = state.next(kStart, "io").delay;
    REQUIRE(d >= 1s);
    REQUIRE(d <= 3s);
  }
}

TEST_CASE("proportional jitter stays within plus or minus the ratio and under the cap") {
  const auto o = withJitter(Jitter::Proportional);
  bool belowB = false;
  bool aboveB = false;
  forEachDraw(o, [&](std::int64_t attempt, ns d) {
    const ns b = cappedBackoff(o, attempt);
    REQUIRE(d >= roundedTimes(b, 0.8));
    REQUIRE(d <= std::min<ns>(120s, roundedTimes(b, 1.2)));
    belowB = belowB || d < b;
    aboveB = aboveB || d > b;
  });
  CHECK(belowB);
  CHECK(aboveB);
}

TEST_CASE("proportional jitter with ratio 0 is exact and with ratio 1 spans 0 to 2b") {
  auto o = withJitter(Jitter::Proportional);
  o.jitterRatio = 0.0;
  forEachDraw(o, [&](std::int64_t attempt, ns d) { REQUIRE(d == cappedBackoff(o, attempt)); });
  o.jitterRatio = 1.0;
  o.maxDelay = 1h;  // keep the cap out of the way
  forEachDraw(o, [&](std::int64_t attempt, ns d) {
    const ns b = cappedBackoff(o, attempt);
    REQUIRE(d >= 0ns);
    REQUIRE(d <= 2 * b);
  });
}

TEST_CASE("the same seed gives the same delays and another seed other delays") {
  for (const Jitter j : {Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::Proportional}) {
    CAPTURE(static_cast<int>(j));
    const auto o = withJitter(j);
    CHECK(delays(o, 42, 30) == delays(o, 42, 30));
    CHECK(delays(o, 42, 30) != delays(o, 43, 30));
    CHECK(delays(o, 0, 30) != delays(o, 1, 30));
  }
}

TEST_CASE("SmallRng is xoshiro256** seeded by splitmix64") {
  // Reference outputs for seed 42, computed with an independent model of the published
  // algorithms (Blackman & Vigna): a mistyped constant or shift would change them.
  wheelbeat::tasks::SmallRng rng(42);
  CHECK(rng() == 0x15780b2e0c2ec716ULL);
  CHECK(rng() == 0x6104d9866d113a7eULL);
  CHECK(rng() == 0xae17533239e499a1ULL);
  CHECK(sizeof(wheelbeat::tasks::SmallRng) == 32);
}

TEST_CASE("seed 42 gives the same delays on every platform") {
  // SmallRng is fully specified and no std distribution is used: these values are portable.
  CHECK(delays(withJitter(Jitter::Full), 42, 4) ==
        std::vector<ns>{855'559'980ns, 595'198'297ns, 228'329'807ns, 4'025'677'391ns});
  CHECK(delays(withJitter(Jitter::Equal), 42, 4) ==
        std::vector<ns>{808'561'220ns, 1'025'853'497ns, 1'728'100'609ns, 3'957'230'590ns});
  CHECK(delays(withJitter(Jitter::Decorrelated), 42, 4) ==
        std::vector<ns>{2'629'059'361ns, 7'332'804'334ns, 4'446'466'746ns, 9'744'719'460ns});
  CHECK(delays(withJitter(Jitter::Proportional), 42, 4) ==
        std::vector<ns>{833'545'188ns, 1'522'547'360ns, 2'744'364'453ns, 4'791'816'922ns});
}

TEST_CASE("no delay is negative or above the cap for 10000 attempts of every kind") {
  for (const Jitter j :
       {Jitter::None, Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::Proportional}) {
    for (const double multiplier : {1.0, 1.6, 1000.0}) {
      CAPTURE(static_cast<int>(j));
      CAPTURE(multiplier);
      auto o = exponential(10ms, multiplier, 30s, j);
      o.jitterRatio = 1.0;
      RetryState state(o, kStart, 7);
      for (int i = 1; i <= 10'000; ++i) {
        const Decision d = state.next(kStart, "io");
        REQUIRE(d.retry);
        REQUIRE(d.attempt == i);
        REQUIRE(d.delay >= 0ns);
        REQUIRE(d.delay <= 30s);
      }
    }
  }
}

TEST_CASE("jitter near the largest duration neither overflows nor goes negative") {
  for (const Jitter j :
       {Jitter::None, Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::Proportional}) {
    CAPTURE(static_cast<int>(j));
    auto o = exponential(1ms, 16.0, ns::max(), j);
    RetryState state(o, kStart, 9);
    for (int i = 0; i < 200; ++i) {
      const ns d = state.next(kStart, "io").delay;
      REQUIRE(d >= 0ns);
    }
    CHECK(cappedBackoff(o, 200) == ns::max());
  }
}

}  // TEST_SUITE("tasks")
