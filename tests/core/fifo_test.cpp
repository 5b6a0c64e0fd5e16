// FIFO within a tick: timeouts due on the same tick run in the order newTimeout() accepted
// them, however they reached that tick (a long delay over several revolutions and cascades, a
// short delay scheduled later, a delay <= 0, from inside a task, while the wheel lagged behind
// the clock).
#include "support.h"

#include <doctest/doctest.h>

#include <random>
#include <utility>

using namespace wbtest;

namespace {

// Records each run as (due tick, sequence, clock tick when it ran); sequence = the order of
// the newTimeout() calls. The due tick is what the test expects: the first tick at or after
// the deadline, or the next tick for delay <= 0 scheduled on a processed tick boundary.
struct Recorder {
  struct Run {
    std::int64_t due;
    int seq;
    std::int64_t ranAt;
  };
  ManualWheel& wheel;
  std::vector<Run> runs;
  int nextSeq = 0;

  Timeout schedule(ns delay, std::int64_t due) {
    Run run{due, nextSeq++, 0};
    return wheel.schedule(
        [this, run]() mutable {
          run.ranAt = wheel.currentTick();
          runs.push_back(run);
        },
        delay);
  }
  // Delay landing on tick `target`, `offset` ns before that tick's time.
  Timeout scheduleFor(std::int64_t target, ns offset = 0ns) {
    return schedule(wheel.tickTime(target) - wheel.now() - offset, target);
  }
  std::vector<int> sequencesAt(std::int64_t tick) const {
    std::vector<int> out;
    for (const auto& run : runs) {
      if (run.due == tick) {
        CHECK(run.ranAt == tick);
        out.push_back(run.seq);
      }
    }
    return out;
  }
};

}  // namespace

TEST_SUITE("core") {

TEST_CASE("FIFO within a tick mixing long delays over several revolutions and later short ones") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  Recorder rec{w, {}, 0};
  constexpr std::int64_t kTarget = 150;  // more than four revolutions of 32 slots
  rec.scheduleFor(kTarget);              // seq 0: exact deadline
  rec.scheduleFor(kTarget, 9ms);         // seq 1: deadline inside tick 149..150
  rec.scheduleFor(kTarget, 1ns);         // seq 2
  w.step(40);
  rec.scheduleFor(kTarget);       // seq 3: still more than three revolutions away
  w.step(60);                     // tick 100
  rec.scheduleFor(kTarget, 5ms);  // seq 4
  w.step(30);                     // tick 130: within one revolution now
  rec.scheduleFor(kTarget);       // seq 5
  w.step(19);                     // tick 149
  rec.schedule(0ns, kTarget);     // seq 6: delay 0 -> next tick = 150
  rec.schedule(-5s, kTarget);     // seq 7: negative -> next tick = 150
  rec.scheduleFor(kTarget);       // seq 8: one tick away
  w.step(1);
  CHECK(rec.sequencesAt(kTarget) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(rec.runs.size() == 9);
  CHECK(w.timer().pendingTimeouts() == 0);
}

TEST_CASE("FIFO within a tick includes timeouts scheduled by a task of the previous tick") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  Recorder rec{w, {}, 0};
  rec.scheduleFor(70);  // seq 0: two revolutions ahead
  w.schedule(
      [&] {
        rec.schedule(0ns, 70);  // seq 2 (scheduled at tick 69): runs at tick 70
        rec.scheduleFor(70);    // seq 3
      },
      69 * w.tick());
  rec.scheduleFor(70, 3ms);  // seq 1
  w.step(70);
  CHECK(rec.sequencesAt(70) == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("FIFO within a tick holds when timeouts are scheduled while the wheel lags the clock") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  Recorder rec{w, {}, 0};
  rec.scheduleFor(200);  // seq 0
  w.step(10);
  // Move the clock 100 ticks without letting the wheel process them, then schedule more for
  // the same target: they are accepted later and must run later.
  w.clock().advance(100 * w.tick());
  rec.scheduleFor(200);       // seq 1 (90 ticks ahead of the clock, 190 ahead of the wheel)
  rec.scheduleFor(200, 1ms);  // seq 2
  w.timer().advance();
  rec.scheduleFor(200, 2ms);         // seq 3
  w.clock().advance(85 * w.tick());  // tick 195, not processed yet
  rec.scheduleFor(200);              // seq 4
  w.step(5);
  CHECK(rec.sequencesAt(200) == std::vector<int>{0, 1, 2, 3, 4});
}

TEST_CASE("FIFO within a tick on randomized schedules across cascades") {
  for (const std::int64_t slots : {std::int64_t{4}, std::int64_t{32}, std::int64_t{256}}) {
    CAPTURE(slots);
    ManualWheel w(wheelOptions(1ms, slots));
    w.start();
    Recorder rec{w, {}, 0};
    std::mt19937 rng(static_cast<unsigned>(slots));
    // Few targets, many schedules for each, from far away and from close by.
    std::uniform_int_distribution<std::int64_t> targetDist(1, 40);
    std::uniform_int_distribution<std::int64_t> offsetNs(0, 999'999);
    std::uniform_int_distribution<int> lagDist(0, 3);
    for (int round = 0; round < 2000; ++round) {
      for (int i = 0; i < 4; ++i) {
        // Multiples of 50 ticks, 50 to 2000 ticks ahead.
        const std::int64_t target = (w.currentTick() / 50 + targetDist(rng)) * 50;
        rec.scheduleFor(target, ns(offsetNs(rng)));
      }
      // Sometimes let the clock run ahead of the wheel for a few ticks.
      const int lag = lagDist(rng);
      if (lag == 0) {
        w.step();
      } else {
        w.clock().advance(lag * w.tick());
        rec.scheduleFor(w.currentTick() + 1);
        w.timer().advance();
      }
    }
    w.step(6000);
    REQUIRE(rec.runs.size() == static_cast<std::size_t>(rec.nextSeq));
    // Ticks run in order, and within a tick the timeouts run in acceptance order.
    int outOfOrder = 0;
    int early = 0;
    for (std::size_t i = 0; i < rec.runs.size(); ++i) {
      const auto& run = rec.runs[i];
      early += run.ranAt < run.due ? 1 : 0;
      if (i == 0) continue;
      const auto& prev = rec.runs[i - 1];
      if (std::pair(prev.due, prev.seq) > std::pair(run.due, run.seq)) ++outOfOrder;
    }
    CHECK(outOfOrder == 0);
    CHECK(early == 0);
    CHECK(w.timer().pendingTimeouts() == 0);
  }
}

}  // TEST_SUITE("core")
