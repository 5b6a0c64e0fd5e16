// Cancel and the pending count: max pending, slots freed by cancel and by expiry, cancels from
// inside tasks (itself, a sibling due in the same tick, a later timeout), and a cancel racing
// the wheel.
#include "support.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

using namespace wbtest;

TEST_SUITE("core") {

TEST_CASE("max pending 2 rejects the third timeout and changes nothing") {
  ManualWheel w(wheelOptions(10ms, 32, 2));
  w.start();
  int runs = 0;
  w.schedule([&] { ++runs; }, 1s);
  w.schedule([&] { ++runs; }, 1s);
  CHECK_THROWS_AS(w.schedule([&] { ++runs; }, 1s), RejectedTimeoutError);
  CHECK(w.timer().pendingTimeouts() == 2);
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.rejected == 1);
  CHECK(m.scheduled == 2);
  CHECK(m.pending == 2);
  w.step(100);
  CHECK(runs == 2);
}

TEST_CASE("a rejected newTimeout leaves the task intact") {
  ManualWheel w(wheelOptions(10ms, 32, 1));
  w.start();
  w.schedule([] {}, 1s);
  int runs = 0;
  TimerTask task([&runs] { ++runs; });
  CHECK_THROWS_AS(w.schedule(std::move(task), 1s), RejectedTimeoutError);
  REQUIRE(static_cast<bool>(task));
  task(Timeout{});
  CHECK(runs == 1);
}

TEST_CASE("cancel frees a max-pending slot at once") {
  ManualWheel w(wheelOptions(10ms, 32, 2));
  w.start();
  const Timeout a = w.schedule([] {}, 1s);
  w.schedule([] {}, 1s);
  CHECK_THROWS_AS(w.schedule([] {}, 1s), RejectedTimeoutError);
  CHECK(a.cancel());
  CHECK(w.timer().pendingTimeouts() == 1);
  CHECK_NOTHROW(w.schedule([] {}, 1s));  // no tick needed
  CHECK(w.timer().pendingTimeouts() == 2);
  CHECK(w.timer().metrics().rejected == 1);
}

TEST_CASE("expiry frees a max-pending slot") {
  ManualWheel w(wheelOptions(10ms, 32, 2));
  w.start();
  w.schedule([] {}, 10ms);
  w.schedule([] {}, 1s);
  CHECK_THROWS_AS(w.schedule([] {}, 1s), RejectedTimeoutError);
  CHECK(w.step() == 1);
  CHECK(w.timer().pendingTimeouts() == 1);
  CHECK_NOTHROW(w.schedule([] {}, 1s));
  CHECK(w.timer().pendingTimeouts() == 2);
}

TEST_CASE("a running task no longer counts toward max pending and may re-arm at the limit") {
  ManualWheel w(wheelOptions(10ms, 32, 1));
  w.start();
  int rearmed = 0;
  w.schedule(
      [&] {
        CHECK(w.timer().pendingTimeouts() == 0);
        w.schedule([] {}, 1s);
        ++rearmed;
        CHECK_THROWS_AS(w.schedule([] {}, 1s), RejectedTimeoutError);
      },
      10ms);
  w.step();
  CHECK(rearmed == 1);
  CHECK(w.timer().pendingTimeouts() == 1);
  CHECK(w.timer().metrics().rejected == 1);
}

TEST_CASE("pending count goes 3 to 0 after two cancels and one run") {
  ManualWheel w(WheelOptions{});
  w.start();
  const Timeout t1 = w.schedule([] {}, 100min);
  const Timeout t2 = w.schedule([] {}, 100min);
  int runs = 0;
  w.schedule([&] { ++runs; }, 90ms);
  CHECK(w.timer().pendingTimeouts() == 3);
  CHECK(t1.cancel());
  CHECK(w.timer().pendingTimeouts() == 2);
  CHECK(t2.cancel());
  CHECK(w.timer().pendingTimeouts() == 1);
  CHECK(w.step() == 1);
  CHECK(runs == 1);
  CHECK(w.timer().pendingTimeouts() == 0);
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.cancelled == 2);
  CHECK(m.fired == 1);
  CHECK(m.pending == 0);
}

