// SteadyClock::readNotBefore(), the reading newTimeout() computes deadlines from on the steady
// clock: never before read() at the moment of the call, at most 81 us after it (clock.h), on
// the TSC path and on the exact fallback alike; and timeouts scheduled on it never fire early.
#include "support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <limits>
#include <random>
#include <thread>

using namespace wbtest;
using wheelbeat::core::SteadyClock;

namespace {

// The TSC path calibrates over the process's first 20 ms of calls; wait for it (bounded) so the
// tests below exercise it where the platform allows it.
bool waitForTsc() {
  const std::int64_t until = nowNs() + std::chrono::nanoseconds(2s).count();
  while (!SteadyClock::readNotBeforeUsesTsc() && nowNs() < until) {
    (void)SteadyClock::readNotBefore();
    std::this_thread::yield();
  }
  return SteadyClock::readNotBeforeUsesTsc();
}

struct Bounds {
  std::int64_t early = 0;     // readings before read() just before them: must stay 0
  std::int64_t tooLate = 0;   // readings more than 81 us after read() just after them
  std::int64_t minAhead = 0;  // smallest reading - read() before it (ns)
};

// Brackets each reading between two exact ones; every 64th pauses > 64 us first, so the
// thread's base goes stale and is replaced (the rebase path) as well as extrapolated.
Bounds measure(int count, unsigned seed) {
  constexpr std::int64_t kMaxAheadNs = 81'000;
  Bounds b;
  b.minAhead = std::numeric_limits<std::int64_t>::max();
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    if (i % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(70 + rng() % 100));
    const std::int64_t before = nowNs();
    const std::int64_t reading = SteadyClock::readNotBefore().count();
    const std::int64_t after = nowNs();
    b.early += reading < before ? 1 : 0;
    b.tooLate += reading > after + kMaxAheadNs ? 1 : 0;
    b.minAhead = std::min(b.minAhead, reading - before);
  }
  return b;
}

}  // namespace

TEST_SUITE("realtime") {
TEST_CASE("realtime: readNotBefore is never before read and at most 81 us after it") {
  MESSAGE("TSC path in use: " << waitForTsc());
  constexpr int kPerThread = 20'000;
  std::array<Bounds, 2> results;
  std::thread other([&] { results[1] = measure(kPerThread, 2); });
  results[0] = measure(kPerThread, 1);
  other.join();
  for (const Bounds& b : results) {
    CHECK(b.early == 0);
    CHECK(b.tooLate == 0);
    CHECK(b.minAhead >= 0);
  }
}

TEST_CASE("realtime: timeouts scheduled from 2 threads on the TSC reading never fire early") {
  MESSAGE("TSC path in use: " << waitForTsc());
  constexpr int kPerThread = 2'000;
  struct Record {
    std::int64_t scheduledAt = 0;
    std::int64_t delay = 0;
    std::int64_t firedAt = 0;
  };
  std::vector<Record> records(2 * kPerThread);
  Completion done(2 * kPerThread);
  HashedWheelTimer timer(wheelOptions(1ms, 512));
  auto produce = [&](int first, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::int64_t> delayNs(0, 30'000'000);
    for (int i = first; i < first + kPerThread; ++i) {
      Record* rec = &records[static_cast<std::size_t>(i)];
      rec->delay = delayNs(rng);
      rec->scheduledAt = nowNs();
      timer.newTimeout(
          [rec, &done] {
            rec->firedAt = nowNs();
            done.arrive();
          },
          ns(rec->delay));
    }
  };
  std::thread other(produce, kPerThread, 8u);
  produce(0, 7u);
  other.join();
  REQUIRE(done.waitFor(kGenerous));
  timer.stop();  // joins the worker: the records are complete
  int early = 0;
  for (const Record& r : records) early += r.firedAt - r.scheduledAt < r.delay ? 1 : 0;
  CHECK(early == 0);
  CHECK(timer.metrics().fired == 2 * kPerThread);
}
}  // TEST_SUITE("realtime")
