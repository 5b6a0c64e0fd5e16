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

TEST_CASE("seed 42 gives the same delays on every platform") {
  // mt19937_64 is fully specified and no std distribution is used: these values are portable.
  CHECK(delays(withJitter(Jitter::Full), 42, 4) ==
        std::vector<ns>{327'959'568ns, 535'964'468ns, 487'964'099ns, 319'438'055ns});
  CHECK(delays(withJitter(Jitter::Equal), 42, 4) ==
        std::vector<ns>{897'798'758ns, 1'168'434'121ns, 1'468'186'752ns, 3'801'720'449ns});
  CHECK(delays(withJitter(Jitter::Decorrelated), 42, 4) ==
        std::vector<ns>{2'293'039'984ns, 5'770'597'044ns, 15'311'151'248ns, 33'547'412'767ns});
  CHECK(delays(withJitter(Jitter::Proportional), 42, 4) ==
        std::vector<ns>{1'102'062'213ns, 1'688'980'092ns, 2'818'196'686ns, 3'500'069'165ns});
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
