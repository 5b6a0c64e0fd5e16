// Timeout handles: states, the empty handle, timer() and task(), safety after the slot was
// reused, and cancel() racing from several threads.
#include "support.h"

#include <doctest/doctest.h>

#include <atomic>
#include <barrier>
#include <thread>
#include <type_traits>

using namespace wbtest;

static_assert(sizeof(Timeout) == 16, "the header promises a 16-byte handle");
static_assert(std::is_trivially_copyable_v<Timeout>);

namespace {

bool finishedOrForgotten(TimeoutState s, TimeoutState finished) {
  return s == finished || s == TimeoutState::Forgotten;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("a default Timeout refers to nothing") {
  const Timeout empty;
  CHECK_FALSE(static_cast<bool>(empty));
  CHECK(empty.timer() == nullptr);
  CHECK_FALSE(empty.cancel());
  CHECK(empty.state() == TimeoutState::Forgotten);
  CHECK_FALSE(empty.isPending());
  CHECK_FALSE(empty.isExpired());
  CHECK_FALSE(empty.isCancelled());
  CHECK(empty.task() == nullptr);
  CHECK(empty == Timeout{});
}

TEST_CASE("a handle goes from Pending to Expired") {
  ManualWheel w;
  w.start();
  const Timeout t = w.schedule([] {}, 20ms);
  CHECK(static_cast<bool>(t));
  CHECK(t.state() == TimeoutState::Pending);
  CHECK(t.isPending());
  w.step();
  CHECK(t.isPending());
  w.step();
  CHECK(t.state() == TimeoutState::Expired);
  CHECK(t.isExpired());
  CHECK_FALSE(t.isPending());
  CHECK_FALSE(t.isCancelled());
}

TEST_CASE("a handle goes from Pending to Cancelled") {
  ManualWheel w;
  w.start();
  const Timeout t = w.schedule([] {}, 20ms);
  CHECK(t.cancel());
  CHECK(t.state() == TimeoutState::Cancelled);
  w.step(5);
  CHECK(t.state() == TimeoutState::Cancelled);
  CHECK(t.isCancelled());
  CHECK_FALSE(t.isExpired());
}

TEST_CASE("copies of a handle are equal and distinct timeouts are not") {
  ManualWheel w;
  w.start();
  const Timeout a = w.schedule([] {}, 1s);
  const Timeout b = w.schedule([] {}, 1s);
  const Timeout copy = a;
  CHECK(copy == a);
  CHECK_FALSE(a == b);
  CHECK(copy.cancel());
  CHECK(a.isCancelled());
  CHECK(b.isPending());
}

TEST_CASE("timer() returns the timer that created the handle") {
  ManualWheel w1;
  ManualWheel w2;
  w1.start();
  w2.start();
  const Timeout a = w1.schedule([] {}, 1s);
  const Timeout b = w2.schedule([] {}, 1s);
  CHECK(a.timer() == &w1.timer());
  CHECK(b.timer() == &w2.timer());
  w1.step(200);
  CHECK(a.timer() == &w1.timer());  // still, after it expired
}

TEST_CASE("inside its task a timeout is Expired and task() is non-null") {
  ManualWheel w;
  w.start();
  Timeout self;
  Timeout other;
  int checks = 0;
  self = w.schedule(
      [&](const Timeout& t) {
        CHECK(t == self);
        CHECK(t.timer() == &w.timer());
        CHECK(t.state() == TimeoutState::Expired);
        CHECK(t.task() != nullptr);      // its own task, while it runs
        CHECK(other.task() != nullptr);  // a pending timeout's task, on the wheel thread
        CHECK(other.isPending());
        ++checks;
      },
      10ms);
  other = w.schedule([] {}, 1s);
  w.step();
  CHECK(checks == 1);
}

TEST_CASE("task() is null once a timeout ran or was cancelled and released") {
  ManualWheel w;
  w.start();
  const Timeout ran = w.schedule([] {}, 10ms);
  const Timeout cancelled = w.schedule([] {}, 1s);
  int checks = 0;
  w.schedule(
      [&] {
        CHECK(ran.task() == nullptr);
        CHECK(cancelled.task() == nullptr);  // released on the wheel thread within one tick
        ++checks;
      },
      30ms);
  w.step();
  CHECK(cancelled.cancel());
  w.step(2);
  CHECK(checks == 1);
}

TEST_CASE("an expired handle stays exact for 29 reuses and never reaches a later timeout") {
  ManualWheel w;
  w.start();
  const Timeout old = w.schedule([] {}, 10ms);
  w.step();
  REQUIRE(old.isExpired());
  // Fewer than 30 later timeouts: whichever slot they reuse, the outcome is remembered.
  for (int i = 0; i < 29; ++i) {
    w.schedule([] {}, 10ms);
    w.step();
  }
  CHECK(old.state() == TimeoutState::Expired);
  // Many more, left pending: the old handle must not see or cancel any of them.
  int runs = 0;
  for (int i = 0; i < 5000; ++i) w.schedule([&] { ++runs; }, 50ms);
  CHECK(finishedOrForgotten(old.state(), TimeoutState::Expired));
  CHECK_FALSE(old.isPending());
  CHECK_FALSE(old.isCancelled());
  CHECK_FALSE(old.cancel());
  CHECK(old.task() == nullptr);
  CHECK(w.timer().pendingTimeouts() == 5000);
  w.step(5);
  CHECK(runs == 5000);
  CHECK(w.timer().metrics().cancelled == 0);
  CHECK(finishedOrForgotten(old.state(), TimeoutState::Expired));
}

TEST_CASE("a cancelled handle stays exact for 29 reuses and never reaches a later timeout") {
  ManualWheel w;
  w.start();
  const Timeout old = w.schedule([] {}, 1s);
  REQUIRE(old.cancel());
  w.step();  // releases the entry
  for (int i = 0; i < 29; ++i) {
    w.schedule([] {}, 10ms);
    w.step();
  }
  CHECK(old.state() == TimeoutState::Cancelled);
  int runs = 0;
  for (int i = 0; i < 5000; ++i) w.schedule([&] { ++runs; }, 50ms);
  CHECK(finishedOrForgotten(old.state(), TimeoutState::Cancelled));
  CHECK_FALSE(old.isPending());
  CHECK_FALSE(old.isExpired());
  CHECK_FALSE(old.cancel());
  CHECK(w.timer().pendingTimeouts() == 5000);
  w.step(5);
  CHECK(runs == 5000);
  CHECK(w.timer().metrics().cancelled == 1);
}

TEST_CASE("old handles of many recycled slots never report Pending") {
  ManualWheel w(wheelOptions(1ms, 64));
  w.start();
  std::vector<Timeout> old;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 100; ++i) {
      const Timeout t = w.schedule([] {}, (1 + i % 3) * 1ms);
      if (i % 4 == 0) CHECK(t.cancel());
      old.push_back(t);
    }
    w.step(3);
    int pendingOld = 0;
    int wonOld = 0;
    for (const Timeout& t : old) {
      pendingOld += t.isPending() ? 1 : 0;
      wonOld += t.cancel() ? 1 : 0;
    }
    CHECK(pendingOld == 0);
    CHECK(wonOld == 0);
  }
  CHECK(w.timer().metrics().cancelled == 50 * 25);
  CHECK(w.timer().metrics().fired == 50 * 75);
}

TEST_CASE("cancel returns true exactly once when 4 threads race on the same handle") {
  ManualWheel w(wheelOptions(1ms, 64));
  w.start();
  constexpr int kThreads = 4;
  constexpr int kRounds = 500;
  std::vector<Timeout> handles;
  for (int i = 0; i < kRounds; ++i) handles.push_back(w.schedule([] {}, 1h));
  std::vector<std::atomic<int>> wins(kRounds);
  std::barrier sync(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int r = 0; r < kRounds; ++r) {
          sync.arrive_and_wait();  // all four call cancel() on handle r together
          if (handles[static_cast<std::size_t>(r)].cancel())
            wins[static_cast<std::size_t>(r)].fetch_add(1);
        }
      });
    }
  }
  int exactlyOnce = 0;
  for (const auto& win : wins) exactlyOnce += win.load() == 1 ? 1 : 0;
  CHECK(exactlyOnce == kRounds);
  CHECK(w.timer().pendingTimeouts() == 0);
  w.step();
  CHECK(w.timer().metrics().cancelled == kRounds);
}

}  // TEST_SUITE("core")
