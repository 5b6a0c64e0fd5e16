// stop(): what it returns, what is refused afterwards, stop from inside a task, and what the
// destructor does with pending tasks.
#include "support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>

using namespace wbtest;

TEST_SUITE("core") {

TEST_CASE("stop returns an empty list after every timeout ran") {
  ManualWheel w;
  w.start();
  int runs = 0;
  for (int i = 0; i < 3; ++i) w.schedule([&] { ++runs; }, 1ms);
  w.step();
  REQUIRE(runs == 3);
  CHECK(w.timer().stop().empty());
  CHECK(w.timer().isStopped());
}

TEST_CASE("stop returns every pending timeout and each is cancelled") {
  ManualWheel w;
  w.start();
  int runs = 0;
  std::vector<Timeout> pending;
  for (int i = 0; i < 5; ++i) pending.push_back(w.schedule([&] { ++runs; }, 5s));
  const Timeout ran = w.schedule([&] { ++runs; }, 10ms);
  const Timeout cancelled = w.schedule([&] { ++runs; }, 5s);
  w.step();
  CHECK(cancelled.cancel());
  std::vector<Timeout> returned = w.timer().stop();
  CHECK(returned.size() == 5);
  for (const Timeout& t : returned) {
    CHECK(t.isCancelled());
    CHECK(t.timer() == &w.timer());
    CHECK(std::find(pending.begin(), pending.end(), t) != pending.end());
    CHECK_FALSE(t.cancel());
  }
  CHECK(std::find(returned.begin(), returned.end(), ran) == returned.end());
  CHECK(std::find(returned.begin(), returned.end(), cancelled) == returned.end());
  CHECK(runs == 1);
  CHECK(w.timer().pendingTimeouts() == 0);
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.cancelled == 6);
  CHECK(m.fired == 1);
  CHECK(m.pending == 0);
}

TEST_CASE("stop hands back timeouts not yet picked up by the wheel") {
  ManualWheel w;
  w.start();
  std::vector<Timeout> scheduled;
  for (int i = 0; i < 4; ++i) scheduled.push_back(w.schedule([] {}, i * 1ms));  // no advance()
  const std::vector<Timeout> returned = w.timer().stop();
  CHECK(returned.size() == 4);
  for (const Timeout& t : scheduled) CHECK(t.isCancelled());
}

TEST_CASE("the tasks of the timeouts stop returned are kept and can be run") {
  ManualWheel w;
  w.start();
  int runs = 0;
  auto payload = std::make_shared<int>(7);
  std::weak_ptr<int> watch = payload;
  w.schedule([&runs, p = std::move(payload)](const Timeout&) { runs += *p; }, 1min);
  std::vector<Timeout> returned = w.timer().stop();
  REQUIRE(returned.size() == 1);
  TimerTask* task = returned[0].task();
  REQUIRE(task != nullptr);
  REQUIRE(static_cast<bool>(*task));
  (*task)(returned[0]);
  CHECK(runs == 7);
  CHECK_FALSE(watch.expired());  // kept until the timer is destroyed
}

TEST_CASE("a second stop returns an empty list") {
  ManualWheel w;
  w.start();
  w.schedule([] {}, 1s);
  CHECK(w.timer().stop().size() == 1);
  CHECK(w.timer().stop().empty());
  CHECK(w.timer().isStopped());
}

TEST_CASE("stop on a timer that never started returns an empty list") {
  ManualWheel w;
  CHECK_FALSE(w.timer().isStopped());
  CHECK(w.timer().stop().empty());
  CHECK(w.timer().isStopped());
}

TEST_CASE("newTimeout after stop throws TimerStoppedError and leaves the task intact") {
  ManualWheel w;
  w.start();
  CHECK(w.timer().stop().empty());
  int runs = 0;
  TimerTask task([&runs] { ++runs; });
  CHECK_THROWS_AS(w.schedule(std::move(task), 1s), TimerStoppedError);
  CHECK(static_cast<bool>(task));
  CHECK(w.timer().pendingTimeouts() == 0);
  CHECK(w.timer().metrics().scheduled == 0);
  CHECK(w.timer().metrics().rejected == 0);
  CHECK(runs == 0);
}

TEST_CASE("start and advance after stop throw TimerStoppedError") {
  ManualWheel w;
  w.start();
  (void)w.timer().stop();
  CHECK_THROWS_AS(w.timer().start(), TimerStoppedError);
  CHECK_THROWS_AS(w.timer().advance(), TimerStoppedError);
}

