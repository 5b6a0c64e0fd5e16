// Scheduling and firing on a manual clock: when a timeout runs (never early, on its exact
// tick), delay 0 / negative / huge delays, re-arming and rescheduling from inside a task, and a
// large randomized load.
#include "support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

using namespace wbtest;

namespace {

// The tick a timeout runs on when scheduled on tick boundary `current` (already processed).
std::int64_t expectedTick(std::int64_t current, ns delay, ns tick) {
  if (delay <= 0ns) return current + 1;
  return current + (delay.count() + tick.count() - 1) / tick.count();
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("a 10 s timeout has not run after 3 s") {
  ManualWheel w(WheelOptions{});  // Netty's defaults: 100 ms x 512
  w.start();
  int runs = 0;
  const Timeout t = w.schedule([&] { ++runs; }, 10s);
  w.step(30);  // 3 s
  CHECK(runs == 0);
  CHECK(t.isPending());
  CHECK_FALSE(t.isExpired());
  CHECK(w.timer().pendingTimeouts() == 1);
  CHECK(w.timer().stop().size() == 1);
}

TEST_CASE("a 2 s timeout runs within 3 s and is expired") {
  ManualWheel w(WheelOptions{});
  w.start();
  int runs = 0;
  const Timeout t = w.schedule([&] { ++runs; }, 2s);
  w.step(19);
  CHECK(runs == 0);
  w.step(1);  // 2 s: exactly on time
  CHECK(runs == 1);
  w.step(10);  // 3 s
  CHECK(runs == 1);
  CHECK(t.isExpired());
  CHECK_FALSE(t.isCancelled());
  CHECK(w.timer().pendingTimeouts() == 0);
}

TEST_CASE("delay 0 never runs inside newTimeout and runs on the next tick") {
  ManualWheel w;
  w.start();
  int runs = 0;
  const Timeout t = w.schedule([&] { ++runs; }, 0ns);
  CHECK(runs == 0);
  CHECK(t.isPending());
  CHECK(w.step() == 1);
  CHECK(runs == 1);
  CHECK(t.isExpired());
}

TEST_CASE("negative delays run on the next tick") {
  ManualWheel w;
  w.start();
  int runs = 0;
  w.schedule([&] { ++runs; }, -1ns);
  w.schedule([&] { ++runs; }, -10s);
  w.schedule([&] { ++runs; }, ns::min());
  CHECK(runs == 0);
  CHECK(w.timer().pendingTimeouts() == 3);
  CHECK(w.step() == 3);
  CHECK(runs == 3);
  CHECK(w.timer().pendingTimeouts() == 0);
}

TEST_CASE("delay 0 scheduled by a task does not run in the same advance call") {
  ManualWheel w;
  w.start();
  int inner = 0;
  bool outerRunning = false;
  w.schedule(
      [&] {
        outerRunning = true;
        w.schedule(
            [&] {
              CHECK_FALSE(outerRunning);  // never re-entrant
              ++inner;
            },
            0ns);
        w.schedule([&] { ++inner; }, -1s);
        outerRunning = false;
      },
      5 * w.tick());
  CHECK(w.step(5) == 1);
  CHECK(inner == 0);
  CHECK(w.timer().pendingTimeouts() == 2);
  CHECK(w.timer().advance() == 0);  // clock unchanged: still not due
  CHECK(inner == 0);
  CHECK(w.step() == 2);
  CHECK(inner == 2);
}

TEST_CASE(
    "delay 0 scheduled by a task runs later in the same advance when the clock is past the next "
    "tick") {
  ManualWheel w;
  w.start();
  std::vector<int> order;
  bool outerRunning = false;
  w.schedule(
      [&] {
        outerRunning = true;
        w.schedule(
            [&] {
              CHECK_FALSE(outerRunning);
              order.push_back(2);
            },
            0ns);
        order.push_back(1);
        outerRunning = false;
      },
      3 * w.tick());
  w.clock().advance(10 * w.tick());  // one advance() call covers ticks 1..10
  CHECK(w.timer().advance() == 2);
  CHECK(order == std::vector<int>{1, 2});
}

TEST_CASE("never early: random delays on several tick sizes run on their exact tick") {
  std::mt19937_64 rng(20240601);
  for (const ns tick : {ns(1ms), ns(7ms), ns(100ms), ns(1s)}) {
    CAPTURE(tick.count());
    ManualWheel w(wheelOptions(tick, 64));
    w.start();
    std::uniform_int_distribution<std::int64_t> delayDist(-tick.count(), 300 * tick.count());
    int fired = 0;
    int scheduled = 0;
    for (int round = 0; round < 200; ++round) {
      for (int i = 0; i < 5; ++i) {
        ns delay(delayDist(rng));
        if (i == 0) delay = (round % 40) * tick;        // exact multiples, including 0
        if (i == 1) delay = (round % 40) * tick + 1ns;  // just past a tick: the next one
        const ns scheduledAt = w.now();
        const std::int64_t due = expectedTick(w.currentTick(), delay, tick);
        const ns dueTime = w.tickTime(due);
        w.schedule(
            [&fired, &w, scheduledAt, delay, dueTime] {
              const ns now = w.now();
              CHECK(now >= scheduledAt + delay);  // never early
              CHECK(now == dueTime);              // and on the first tick at or after the deadline
              ++fired;
            },
            delay);
        ++scheduled;
      }
      w.step();
    }
    w.step(301);
    CHECK(fired == scheduled);
    CHECK(w.timer().pendingTimeouts() == 0);
  }
}

TEST_CASE("never early with the clock moving in random sub-tick steps") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<std::int64_t> stepNs(1, 25'000'000);  // up to 2.5 ticks
  std::uniform_int_distribution<std::int64_t> delayNs(-10'000'000, 1'000'000'000);
  const std::int64_t tickNs = w.tick().count();
  ns previousAdvance = w.now();  // clock value at the previous advance() call
  int fired = 0;
  int wrong = 0;
  int scheduled = 0;
  for (int round = 0; round < 2000; ++round) {
    for (int i = 0; i < 3; ++i) {
      const ns delay(delayNs(rng));
      const std::int64_t since = (w.now() - w.origin()).count();
      const std::int64_t lastProcessed = since / tickNs;
      const std::int64_t firstAtDeadline =
          (since + std::max<std::int64_t>(delay.count(), 0) + tickNs - 1) / tickNs;
      const ns dueTime = w.tickTime(std::max(lastProcessed + 1, firstAtDeadline));
      const ns deadline = w.now() + delay;
      w.schedule(
          [&, deadline, dueTime] {
            // Runs in the first advance() whose clock reached its tick, and never before its
            // deadline.
            if (w.now() < deadline || w.now() < dueTime || previousAdvance >= dueTime) ++wrong;
            ++fired;
          },
          delay);
      ++scheduled;
    }
    w.clock().advance(ns(stepNs(rng)));
    w.timer().advance();
    previousAdvance = w.now();
  }
  w.clock().advance(2s);
  w.timer().advance();
  CHECK(fired == scheduled);
  CHECK(wrong == 0);
}

TEST_CASE("a deadline between ticks runs on the following tick and never before") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  int runs = 0;
  w.schedule([&] { ++runs; }, 25ms);  // tick 2 is at 20 ms: too early; tick 3 at 30 ms
  w.clock().advance(25ms);            // the clock is past the deadline but no tick is due
  w.timer().advance();
  CHECK(runs == 0);
  w.clock().advance(4ms);
  w.timer().advance();
  CHECK(runs == 0);
  w.clock().advance(1ms);  // 30 ms: tick 3
  CHECK(w.timer().advance() == 1);
  CHECK(runs == 1);
}

TEST_CASE("maximum delay does not overflow into firing") {
  ManualWheel w(wheelOptions(1ms, 512));
  w.start();
  int runs = 0;
  const Timeout max = w.schedule([&] { ++runs; }, ns::max());
  const Timeout nearMax = w.schedule([&] { ++runs; }, ns::max() - 1ns);
  const Timeout centuries =
      w.schedule([&] { ++runs; }, std::chrono::duration_cast<ns>(std::chrono::years(200)));
  CHECK(w.timer().pendingTimeouts() == 3);
  CHECK(w.timer().advance() == 0);
  for (int i = 0; i < 10; ++i) {
    w.clock().advance(std::chrono::duration_cast<ns>(std::chrono::years(1)));
    CHECK(w.timer().advance() == 0);
  }
  CHECK(runs == 0);
  CHECK(max.isPending());
  CHECK(nearMax.isPending());
  CHECK(centuries.isPending());
  CHECK(w.timer().pendingTimeouts() == 3);
  CHECK(w.timer().stop().size() == 3);
}

// What a driver of a Drive::Manual timer (net::LoopWheel) sleeps until.
TEST_CASE("nextTickTime is now before the start, then the next tick boundary after now") {
  ManualWheel w(wheelOptions(10ms, 32));
  CHECK(w.timer().drive() == Drive::Manual);
  w.clock().advance(3ms);
  CHECK(w.timer().nextTickTime() == w.now());  // not started: advance() would start it
  w.start();                                   // tick 0 at the current time
  CHECK(w.timer().nextTickTime() == w.tickTime(1));
  w.clock().advance(9ms);
  CHECK(w.timer().nextTickTime() == w.tickTime(1));
  w.clock().advance(1ms);  // exactly on tick 1: the next one is tick 2
  CHECK(w.timer().nextTickTime() == w.tickTime(2));
  w.clock().advance(25ms);
  CHECK(w.timer().nextTickTime() == w.tickTime(4));
  HashedWheelTimer threaded(wheelOptions(10ms, 32));
  CHECK(threaded.drive() == Drive::Thread);
}

TEST_CASE("maximum delay does not overflow on a clock far from zero") {
  auto clock =
      std::make_shared<ManualClock>(std::chrono::duration_cast<ns>(std::chrono::years(100)));
  TimerHooks hooks;
  hooks.clock = clock;
  hooks.drive = Drive::Manual;
  HashedWheelTimer timer(wheelOptions(1ms, 512), hooks);
  int runs = 0;
  timer.newTimeout([&] { ++runs; }, ns::max());
  for (int i = 0; i < 10; ++i) {
    clock->advance(std::chrono::duration_cast<ns>(std::chrono::years(1)));
    CHECK(timer.advance() == 0);
  }
  CHECK(runs == 0);
  CHECK(timer.pendingTimeouts() == 1);
}

TEST_CASE("maximum delay does not overflow on a clock late in its range") {
  // 250 years since the clock's epoch: now + 73 years no longer fits in int64 nanoseconds.
  auto clock =
      std::make_shared<ManualClock>(std::chrono::duration_cast<ns>(std::chrono::years(250)));
  TimerHooks hooks;
  hooks.clock = clock;
  hooks.drive = Drive::Manual;
  HashedWheelTimer timer(wheelOptions(1ms, 512), hooks);
  int runs = 0;
  const Timeout t = timer.newTimeout([&] { ++runs; }, ns::max());
  for (int i = 0; i < 10; ++i) {
    clock->advance(std::chrono::duration_cast<ns>(std::chrono::years(1)));
    CHECK(timer.advance() == 0);
  }
  CHECK(runs == 0);
  CHECK(t.isPending());
  CHECK(timer.pendingTimeouts() == 1);
}

TEST_CASE("a timeout one year ahead fires on its tick after a one-year clock jump") {
  ManualWheel w(wheelOptions(1ms, 512));
  w.start();
  const ns year = std::chrono::duration_cast<ns>(std::chrono::years(1));
  ns firedAt{0};
  w.schedule([&] { firedAt = w.now(); }, year);
  w.clock().advance(year - 1ms);
  CHECK(w.timer().advance() == 0);  // sleeps through ~3e10 empty ticks
  w.clock().advance(1ms);
  CHECK(w.timer().advance() == 1);
  CHECK(firedAt == w.origin() + year);
}

TEST_CASE("advance processes several due ticks in order in one call") {
  ManualWheel w(wheelOptions(10ms, 8));
  w.start();
  std::vector<int> order;
  for (int k = 20; k >= 1; --k) {
    w.schedule([&order, k] { order.push_back(k); }, k * 10ms);
  }
  w.clock().advance(200ms);
  CHECK(w.timer().advance() == 20);
  std::vector<int> expected(20);
  for (int k = 0; k < 20; ++k) expected[static_cast<std::size_t>(k)] = k + 1;
  CHECK(order == expected);
}

TEST_CASE("a task re-arms itself beyond one revolution") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  std::vector<std::int64_t> firedTicks;
  std::function<void()> arm = [&] {
    w.schedule(
        [&] {
          firedTicks.push_back(w.currentTick());
          if (firedTicks.size() < 5) arm();
        },
        100 * w.tick());  // 100 ticks: more than three revolutions of 32 slots
  };
  arm();
  w.step(600);
  CHECK(firedTicks == std::vector<std::int64_t>{100, 200, 300, 400, 500});
  CHECK(w.timer().pendingTimeouts() == 0);
}