TEST_CASE("cancel returns true exactly once and the task never runs") {
  ManualWheel w;
  w.start();
  int runs = 0;
  const Timeout t = w.schedule([&] { ++runs; }, 30ms);
  CHECK(t.cancel());
  CHECK_FALSE(t.cancel());
  const Timeout copy = t;
  CHECK_FALSE(copy.cancel());
  w.step(10);
  CHECK(runs == 0);
  CHECK(t.isCancelled());
  CHECK_FALSE(t.isExpired());
  CHECK(w.timer().metrics().cancelled == 1);
  CHECK(w.timer().metrics().fired == 0);
}

TEST_CASE("cancel after expiry returns false") {
  ManualWheel w;
  w.start();
  const Timeout t = w.schedule([] {}, 10ms);
  w.step();
  CHECK_FALSE(t.cancel());
  CHECK(t.isExpired());
  CHECK(w.timer().metrics().cancelled == 0);
}

TEST_CASE("cancelling 10 siblings while their tick is processed leaves pending at exactly 0") {
  ManualWheel w;
  w.start();
  std::vector<Timeout> siblings;
  int siblingRuns = 0;
  int cancelled = 0;
  w.schedule(
      [&] {  // scheduled first: runs first in the tick
        for (const Timeout& s : siblings) cancelled += s.cancel() ? 1 : 0;
        CHECK(w.timer().pendingTimeouts() == 0);
      },
      50ms);
  for (int i = 0; i < 10; ++i) siblings.push_back(w.schedule([&] { ++siblingRuns; }, 50ms));
  CHECK(w.timer().pendingTimeouts() == 11);
  CHECK(w.step(5) == 1);
  CHECK(cancelled == 10);
  CHECK(siblingRuns == 0);
  CHECK(w.timer().pendingTimeouts() == 0);
  w.step(5);
  CHECK(siblingRuns == 0);
  for (const Timeout& s : siblings) CHECK(s.isCancelled());
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.fired == 1);
  CHECK(m.cancelled == 10);
  CHECK(m.pending == 0);
}

TEST_CASE("a task cancelling itself gets false because it is already expired") {
  ManualWheel w;
  w.start();
  Timeout self;
  int result = -1;
  self = w.schedule(
      [&](const Timeout& t) {
        CHECK(t == self);
        CHECK(t.isExpired());
        result = t.cancel() ? 1 : 0;
      },
      20ms);
  w.step(2);
  CHECK(result == 0);
  CHECK(self.isExpired());
  CHECK(w.timer().metrics().cancelled == 0);
  CHECK(w.timer().pendingTimeouts() == 0);
}

TEST_CASE("a task cancels a sibling due in the same tick and it never runs") {
  ManualWheel w;
  w.start();
  Timeout sibling;
  int siblingRuns = 0;
  bool won = false;
  w.schedule([&] { won = sibling.cancel(); }, 20ms);
  sibling = w.schedule([&] { ++siblingRuns; }, 20ms);
  CHECK(w.step(2) == 1);
  CHECK(won);
  CHECK(siblingRuns == 0);
  CHECK(sibling.isCancelled());
  CHECK(w.timer().pendingTimeouts() == 0);
}

TEST_CASE("a task cannot cancel a sibling of the same tick that already ran") {
  ManualWheel w;
  w.start();
  int earlierRuns = 0;
  const Timeout earlier = w.schedule([&] { ++earlierRuns; }, 20ms);
  bool won = true;
  w.schedule([&] { won = earlier.cancel(); }, 20ms);
  CHECK(w.step(2) == 2);
  CHECK_FALSE(won);
  CHECK(earlierRuns == 1);
  CHECK(earlier.isExpired());
}

TEST_CASE("a task cancels a timeout due later and it never runs") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  int laterRuns = 0;
  const Timeout later = w.schedule([&] { ++laterRuns; }, 5s);  // several revolutions away
  bool won = false;
  w.schedule(
      [&] {
        won = later.cancel();
        CHECK(w.timer().pendingTimeouts() == 0);
      },
      10ms);
  w.step(600);
  CHECK(won);
  CHECK(laterRuns == 0);
  CHECK(later.isCancelled());
}

TEST_CASE("a cancelled timeout releases its captures within one tick") {
  ManualWheel w;
  w.start();
  auto payload = std::make_shared<int>(42);
  std::weak_ptr<int> watch = payload;
  const Timeout t = w.schedule([p = std::move(payload)] { (void)*p; }, 10min);
  CHECK_FALSE(watch.expired());
  CHECK(t.cancel());
  w.step();
  CHECK(watch.expired());  // long before the 10 min deadline
}

