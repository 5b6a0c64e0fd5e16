// HashedWheelTimer::tryRearm(): a task scheduling itself again in place. Deadlines, handles,
// counts and the task's lifetime are those of newTimeout(); where the task cannot be re-armed in
// place the call changes nothing.
#include "support.h"

#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <vector>

using namespace wbtest;

namespace {

// Records where a task ran (tick numbers) and the handles it saw and made.
struct Trace {
  std::vector<std::int64_t> ticks;
  std::vector<Timeout> ran;     // the handle each run was called with
  std::vector<Timeout> rearms;  // what each tryRearm() returned
};

}  // namespace

TEST_SUITE("core") {

TEST_CASE("a task re-armed in place runs again at its new deadline with a new handle") {
  ManualWheel w;  // 10 ms ticks
  w.start();
  Trace trace;
  const Timeout first = w.schedule(
      [&](const Timeout& self) {
        trace.ticks.push_back(w.currentTick());
        trace.ran.push_back(self);
        if (trace.ticks.size() < 4) trace.rearms.push_back(w.timer().tryRearm(self, 20ms));
      },
      10ms);
  w.step(1);
  REQUIRE(trace.rearms.size() == 1);
  const Timeout second = trace.rearms[0];
  CHECK(static_cast<bool>(second));
  CHECK(second != first);
  CHECK(first.state() == TimeoutState::Expired);
  CHECK(second.state() == TimeoutState::Pending);
  CHECK(second.task() != nullptr);
  CHECK(w.timer().pendingTimeouts() == 1);
  w.step(9);
  CHECK(trace.ticks == std::vector<std::int64_t>{1, 3, 5, 7});
  CHECK(trace.ran ==
        std::vector<Timeout>{first, trace.rearms[0], trace.rearms[1], trace.rearms[2]});
  for (const Timeout& t : trace.ran) CHECK(t.state() == TimeoutState::Expired);
  CHECK(w.timer().pendingTimeouts() == 0);
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.scheduled == 4);  // one newTimeout(), three re-arms
  CHECK(m.fired == 4);
  CHECK(m.cancelled == 0);
  CHECK(trace.rearms.back().task() == nullptr);  // released after its last run
}

TEST_CASE("a re-armed task keeps its captures until it stops re-arming") {
  ManualWheel w;
  w.start();
  auto token = std::make_shared<int>(0);
  int runs = 0;
  w.schedule(
      [&, token](const Timeout& self) {
        if (++runs < 3) CHECK(static_cast<bool>(w.timer().tryRearm(self, 0ms)));
      },
      0ms);
  w.step(1);
  CHECK(runs == 1);
  CHECK(token.use_count() == 2);  // still in the wheel, not moved nor copied
  w.step(1);
  CHECK(runs == 2);
  CHECK(token.use_count() == 2);
  w.step(3);
  CHECK(runs == 3);
  CHECK(token.use_count() == 1);
}

TEST_CASE("cancelling a re-armed timeout stops it and releases its task") {
  ManualWheel w;
  w.start();
  auto token = std::make_shared<int>(0);
  int runs = 0;
  Timeout next;
  w.schedule(
      [&, token](const Timeout& self) {
        ++runs;
        next = w.timer().tryRearm(self, 30ms);
      },
      10ms);
  w.step(1);
  REQUIRE(next.isPending());
  CHECK(next.cancel());
  CHECK_FALSE(next.cancel());
  CHECK(next.state() == TimeoutState::Cancelled);
  CHECK(w.timer().pendingTimeouts() == 0);
  w.step(5);
  CHECK(runs == 1);
  CHECK(token.use_count() == 1);
  CHECK(w.timer().metrics().cancelled == 1);
}

TEST_CASE("a re-arm inside its own run can be cancelled before the run returns") {
  ManualWheel w;
  w.start();
  auto token = std::make_shared<int>(0);
  int runs = 0;
  w.schedule(
      [&, token](const Timeout& self) {
        ++runs;
        const Timeout next = w.timer().tryRearm(self, 10ms);
        CHECK(next.cancel());
      },
      10ms);
  w.step(4);
  CHECK(runs == 1);
  CHECK(w.timer().pendingTimeouts() == 0);
  CHECK(token.use_count() == 1);
}

