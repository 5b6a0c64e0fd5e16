// PeriodicTask: the channel-free chain on the manual clock: exact run times with a constant and a
// changing delay, the owner (typed body, owner gone, owner held during a run, empty owner), a
// throwing body (counted, reported, re-armed with the last delay), finish(), cancel() (pending
// drops at once, also from inside the body), wake(), a dropped task, a stopped timer.
#include "fake_channel.h"

#include <wheelbeat/tasks/periodic_task.h>

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace wbtest;
using wheelbeat::tasks::PeriodicTask;

namespace {

// What a periodic task's owner looks like: some state the body works on.
struct Counter {
  std::vector<ns> times;
};

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("periodic: a constant delay runs at start + k * delay, exactly") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  auto metrics = std::make_shared<TaskMetrics>();
  auto task = PeriodicTask::create(
      rig.timer(), std::weak_ptr<Counter>(owner),
      [&rig](Counter& c, ns) {
        c.times.push_back(rig.elapsed());
        return 500ms;
      },
      nullptr, metrics);
  task->start(500ms);
  CHECK(rig.pending() == 1);
  rig.runUntil(3s);
  CHECK(owner->times == std::vector<ns>{500ms, 1s, 1500ms, 2s, 2500ms, 3s});
  CHECK(task->runs() == 6);
  CHECK(metrics->snapshot().runs == 6);
  CHECK(rig.pending() == 1);
  CHECK_FALSE(task->isEnded());
}

TEST_CASE("periodic: the body's delay and time are the timer's") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  std::vector<ns> seen;
  auto task = std::make_shared<PeriodicTask>(rig.timer(), owner, [&](PeriodicTask& self, ns now) {
    seen.push_back(now - rig.origin());
    return self.runs() < 3 ? 200ms : 1s;  // runs() counts this run already
  });
  task->start(0ns);  // the next tick
  rig.runUntil(3s);
  CHECK(seen == std::vector<ns>{10ms, 210ms, 410ms, 1410ms, 2410ms});
}

TEST_CASE("periodic: an owner gone ends the chain before the body, reported once") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  auto listener = std::make_shared<RecordingListener>();
  int calls = 0;
  auto task = PeriodicTask::create(
      rig.timer(), std::weak_ptr<Counter>(owner),
      [&](Counter&, ns) {
        ++calls;
        return 1s;
      },
      listener);
  task->start(1s);
  rig.runUntil(2s);
  REQUIRE(calls == 2);
  owner.reset();
  rig.runUntil(10s);
  CHECK(calls == 2);
  CHECK(task->runs() == 2);
  CHECK(task->isEnded());
  CHECK_FALSE(task->isCancelled());
  CHECK(rig.pending() == 0);
  CHECK(listener->ended() == std::vector<std::string>{"owner gone"});
}

TEST_CASE("periodic: an empty owner counts as gone") {
  Rig rig;
  auto listener = std::make_shared<RecordingListener>();
  auto task = std::make_shared<PeriodicTask>(
      rig.timer(), std::weak_ptr<const void>(), [](PeriodicTask&, ns) { return 1s; }, listener);
  task->start(1s);
  rig.runUntil(3s);
  CHECK(task->runs() == 0);
  CHECK(listener->ended() == std::vector<std::string>{"owner gone"});
  CHECK_THROWS_AS(PeriodicTask(rig.timer(), std::weak_ptr<const void>(), PeriodicTask::Body()),
                  std::invalid_argument);
}

TEST_CASE("periodic: the run holds the owner, so the body may drop its last reference") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  std::weak_ptr<Counter> weak = owner;
  bool aliveAfterDrop = false;
  auto task = PeriodicTask::create(rig.timer(), weak, [&](Counter& c, ns) {
    owner.reset();  // the last reference outside the task's run
    aliveAfterDrop = !weak.expired();
    c.times.push_back(1s);  // still valid
    return 1s;
  });
  task->start(1s);
  rig.runUntil(1s);
  CHECK(aliveAfterDrop);
  CHECK(weak.expired());  // destroyed once the run returned
  rig.runUntil(3s);
  CHECK(task->runs() == 1);
  CHECK(task->isEnded());
}