TEST_CASE("concurrent cancel racing the wheel: every timeout either runs or is cancelled") {
  ManualWheel w(wheelOptions(1ms, 64));
  w.start();
  constexpr int kCount = 20000;
  std::vector<std::atomic<int>> runs(kCount);
  std::vector<Timeout> handles;
  handles.reserve(kCount);
  for (int i = 0; i < kCount; ++i) {
    std::atomic<int>* r = &runs[static_cast<std::size_t>(i)];
    handles.push_back(w.schedule([r] { r->fetch_add(1); }, (1 + i % 200) * 1ms));
  }
  std::vector<std::atomic<int>> cancelWins(kCount);
  {
    std::vector<std::jthread> cancellers;
    for (int t = 0; t < 2; ++t) {
      cancellers.emplace_back([&, t] {
        // Both threads walk every other handle in opposite directions: each handle is
        // raced by one canceller and the wheel, half of them by both cancellers.
        for (int k = 0; k < kCount; ++k) {
          const int i = t == 0 ? k : kCount - 1 - k;
          if (i % 2 == 0 || t == 0) {
            if (handles[static_cast<std::size_t>(i)].cancel())
              cancelWins[static_cast<std::size_t>(i)].fetch_add(1);
          }
        }
      });
    }
    for (int i = 0; i < 250; ++i) w.step();
  }
  w.step(10);
  int bad = 0;
  int fired = 0;
  int cancelled = 0;
  for (int i = 0; i < kCount; ++i) {
    const int r = runs[static_cast<std::size_t>(i)].load();
    const int c = cancelWins[static_cast<std::size_t>(i)].load();
    bad += r + c == 1 ? 0 : 1;
    fired += r;
    cancelled += c;
  }
  CHECK(bad == 0);
  CHECK(w.timer().pendingTimeouts() == 0);
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.fired == static_cast<std::uint64_t>(fired));
  CHECK(m.cancelled == static_cast<std::uint64_t>(cancelled));
  CHECK(m.fired + m.cancelled == kCount);
}

// pendingTimeouts() is accepted - fired - cancelled - refused, each counted where it happens;
// 1500 timeouts in rounds span several entry batches of 256, so freed entries go back through
// the free lists (spilled and taken again) and are reused with new generations.
TEST_CASE("pending count stays exact over rounds of schedule, cancel and fire that reuse entries") {
  ManualWheel w(wheelOptions(1ms, 64));
  w.start();
  constexpr int kRound = 1500;
  std::uint64_t fired = 0;
  std::uint64_t cancelled = 0;
  int runs = 0;
  std::vector<Timeout> previous;
  for (int round = 0; round < 3; ++round) {
    std::vector<Timeout> handles;
    for (int i = 0; i < kRound; ++i) {
      handles.push_back(w.schedule([&runs] { ++runs; }, std::chrono::milliseconds(1 + i % 5)));
      CHECK(w.timer().pendingTimeouts() == static_cast<std::uint64_t>(i + 1));
    }
    for (int i = 0; i < kRound; i += 3) CHECK(handles[static_cast<std::size_t>(i)].cancel());
    cancelled += kRound / 3;
    CHECK(w.timer().pendingTimeouts() == kRound - kRound / 3);
    const std::size_t ran = w.step(5);
    CHECK(ran == kRound - kRound / 3);
    fired += ran;
    CHECK(w.timer().pendingTimeouts() == 0);
    for (int i = 0; i < kRound; ++i) {
      const Timeout& h = handles[static_cast<std::size_t>(i)];
      CHECK(h.state() == (i % 3 == 0 ? TimeoutState::Cancelled : TimeoutState::Expired));
    }
    // The previous round's handles see their own outcome, not the reused entries' timeouts.
    for (const Timeout& h : previous) CHECK_FALSE(h.isPending());
    previous = std::move(handles);
  }
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.fired == fired);
  CHECK(m.cancelled == cancelled);
  CHECK(m.scheduled == 3 * kRound);
  CHECK(runs == static_cast<int>(fired));
}

}  // TEST_SUITE("core")