TEST_CASE("a task re-arming itself every 100 ms on a 32-slot wheel is reported by stop") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  int fires = 0;
  std::function<void()> arm = [&] {
    w.schedule(
        [&] {
          ++fires;
          arm();
        },
        100ms);
  };
  arm();
  w.step(35);
  CHECK(fires == 3);
  const std::vector<Timeout> unprocessed = w.timer().stop();
  REQUIRE(unprocessed.size() == 1);
  CHECK(unprocessed[0].isCancelled());
}

TEST_CASE("a task reschedules a pending timeout by cancelling it and scheduling a new one") {
  ManualWheel w;
  w.start();
  std::vector<std::int64_t> ranAt;
  Timeout target = w.schedule([&] { ranAt.push_back(-1); }, 50 * w.tick());
  w.schedule(
      [&] {
        CHECK(target.cancel());
        target = w.schedule([&] { ranAt.push_back(w.currentTick()); }, 7 * w.tick());
      },
      10 * w.tick());
  w.step(100);
  CHECK(ranAt == std::vector<std::int64_t>{17});
  CHECK(w.timer().pendingTimeouts() == 0);
}

TEST_CASE("a task schedules into the tick being processed and it runs on the next tick") {
  ManualWheel w;
  w.start();
  std::vector<std::int64_t> ranAt;
  w.schedule(
      [&] {
        // Every delay that maps to the current tick or earlier goes to the next one.
        w.schedule([&] { ranAt.push_back(w.currentTick()); }, 0ns);
        w.schedule([&] { ranAt.push_back(w.currentTick()); }, -w.tick());
        w.schedule([&] { ranAt.push_back(w.currentTick()); }, 1ns);
      },
      4 * w.tick());
  CHECK(w.step(4) == 1);
  CHECK(ranAt.empty());
  CHECK(w.step() == 3);
  CHECK(ranAt == std::vector<std::int64_t>{5, 5, 5});
}

