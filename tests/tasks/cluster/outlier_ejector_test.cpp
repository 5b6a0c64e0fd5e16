// OutlierEjector on explicit times: the k-th consecutive failure ejects, the cap is a true one for
// every cluster size and percentage, ejections grow and decay, probation, failure share, suspicion.
#include "support.h"

#include <wheelbeat/tasks/cluster/outlier_ejector.h>
#include <wheelbeat/tasks/small_rng.h>

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>

using namespace std::chrono_literals;
using std::chrono::nanoseconds;
using wheelbeat::tasks::SmallRng;
using wheelbeat::tasks::cluster::EjectReason;
using wheelbeat::tasks::cluster::OutlierEjector;
using wheelbeat::tasks::cluster::OutlierOptions;

namespace {

// validate()'s message for braced options ("" when accepted).
std::string validationError(const OutlierOptions& o) { return cluster_test::validationError(o); }

OutlierEjector withProviders(OutlierOptions options, std::uint64_t n) {
  OutlierEjector e(options);
  for (std::uint64_t id = 0; id < n; ++id) e.add(id, 0ns);
  return e;
}

}  // namespace

TEST_SUITE("cluster") {
TEST_CASE("outlier: the k-th consecutive failure ejects and not one before") {
  for (std::uint32_t k = 1; k <= 10; ++k) {
    OutlierEjector e = withProviders({.consecutiveFailures = k, .suspectFactor = 0}, 4);
    for (std::uint32_t i = 1; i < k; ++i) {
      e.onFailure(1, nanoseconds(i));
      CHECK(e.available(1, nanoseconds(i)));
    }
    e.onFailure(1, nanoseconds(k));
    CHECK_FALSE(e.available(1, nanoseconds(k)));
    CHECK(e.ejected(1, nanoseconds(k)));
    CHECK(e.ejections(EjectReason::Consecutive) == 1);
  }
}

TEST_CASE("outlier: a success breaks the streak") {
  OutlierEjector e = withProviders({.consecutiveFailures = 3, .suspectFactor = 0}, 4);
  e.onFailure(2, 1ms);
  e.onFailure(2, 2ms);
  e.onSuccess(2, 3ms);
  e.onFailure(2, 4ms);
  e.onFailure(2, 5ms);
  CHECK(e.available(2, 5ms));
  e.onFailure(2, 6ms);
  CHECK_FALSE(e.available(2, 6ms));
}

TEST_CASE("outlier: the cap is floor(N x p / 100), never the last one, for N = 1..100") {
  SmallRng rng(7);
  for (std::uint64_t n = 1; n <= 100; ++n) {
    for (std::uint32_t percent = 0; percent <= 100; percent += (n % 7) + 1) {
      for (const bool all : {false, true}) {
        OutlierEjector e = withProviders({.consecutiveFailures = 1,
                                          .maxEjectionPercent = percent,
                                          .allowEjectAll = all,
                                          .suspectFactor = 0},
                                         n);
        const std::size_t byPercent = n * percent / 100;
        const std::size_t cap = all ? byPercent : std::min<std::size_t>(byPercent, n - 1);
        REQUIRE(e.cap() == cap);
        // Every provider fails, in a random order, three times over.
        for (int round = 0; round < 3; ++round) {
          for (std::uint64_t i = 0; i < n; ++i) {
            e.onFailure(rng() % n, 1ms);
            REQUIRE(e.outCount(1ms) <= cap);
          }
        }
        for (std::uint64_t id = 0; id < n; ++id) e.onFailure(id, 1ms);
        CHECK(e.outCount(1ms) == cap);
        CHECK(e.ejections(EjectReason::Consecutive) == cap);
      }
    }
  }
}

TEST_CASE("outlier: ejections last base x multiplier up to the maximum, then probation") {
  OutlierEjector e = withProviders({.consecutiveFailures = 1,
                                    .baseEjectionTime = 10s,
                                    .maxEjectionTime = 25s,
                                    .suspectFactor = 0},
                                   2);
  e.onFailure(0, 0s);
  CHECK(e.ejected(0, 10s - 1ns));
  CHECK(e.available(0, 10s));
  // On probation (10 s .. 20 s): one failure ejects again, for twice as long.
  e.onFailure(0, 12s);
  CHECK(e.ejected(0, 32s - 1ns));
  CHECK(e.available(0, 32s));
  // Third: 30 s, capped at 25 s.
  e.onFailure(0, 33s);
  CHECK(e.ejected(0, 58s - 1ns));
  CHECK(e.available(0, 58s));
  CHECK(e.ejections(EjectReason::Consecutive) == 3);
  // Past probation (58 s + 10 s), each evaluate() decays the multiplier by one: after three, a
  // failure ejects for the base time again.
  for (int i = 0; i < 3; ++i) e.evaluate(70s + std::chrono::seconds(i));
  e.onFailure(0, 80s);
  CHECK(e.ejected(0, 90s - 1ns));
  CHECK(e.available(0, 90s));
}

TEST_CASE("outlier: on probation one failure ejects again - after it, the streak counts") {
  OutlierEjector e =
      withProviders({.consecutiveFailures = 3, .baseEjectionTime = 10s, .suspectFactor = 0}, 2);
  for (int i = 0; i < 3; ++i) e.onFailure(1, 1s);
  REQUIRE(e.ejected(1, 1s));
  e.onFailure(1, 12s);  // back at 11 s, on probation until 21 s
  CHECK(e.ejected(1, 12s));
  CHECK(e.ejected(1, 32s - 1ns));  // the second ejection: 20 s
  e.onFailure(1, 50s);             // probation ended at 42 s: the first of three again
  e.onFailure(1, 51s);
  CHECK(e.available(1, 51s));
  e.onFailure(1, 52s);
  CHECK(e.ejected(1, 52s));
  CHECK(e.ejections(EjectReason::Consecutive) == 3);
}

TEST_CASE("outlier: failures of calls sent before the ejection do not extend it") {
  OutlierEjector e = withProviders({.consecutiveFailures = 2, .suspectFactor = 0}, 4);
  e.onFailure(3, 0s);
  e.onFailure(3, 1s);
  REQUIRE(e.ejected(3, 1s));
  for (int i = 0; i < 10; ++i) e.onFailure(3, 2s);
  CHECK(e.ejected(3, 31s - 1ns));
  CHECK(e.available(3, 31s));
  CHECK(e.ejections(EjectReason::Consecutive) == 1);
}

TEST_CASE("outlier: the failure share ejects at evaluate() with the minimum volume") {
  OutlierEjector e = withProviders(
      {.consecutiveFailures = 0, .failurePercent = 30, .minimumVolume = 10, .suspectFactor = 0}, 4);
  // Provider 0: 3 of 10 fail (30 %: ejected); provider 1: 2 of 10 (stays); provider 2: 9 of 9
  // (below the volume: stays).
  for (int i = 0; i < 10; ++i) {
    i < 3 ? e.onFailure(0, 1s) : e.onSuccess(0, 1s);
    i < 2 ? e.onFailure(1, 1s) : e.onSuccess(1, 1s);
    if (i < 9) e.onFailure(2, 1s);
  }
  CHECK(e.available(0, 1s));  // nothing before evaluate()
  e.evaluate(10s);
  CHECK(e.ejected(0, 10s));
  CHECK(e.available(1, 10s));
  CHECK(e.available(2, 10s));
  CHECK(e.ejections(EjectReason::Percentage) == 1);
  // A new interval starts from zero: provider 2's nine failures are gone.
  e.onFailure(2, 11s);
  e.evaluate(20s);
  CHECK(e.available(2, 20s));
}

TEST_CASE("outlier: a call waiting far beyond the provider's latency makes it suspect") {
  OutlierEjector e = withProviders({.consecutiveFailures = 5,
                                    .baseEjectionTime = 30s,
                                    .suspectFactor = 10,
                                    .suspectFloor = 20ms},
                                   4);
  // typical 1 ms: the floor (20 ms) decides; typical 5 ms: 50 ms.
  CHECK_FALSE(e.onOutstanding(1, 19ms, 1ms, 1s));
  CHECK(e.onOutstanding(1, 20ms, 1ms, 1s));
  CHECK_FALSE(e.onOutstanding(2, 49ms, 5ms, 1s));
  CHECK(e.onOutstanding(2, 50ms, 5ms, 1s));
  CHECK(e.suspect(1, 1s));
  CHECK_FALSE(e.available(1, 1s));
  CHECK(e.ejections(EjectReason::Suspect) == 2);
  // The cap (4 x 50 % = 2) is full: a third suspect is refused.
  CHECK_FALSE(e.onOutstanding(3, 1s, 1ms, 1s));
  CHECK(e.refusedByCap() == 1);
  // An answer clears it; a failure turns the suspicion into an ejection, counted once.
  e.onSuccess(1, 2s);
  CHECK(e.available(1, 2s));
  e.onFailure(2, 2s);
  CHECK(e.ejected(2, 2s));
  CHECK_FALSE(e.suspect(2, 2s));
  CHECK(e.ejections(EjectReason::Suspect) == 2);
  CHECK(e.outCount(2s) == 1);
  // A suspicion nobody answers lapses after baseEjectionTime.
  CHECK(e.onOutstanding(3, 1s, 1ms, 3s));
  CHECK(e.suspect(3, 33s - 1ns));
  CHECK(e.available(3, 33s));
}

TEST_CASE("outlier: ids the ejector does not know") {
  OutlierEjector e = withProviders({.consecutiveFailures = 1}, 2);
  e.onFailure(9, 1s);
  e.onSuccess(9, 1s);
  CHECK_FALSE(e.onOutstanding(9, 10s, 1ms, 1s));
  CHECK_FALSE(e.available(9, 1s));
  CHECK(e.outCount(1s) == 0);
  // remove() frees a place: with 4 providers at 50 %, two may be out.
  OutlierEjector f = withProviders({.consecutiveFailures = 1, .suspectFactor = 0}, 4);
  f.onFailure(0, 1s);
  f.onFailure(1, 1s);
  f.onFailure(2, 1s);
  CHECK(f.outCount(1s) == 2);
  f.remove(0);
  f.add(4, 1s);
  f.onFailure(2, 1s);
  CHECK(f.outCount(1s) == 2);
  CHECK(f.ejected(2, 1s));
}

TEST_CASE("outlier: options are checked, naming the field, the value and the expectation") {
  CHECK(validationError({}) == "");
  CHECK(validationError({.consecutiveFailures = 1001}) ==
        "OutlierOptions.consecutiveFailures = 1001 (expected: 0 (off) or 1..1000)");
  CHECK(validationError({.failurePercent = 101}) ==
        "OutlierOptions.failurePercent = 101 (expected: 0 (off) or 1..100)");
  CHECK(validationError({.minimumVolume = 0}) ==
        "OutlierOptions.minimumVolume = 0 (expected: >= 1)");
  CHECK(validationError({.baseEjectionTime = 40s, .maxEjectionTime = 30s}) ==
        "OutlierOptions.maxEjectionTime = 30s (expected: >= baseEjectionTime = 40s)");
  CHECK(validationError({.maxEjectionPercent = 150}) ==
        "OutlierOptions.maxEjectionPercent = 150 (expected: 0..100)");
  CHECK(validationError({.suspectFactor = 0.5}) ==
        "OutlierOptions.suspectFactor = 0.5 (expected: 0 (off) or 1..1000000)");
  CHECK_THROWS_AS(OutlierEjector({.interval = 0ns}), std::invalid_argument);
}
}  // TEST_SUITE("cluster")