TEST_CASE("TimerStoppedError is a logic_error and RejectedTimeoutError a runtime_error") {
  static_assert(std::is_base_of_v<std::logic_error, TimerStoppedError>);
  static_assert(std::is_base_of_v<std::runtime_error, RejectedTimeoutError>);
  CHECK(std::string(TimerStoppedError().what()).size() > 0);
}

TEST_CASE("stop from inside a task throws logic_error and the timer keeps working") {
  ManualWheel w;
  w.start();
  int threw = 0;
  int later = 0;
  w.schedule(
      [&] {
        try {
          (void)w.timer().stop();
        } catch (const std::logic_error&) {
          ++threw;
        }
        CHECK_FALSE(w.timer().isStopped());
      },
      10ms);
  w.schedule([&] { ++later; }, 20ms);
  const Timeout pending = w.schedule([] {}, 1min);
  w.step(2);
  CHECK(threw == 1);
  CHECK(later == 1);
  CHECK_FALSE(w.timer().isStopped());
  CHECK(w.timer().metrics().taskErrors == 0);  // the task caught it
  const std::vector<Timeout> returned = w.timer().stop();
  REQUIRE(returned.size() == 1);
  CHECK(returned[0] == pending);
  CHECK(w.timer().isStopped());
}

TEST_CASE("a stop from inside a task that escapes the task is survived") {
  ManualWheel w;
  w.start();
  int later = 0;
  w.schedule([&] { (void)w.timer().stop(); }, 10ms);  // throws out of the task
  w.schedule([&] { ++later; }, 10ms);
  {
    LogCapture log;  // keep the expected error out of the test output
    CHECK(w.step() == 2);
  }
  CHECK(later == 1);
  CHECK(w.timer().metrics().taskErrors == 1);
  CHECK_FALSE(w.timer().isStopped());
}

TEST_CASE("start from inside a task is a no-op") {
  // start() is documented as callable from any thread and a no-op once started. Run on a
  // detached thread with a deadline so that a deadlock fails the test instead of hanging it.
  struct State {
    ManualWheel w;
    int started = 0;
    int threw = 0;
    std::size_t ran = 0;
  };
  auto state = std::make_shared<State>();
  const bool finished = finishesWithin(
      [state] {
        State& s = *state;
        s.w.start();
        s.w.schedule(
            [&s] {
              try {
                s.w.timer().start();
                ++s.started;
              } catch (...) {
                ++s.threw;
              }
            },
            10ms);
        s.ran = s.w.step();
      },
      5s);
  REQUIRE_MESSAGE(finished, "advance() did not return: start() inside a task deadlocked");
  CHECK(state->ran == 1);
  CHECK(state->started == 1);
  CHECK(state->threw == 0);
}

TEST_CASE("isStopped is false until stop and true after") {
  ManualWheel w;
  CHECK_FALSE(w.timer().isStopped());
  w.start();
  w.schedule([] {}, 1s);
  CHECK_FALSE(w.timer().isStopped());
  (void)w.timer().stop();
  CHECK(w.timer().isStopped());
}

TEST_CASE("the destructor destroys pending tasks without running them") {
  auto payload = std::make_shared<int>(1);
  std::weak_ptr<int> watch = payload;
  int runs = 0;
  {
    ManualWheel w;
    w.start();
    w.schedule([&runs, p = std::move(payload)] { runs += *p; }, 1s);
    w.schedule([&runs] { ++runs; }, 0ns);
  }
  CHECK(runs == 0);
  CHECK(watch.expired());
}

TEST_CASE("the tasks stop returned are destroyed with the timer") {
  auto payload = std::make_shared<int>(1);
  std::weak_ptr<int> watch = payload;
  std::vector<Timeout> returned;
  {
    ManualWheel w;
    w.start();
    w.schedule([p = std::move(payload)] { (void)*p; }, 1s);
    returned = w.timer().stop();
    CHECK(returned.size() == 1);
    CHECK_FALSE(watch.expired());
  }
  CHECK(watch.expired());
  // The handles outlive the timer: copying and destroying them is fine.
  std::vector<Timeout> copies = returned;
  CHECK(copies.size() == 1);
}

}  // TEST_SUITE("core")