TEST_CASE("periodic: a throwing body is counted, reported, and re-armed with the last delay") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  auto listener = std::make_shared<RecordingListener>();
  auto metrics = std::make_shared<TaskMetrics>();
  std::vector<ns> times;
  auto task = std::make_shared<PeriodicTask>(
      rig.timer(), owner,
      [&](PeriodicTask& self, ns) -> ns {
        times.push_back(rig.elapsed());
        if (self.runs() == 2 || self.runs() == 3) throw std::runtime_error("body failed");
        return self.runs() == 1 ? 300ms : 1s;
      },
      listener, metrics);
  task->start(1s);
  rig.runUntil(3s);
  // 1s (returns 300ms), 1.3s and 1.6s throw (re-armed with 300ms), 1.9s returns 1s, 2.9s.
  CHECK(times == std::vector<ns>{1s, 1300ms, 1600ms, 1900ms, 2900ms});
  CHECK(metrics->snapshot().taskErrors == 2);
  CHECK(metrics->snapshot().runs == 5);
  CHECK(listener->errors() == std::vector<std::string>{"body failed", "body failed"});
  CHECK(listener->ended().empty());
  CHECK(rig.pending() == 1);
}

TEST_CASE("periodic: finish from the body ends the chain after that run") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  auto listener = std::make_shared<RecordingListener>();
  auto task = std::make_shared<PeriodicTask>(
      rig.timer(), owner,
      [](PeriodicTask& self, ns) {
        if (self.runs() == 3) self.finish("done");
        return 1s;
      },
      listener);
  task->start(1s);
  rig.runUntil(10s);
  CHECK(task->runs() == 3);
  CHECK(task->isEnded());
  CHECK(rig.pending() == 0);
  CHECK(listener->ended() == std::vector<std::string>{"done"});
}

TEST_CASE("periodic: cancel drops the pending timeout at once, also from inside the body") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  auto listener = std::make_shared<RecordingListener>();
  auto outside = std::make_shared<PeriodicTask>(
      rig.timer(), owner, [](PeriodicTask&, ns) { return 1s; }, listener);
  auto inside = std::make_shared<PeriodicTask>(rig.timer(), owner, [](PeriodicTask& self, ns) {
    if (self.runs() == 2) CHECK(self.cancel());
    return 1s;
  });
  outside->start(1s);
  inside->start(1s);
  rig.runUntil(3s);
  CHECK(inside->runs() == 2);
  REQUIRE(rig.pending() == 1);
  CHECK(outside->cancel());
  CHECK(rig.pending() == 0);
  CHECK_FALSE(outside->cancel());
  rig.runUntil(10s);
  CHECK(outside->runs() == 3);
  CHECK(inside->runs() == 2);
  CHECK(listener->ended().empty());  // cancel() is not reported
}

TEST_CASE("periodic: wake moves the next run to the next tick") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  std::vector<ns> times;
  auto task = std::make_shared<PeriodicTask>(rig.timer(), owner, [&](PeriodicTask&, ns) {
    times.push_back(rig.elapsed());
    return 5s;
  });
  task->start(5s);
  rig.runUntil(2s);
  task->wake();
  rig.runUntil(13s);
  CHECK(times == std::vector<ns>{2010ms, 7010ms, 12010ms});
  CHECK(rig.pending() == 1);
}

TEST_CASE("periodic: a dropped task does not run again and is not kept alive by the wheel") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  int calls = 0;
  auto task = std::make_shared<PeriodicTask>(rig.timer(), owner, [&](PeriodicTask&, ns) {
    ++calls;
    return 1s;
  });
  std::weak_ptr<PeriodicTask> weak = task;
  task->start(1s);
  rig.runUntil(2s);
  task.reset();
  CHECK(weak.expired());
  rig.runUntil(5s);
  CHECK(calls == 2);
  CHECK(rig.pending() == 0);
}

TEST_CASE("periodic: start rules are the channel tasks' ones") {
  Rig rig;
  auto owner = std::make_shared<Counter>();
  auto task =
      std::make_shared<PeriodicTask>(rig.timer(), owner, [](PeriodicTask&, ns) { return 1s; });
  task->start(1s);
  CHECK_THROWS_AS(task->start(1s), std::logic_error);
  PeriodicTask onStack(rig.timer(), owner, [](PeriodicTask&, ns) { return 1s; });
  CHECK_THROWS_AS(onStack.start(1s), std::logic_error);
  auto late =
      std::make_shared<PeriodicTask>(rig.timer(), owner, [](PeriodicTask&, ns) { return 1s; });
  rig.timer().stop();
  CHECK_THROWS_AS(late->start(1s), TimerStoppedError);
}

}  // TEST_SUITE("tasks")
