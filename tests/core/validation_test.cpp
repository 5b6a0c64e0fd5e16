// Construction: argument validation, the 1 ms tick floor, power-of-two rounding, the
// 64-instance warning, and misuse of newTimeout()/advance().
#include "support.h"

#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>
#include <string>

using namespace wbtest;

namespace {

// Builds a Drive::Manual timer with `options` and returns the std::invalid_argument message.
std::string constructionError(WheelOptions options) {
  TimerHooks hooks;
  hooks.clock = std::make_shared<ManualClock>();
  hooks.drive = Drive::Manual;
  try {
    HashedWheelTimer timer(options, hooks);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  FAIL("expected std::invalid_argument for tickDuration="
       << options.tickDuration.count() << "ns ticksPerWheel=" << options.ticksPerWheel);
  return {};
}

TimerHooks manualHooks() {
  TimerHooks hooks;
  hooks.clock = std::make_shared<ManualClock>();
  hooks.drive = Drive::Manual;
  return hooks;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("zero tickDuration is rejected naming the parameter and value") {
  const std::string what = constructionError(wheelOptions(0ns, 512));
  CHECK_MESSAGE(contains(what, "tickDuration"), what);
  CHECK_MESSAGE(contains(what, "0"), what);
}

TEST_CASE("negative tickDuration is rejected naming the parameter and value") {
  const std::string what = constructionError(wheelOptions(-5ms, 512));
  CHECK_MESSAGE(contains(what, "tickDuration"), what);
  CHECK_MESSAGE(contains(what, "-5"), what);
}

TEST_CASE("zero ticksPerWheel is rejected naming the parameter and value") {
  const std::string what = constructionError(wheelOptions(100ms, 0));
  CHECK_MESSAGE(contains(what, "ticksPerWheel"), what);
  CHECK_MESSAGE(contains(what, "0"), what);
}

TEST_CASE("negative ticksPerWheel is rejected naming the parameter and value") {
  const std::string what = constructionError(wheelOptions(100ms, -1));
  CHECK_MESSAGE(contains(what, "ticksPerWheel"), what);
  CHECK_MESSAGE(contains(what, "-1"), what);
}

TEST_CASE("ticksPerWheel above 2^30 is rejected naming the parameter and value") {
  const std::string what = constructionError(wheelOptions(100ms, (std::int64_t{1} << 30) + 1));
  CHECK_MESSAGE(contains(what, "ticksPerWheel"), what);
  CHECK_MESSAGE(contains(what, "1073741825"), what);
}

TEST_CASE("tickDuration times ticksPerWheel overflowing is rejected") {
  // 2^62 ns * 2 = 2^63 ns does not fit in std::chrono::nanoseconds.
  const std::string what = constructionError(wheelOptions(ns(std::int64_t{1} << 62), 2));
  CHECK_MESSAGE((contains(what, "tickDuration") || contains(what, "ticksPerWheel")), what);
  const std::string whatMax = constructionError(wheelOptions(ns::max(), 1024));
  CHECK_MESSAGE((contains(whatMax, "tickDuration") || contains(whatMax, "ticksPerWheel")), whatMax);
}

TEST_CASE("a tick of 500 us is raised to 1 ms with one warning") {
  LogCapture log;
  HashedWheelTimer timer(wheelOptions(500us, 512), manualHooks());
  CHECK(timer.tickDuration() == 1ms);
  CHECK(log.count(LogLevel::Warn) == 1);

  log.clear();
  HashedWheelTimer tiny(wheelOptions(1ns, 512), manualHooks());
  CHECK(tiny.tickDuration() == 1ms);
  CHECK(log.count(LogLevel::Warn) == 1);
}

TEST_CASE("a tick of exactly 1 ms is kept without a warning") {
  LogCapture log;
  HashedWheelTimer timer(wheelOptions(1ms, 512), manualHooks());
  CHECK(timer.tickDuration() == 1ms);
  CHECK(log.count(LogLevel::Warn) == 0);
}

TEST_CASE("ticksPerWheel is rounded up to a power of two") {
  const std::pair<std::int64_t, std::int64_t> cases[] = {{1, 1},     {2, 2},      {3, 4},
                                                         {5, 8},     {32, 32},    {33, 64},
                                                         {512, 512}, {513, 1024}, {100000, 131072}};
  for (const auto& [requested, effective] : cases) {
    CAPTURE(requested);
    HashedWheelTimer timer(wheelOptions(100ms, requested), manualHooks());
    CHECK(timer.ticksPerWheel() == effective);
  }
}

TEST_CASE("default options are a 100 ms tick and 512 slots") {
  HashedWheelTimer timer(WheelOptions{}, manualHooks());
  CHECK(timer.tickDuration() == 100ms);
  CHECK(timer.ticksPerWheel() == 512);
  CHECK_FALSE(timer.isStopped());
  CHECK(timer.pendingTimeouts() == 0);
}

TEST_CASE("creating more than 64 timers logs exactly one warning") {
  // Alone in its process (ctest) this starts from 0; run with the other tests it starts from
  // whatever they left alive, so fill up to the limit rather than assume 0.
  const std::int64_t before = HashedWheelTimer::instanceCount();
  REQUIRE(before < HashedWheelTimer::kInstanceCountLimit);
  LogCapture log;
  std::vector<std::unique_ptr<HashedWheelTimer>> timers;
  while (HashedWheelTimer::instanceCount() < HashedWheelTimer::kInstanceCountLimit) {
    timers.push_back(std::make_unique<HashedWheelTimer>(wheelOptions(10ms, 4), manualHooks()));
  }
  CHECK(HashedWheelTimer::instanceCount() == 64);
  CHECK(log.count(LogLevel::Warn) == 0);

  timers.push_back(std::make_unique<HashedWheelTimer>(wheelOptions(10ms, 4), manualHooks()));
  CHECK(HashedWheelTimer::instanceCount() == 65);
  CHECK(log.count(LogLevel::Warn) == 1);

  // One-time: more timers, and dropping below the limit and going over it again, add nothing.
  for (int i = 0; i < 10; ++i) {
    timers.push_back(std::make_unique<HashedWheelTimer>(wheelOptions(10ms, 4), manualHooks()));
  }
  CHECK(HashedWheelTimer::instanceCount() == 75);
  timers.resize(10);
  CHECK(HashedWheelTimer::instanceCount() == before + 10);
  while (HashedWheelTimer::instanceCount() < 70) {
    timers.push_back(std::make_unique<HashedWheelTimer>(wheelOptions(10ms, 4), manualHooks()));
  }
  CHECK(log.count(LogLevel::Warn) == 1);

  timers.clear();
  CHECK(HashedWheelTimer::instanceCount() == before);
}

TEST_CASE("instanceCount follows construction and destruction") {
  const std::int64_t before = HashedWheelTimer::instanceCount();
  {
    HashedWheelTimer a(wheelOptions(10ms, 4), manualHooks());
    CHECK(HashedWheelTimer::instanceCount() == before + 1);
    {
      HashedWheelTimer b(wheelOptions(10ms, 4), manualHooks());
      CHECK(HashedWheelTimer::instanceCount() == before + 2);
    }
    CHECK(HashedWheelTimer::instanceCount() == before + 1);
  }
  CHECK(HashedWheelTimer::instanceCount() == before);
}

TEST_CASE("newTimeout with an empty task throws invalid_argument and schedules nothing") {
  ManualWheel w;
  TimerTask empty;
  CHECK_THROWS_AS(w.schedule(std::move(empty), 10ms), std::invalid_argument);
  CHECK(w.timer().pendingTimeouts() == 0);
  CHECK(w.timer().metrics().scheduled == 0);
}

TEST_CASE("advance on a Drive::Thread timer throws logic_error") {
  HashedWheelTimer timer(wheelOptions(10ms, 32));  // steady clock, own worker thread
  CHECK_THROWS_AS(timer.advance(), std::logic_error);
  timer.start();
  CHECK_THROWS_AS(timer.advance(), std::logic_error);
  CHECK(timer.stop().empty());
}

TEST_CASE("advance from inside a task throws logic_error") {
  ManualWheel w;
  w.start();
  int threw = 0;
  w.schedule(
      [&] {
        try {
          w.timer().advance();
        } catch (const std::logic_error&) {
          ++threw;
        }
      },
      1ms);
  CHECK(w.step() == 1);
  CHECK(threw == 1);
}

TEST_CASE("maxPendingTimeouts of zero or below means unlimited") {
  for (const std::int64_t limit : {std::int64_t{0}, std::int64_t{-1}}) {
    CAPTURE(limit);
    ManualWheel w(wheelOptions(10ms, 32, limit));
    for (int i = 0; i < 1000; ++i) w.schedule([] {}, 1s);
    CHECK(w.timer().pendingTimeouts() == 1000);
    CHECK(w.timer().metrics().rejected == 0);
  }
}

}  // TEST_SUITE("core")