TEST_CASE("200000 random timeouts on a 64-slot wheel each fire once on their exact tick") {
  ManualWheel w(wheelOptions(1ms, 64));
  w.start();
  constexpr int kTotal = 200000;
  constexpr std::int64_t kSpan = 10000;  // ticks
  std::vector<std::uint8_t> fires(kTotal, 0);
  std::uint64_t wrongTime = 0;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> delayDist(-1000, kSpan * 1'000'000);
  struct Check {
    std::uint8_t* fire;
    std::int64_t expectedNs;
  };
  int id = 0;
  // Half scheduled up front, the rest a few per tick while the wheel turns.
  auto scheduleOne = [&] {
    const ns delay(delayDist(rng));
    const ns due = w.tickTime(expectedTick(w.currentTick(), delay, w.tick()));
    Check check{&fires[static_cast<std::size_t>(id++)], due.count()};
    w.schedule(
        [check, &w, &wrongTime] {
          ++*check.fire;
          if (w.now().count() != check.expectedNs) ++wrongTime;
        },
        delay);
  };
  for (int i = 0; i < kTotal / 2; ++i) scheduleOne();
  for (std::int64_t t = 0; t < kSpan; ++t) {
    for (int i = 0; i < 10; ++i) scheduleOne();
    w.step();
  }
  REQUIRE(id == kTotal);
  w.step(kSpan + 1);
  CHECK(wrongTime == 0);
  CHECK(std::count(fires.begin(), fires.end(), std::uint8_t{1}) == kTotal);
  CHECK(w.timer().pendingTimeouts() == 0);
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.scheduled == kTotal);
  CHECK(m.fired == kTotal);
}