TEST_CASE("tryRearm changes nothing where the task cannot be re-armed in place") {
  ManualWheel w;
  w.start();
  ManualWheel other;
  other.start();
  const Timeout sibling = w.schedule([] {}, 1s);
  SUBCASE("outside any task") {
    CHECK_FALSE(w.timer().tryRearm(sibling, 10ms));
    CHECK(sibling.isPending());
    CHECK(w.timer().pendingTimeouts() == 1);
  }
  SUBCASE("an empty handle, or one of another timer") {
    std::vector<Timeout> results;
    const Timeout foreign = other.schedule([] {}, 1s);
    w.schedule(
        [&](const Timeout&) {
          results.push_back(w.timer().tryRearm(Timeout{}, 10ms));
          results.push_back(w.timer().tryRearm(foreign, 10ms));
        },
        10ms);
    w.step(1);
    CHECK(results == std::vector<Timeout>{Timeout{}, Timeout{}});
    CHECK(foreign.isPending());
    CHECK(other.timer().pendingTimeouts() == 1);
  }
  SUBCASE("inside a task, with another timeout's handle") {
    std::optional<Timeout> result;
    w.schedule([&](const Timeout&) { result = w.timer().tryRearm(sibling, 10ms); }, 10ms);
    w.step(1);
    REQUIRE(result.has_value());
    CHECK_FALSE(*result);
    CHECK(sibling.isPending());
    CHECK(w.timer().pendingTimeouts() == 1);
  }
  SUBCASE("a second re-arm in the same run") {
    std::vector<Timeout> results;
    w.schedule(
        [&](const Timeout& self) {
          if (!results.empty()) return;
          results.push_back(w.timer().tryRearm(self, 10ms));
          results.push_back(w.timer().tryRearm(self, 10ms));
        },
        10ms);
    w.step(1);
    REQUIRE(results.size() == 2);
    CHECK(results[0].isPending());
    CHECK_FALSE(results[1]);
    CHECK(w.timer().pendingTimeouts() == 2);  // the sibling and one re-arm
    CHECK(w.step(1) == 1);
  }
}

TEST_CASE("with an executor tryRearm returns an empty handle: newTimeout() is the way") {
  TimerHooks hooks;
  hooks.executor = [](std::function<void()> run) { run(); };  // inline, after the hand-over
  ManualWheel w(wheelOptions(10ms, 32), std::move(hooks));
  w.start();
  std::optional<Timeout> result;
  w.schedule([&](const Timeout& self) { result = w.timer().tryRearm(self, 10ms); }, 10ms);
  w.step(1);
  REQUIRE(result.has_value());
  CHECK_FALSE(*result);
  CHECK(w.timer().pendingTimeouts() == 0);
  CHECK(w.timer().metrics().scheduled == 1);
}

TEST_CASE("a re-arm refused by maxPendingTimeouts changes nothing") {
  ManualWheel w(wheelOptions(10ms, 32, 2));
  w.start();
  auto token = std::make_shared<int>(0);
  const Timeout longOne = w.schedule([] {}, 1s);
  Timeout other;
  bool rejected = false;
  const Timeout self = w.schedule(
      [&, token](const Timeout& running) {
        other = w.timer().newTimeout([] {}, 1s);  // the second pending place
        try {
          w.timer().tryRearm(running, 10ms);
        } catch (const RejectedTimeoutError&) {
          rejected = true;
        }
      },
      10ms);
  w.step(1);
  CHECK(rejected);
  CHECK(self.state() == TimeoutState::Expired);
  CHECK(longOne.isPending());
  CHECK(other.isPending());
  CHECK(w.timer().pendingTimeouts() == 2);
  CHECK(w.timer().metrics().rejected == 1);
  CHECK(token.use_count() == 1);  // the run ended without a re-arm: the task was released
}

TEST_CASE("a re-armed timeout keeps the acceptance order of its tick") {
  ManualWheel w;
  w.start();
  std::vector<char> order;
  int runs = 0;
  w.schedule(
      [&](const Timeout& self) {
        order.push_back('A');
        if (++runs > 1) return;
        w.timer().newTimeout([&] { order.push_back('x'); }, 10ms);
        w.timer().tryRearm(self, 10ms);
        w.timer().newTimeout([&] { order.push_back('y'); }, 10ms);
      },
      10ms);
  w.step(2);
  CHECK(order == std::vector<char>{'A', 'x', 'A', 'y'});
}

TEST_CASE("stop() hands back a re-armed timeout that never ran") {
  ManualWheel w;
  w.start();
  Timeout next;
  w.schedule([&](const Timeout& self) { next = w.timer().tryRearm(self, 50ms); }, 10ms);
  w.step(1);
  REQUIRE(next.isPending());
  const std::vector<Timeout> left = w.timer().stop();
  CHECK(left == std::vector<Timeout>{next});
  CHECK(next.state() == TimeoutState::Cancelled);
  CHECK(next.task() != nullptr);  // kept until the timer is destroyed
  CHECK(w.timer().pendingTimeouts() == 0);
}

}  // TEST_SUITE("core")
