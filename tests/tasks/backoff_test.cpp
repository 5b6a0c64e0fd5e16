// Backoff without jitter: exact Fixed and Exponential sequences, the cap, and saturation for huge
// attempt numbers and extreme durations.
#include "support.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

using namespace wbtest;

TEST_SUITE("tasks") {

TEST_CASE("fixed backoff repeats initialDelay") {
  RetryOptions o;
  o.backoff = Backoff::Fixed;
  o.initialDelay = 250ms;
  o.multiplier = 3.0;  // not used by Fixed
  o.maxDelay = 10s;
  o.jitter = Jitter::None;
  CHECK(delays(o, 1, 6) == std::vector<ns>{250ms, 250ms, 250ms, 250ms, 250ms, 250ms});
}

TEST_CASE("exponential backoff doubles up to the cap exactly") {
  const auto o = exponential(1s, 2.0, 60s);
  CHECK(delays(o, 1, 9) == std::vector<ns>{1s, 2s, 4s, 8s, 16s, 32s, 60s, 60s, 60s});
}

TEST_CASE("grpc defaults without jitter give 1.6 powers rounded to the nanosecond then 120s") {
  const auto o = exponential(1s, 1.6, 120s);
  const std::vector<ns> expected{1'000'000'000ns,
                                 1'600'000'000ns,
                                 2'560'000'000ns,
                                 4'096'000'000ns,
                                 6'553'600'000ns,
                                 10'485'760'000ns,
                                 16'777'216'000ns,
                                 26'843'545'600ns,
                                 42'949'672'960ns,
                                 68'719'476'736ns,
                                 109'951'162'778ns,
                                 120s,
                                 120s};
  CHECK(delays(o, 7, 13) == expected);
}

TEST_CASE("the default options are grpc connection backoff") {
  const RetryOptions o;
  CHECK(o.backoff == Backoff::Exponential);
  CHECK(o.initialDelay == 1s);
  CHECK(o.multiplier == 1.6);
  CHECK(o.maxDelay == 120s);
  CHECK(o.jitter == Jitter::Proportional);
  CHECK(o.jitterRatio == 0.2);
  CHECK(o.maxAttempts == -1);
  CHECK(o.deadline == 0ns);
  CHECK(o.retryOn.empty());
  CHECK(o.ignore.empty());
}

TEST_CASE("cappedBackoff treats attempts below 1 as the first") {
  const auto o = exponential(100ms, 2.0, 10s);
  CHECK(cappedBackoff(o, 1) == 100ms);
  CHECK(cappedBackoff(o, 0) == 100ms);
  CHECK(cappedBackoff(o, -7) == 100ms);
  CHECK(cappedBackoff(o, std::numeric_limits<std::int64_t>::min()) == 100ms);
}

TEST_CASE("huge attempt numbers saturate at maxDelay") {
  const auto o = exponential(1s, 1.6, 120s);
  CHECK(cappedBackoff(o, 10'000) == 120s);
  CHECK(cappedBackoff(o, std::int64_t{1} << 40) == 120s);
  CHECK(cappedBackoff(o, std::numeric_limits<std::int64_t>::max()) == 120s);
}

TEST_CASE("exponential backoff is non-decreasing and capped for attempts up to 10000") {
  const auto o = exponential(1ms, 1.01, 1h);
  ns previous = 0ns;
  for (std::int64_t n = 1; n <= 10'000; ++n) {
    const ns b = cappedBackoff(o, n);
    REQUIRE(b >= previous);
    REQUIRE(b <= 1h);
    previous = b;
  }
  CHECK(previous == 1h);
}

TEST_CASE("multiplier 1 keeps initialDelay forever") {
  const auto o = exponential(300ms, 1.0, 5s);
  CHECK(cappedBackoff(o, 2) == 300ms);
  CHECK(cappedBackoff(o, 10'000) == 300ms);
  CHECK(cappedBackoff(o, std::numeric_limits<std::int64_t>::max()) == 300ms);
  CHECK(delays(o, 3, 4) == std::vector<ns>{300ms, 300ms, 300ms, 300ms});
}

TEST_CASE("maxDelay equal to initialDelay pins every delay") {
  const auto o = exponential(2s, 1.6, 2s);
  CHECK(delays(o, 3, 4) == std::vector<ns>{2s, 2s, 2s, 2s});
}

TEST_CASE("backoff near the largest duration saturates without overflow") {
  const auto o = exponential(1ns, 2.0, ns::max());
  CHECK(cappedBackoff(o, 63) == ns(std::int64_t{1} << 62));
  CHECK(cappedBackoff(o, 64) == ns::max());  // 2^63 ns does not fit: capped
  CHECK(cappedBackoff(o, 1'000) == ns::max());
  CHECK(cappedBackoff(o, std::numeric_limits<std::int64_t>::max()) == ns::max());
}

}  // TEST_SUITE("tasks")