TEST_CASE("concurrent newTimeout from 4 threads on a manual timer schedules every timeout") {
  ManualWheel w(wheelOptions(1ms, 64));
  w.start();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::atomic<int>> fires(kThreads * kPerThread);
  {
    std::vector<std::jthread> producers;
    for (int t = 0; t < kThreads; ++t) {
      producers.emplace_back([&, t] {
        std::mt19937 rng(static_cast<unsigned>(t));
        std::uniform_int_distribution<int> delayMs(0, 500);
        for (int i = 0; i < kPerThread; ++i) {
          std::atomic<int>* slot = &fires[static_cast<std::size_t>(t * kPerThread + i)];
          w.schedule([slot] { slot->fetch_add(1, std::memory_order_relaxed); }, delayMs(rng) * 1ms);
        }
      });
    }
    // The wheel keeps turning on this thread while the producers run.
    for (int i = 0; i < 50; ++i) w.step();
  }
  CHECK(w.timer().metrics().scheduled == kThreads * kPerThread);
  w.step(600);
  int once = 0;
  for (const auto& f : fires) once += f.load() == 1 ? 1 : 0;
  CHECK(once == kThreads * kPerThread);
  CHECK(w.timer().pendingTimeouts() == 0);
}

}  // TEST_SUITE("core")
