// AbstractTimerTask: re-arming with the body's delay, safe-run of a throwing body, cancel()
// (pending drops at once, also from inside the body), an owner that drops the task, a closed or
// destroyed channel, a stopped timer, a refused re-arm, wake() (a pending run moved to the next
// tick; from inside a run, the re-arm uses the next tick).
#include "fake_channel.h"

#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace wbtest;

namespace {

ScriptedTask::Body every(ns delay) {
  return [delay](ScriptedTask&, Channel&, ns) { return delay; };
}

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("a task re-arms itself with the delay its body returns") {
  Rig rig;
  auto ch = rig.channel();
  std::vector<ns> times;
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, [&](ScriptedTask&, Channel&, ns) {
    times.push_back(rig.elapsed());
    return times.size() < 3 ? 500ms : 2s;
  });
  task->start(1s);
  CHECK(rig.pending() == 1);
  rig.runUntil(10s);
  // 1s, then 500ms twice... the third run returns 2s: 1s, 1.5s, 2s, 4s, 6s, 8s, 10s.
  CHECK(times == std::vector<ns>{1s, 1500ms, 2s, 4s, 6s, 8s, 10s});
  CHECK(task->runs() == 7);
  CHECK(rig.pending() == 1);
  CHECK_FALSE(task->isEnded());
}

TEST_CASE("with an executor a task re-arms through a new timeout, on the same schedule") {
  TimerHooks hooks;
  hooks.executor = [](std::function<void()> run) { run(); };  // inline, after the hand-over
  Rig rig(Rig::defaultWheel(), std::move(hooks));
  auto ch = rig.channel();
  std::vector<ns> times;
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, [&](ScriptedTask&, Channel&, ns) {
    times.push_back(rig.elapsed());
    return 2s;
  });
  task->start(1s);
  rig.runUntil(8s);
  CHECK(times == std::vector<ns>{1s, 3s, 5s, 7s});
  CHECK(rig.pending() == 1);
  const auto metrics = rig.timer().metrics();
  CHECK(metrics.scheduled == 5);
  CHECK(metrics.fired == 4);
  CHECK(metrics.cancelled == 0);
}

TEST_CASE("wake moves the pending run to the next tick, exactly once") {
  Rig rig;
  auto ch = rig.channel();
  std::vector<ns> times;
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, [&](ScriptedTask&, Channel&, ns) {
    times.push_back(rig.elapsed());
    return 5s;
  });
  task->wake();  // before start(): nothing to move, nothing armed
  CHECK(rig.pending() == 0);
  task->start(5s);
  rig.runUntil(1s);
  task->wake();
  task->wake();  // the moved run is pending again: moved once more, still one run
  CHECK(rig.pending() == 1);
  rig.runUntil(12s);
  // 1.01s (woken), then its own 5s delays: 6.01s, 11.01s; the 5s run was dropped.
  CHECK(times == std::vector<ns>{1010ms, 6010ms, 11010ms});
  CHECK(task->cancel());
  task->wake();  // ended: no effect
  CHECK(rig.pending() == 0);
}

TEST_CASE("wake from inside a run re-arms for the next tick instead of the body's delay") {
  Rig rig;
  auto ch = rig.channel();
  std::vector<ns> times;
  auto task =
      std::make_shared<ScriptedTask>(rig.timer(), ch, [&](ScriptedTask& self, Channel&, ns) {
        times.push_back(rig.elapsed());
        if (times.size() == 1) self.wake();  // e.g. the channel's close event, seen by the body
        return 5s;
      });
  task->start(1s);
  rig.runUntil(7s);
  CHECK(times == std::vector<ns>{1s, 1010ms, 6010ms});
  CHECK(rig.pending() == 1);
}

TEST_CASE("the body gets the timer's time and the channel") {
  Rig rig;
  auto ch = rig.channel();
  ns seen{0};
  Channel* seenChannel = nullptr;
  auto task =
      std::make_shared<ScriptedTask>(rig.timer(), ch, [&](ScriptedTask&, Channel& c, ns now) {
        seen = now;
        seenChannel = &c;
        return 1s;
      });
  task->start(250ms);
  rig.runUntil(250ms);
  CHECK(seen == rig.timer().now());
  CHECK(seenChannel == ch.get());
}

TEST_CASE("a throwing body keeps the chain alive and is counted and reported") {
  Rig rig;
  auto ch = rig.channel();
  auto listener = std::make_shared<RecordingListener>();
  auto metrics = std::make_shared<TaskMetrics>();
  int calls = 0;
  auto task = std::make_shared<ScriptedTask>(
      rig.timer(), ch,
      [&](ScriptedTask&, Channel&, ns) -> ns {
        ++calls;
        if (calls == 2 || calls == 3) throw std::runtime_error("body failed");
        return 1s;
      },
      listener, metrics);
  task->start(1s);
  rig.runUntil(10s);
  CHECK(task->runs() == 10);  // every second: the throwing runs re-armed with the last delay
  CHECK(rig.pending() == 1);
  CHECK(metrics->snapshot().taskErrors == 2);
  CHECK(metrics->snapshot().runs == 10);
  CHECK(listener->errors() == std::vector<std::string>{"body failed", "body failed"});
  CHECK(listener->ended().empty());
}

TEST_CASE("a body throwing from its first run re-arms with the first delay") {
  Rig rig;
  auto ch = rig.channel();
  auto metrics = std::make_shared<TaskMetrics>();
  std::vector<ns> times;
  auto task = std::make_shared<ScriptedTask>(
      rig.timer(), ch,
      [&](ScriptedTask&, Channel&, ns) -> ns {
        times.push_back(rig.elapsed());
        throw 42;  // not even a std::exception
      },
      nullptr, metrics);
  task->start(2s);
  rig.runUntil(7s);
  CHECK(times == std::vector<ns>{2s, 4s, 6s});
  CHECK(metrics->snapshot().taskErrors == 3);
}

TEST_CASE("a listener that throws is dropped and the chain goes on") {
  Rig rig;
  auto ch = rig.channel();
  auto listener = std::make_shared<RecordingListener>();
  listener->throwing = true;
  auto metrics = std::make_shared<TaskMetrics>();
  auto task = std::make_shared<ScriptedTask>(
      rig.timer(), ch, [](ScriptedTask&, Channel&, ns) -> ns { throw std::runtime_error("x"); },
      listener, metrics);
  task->start(1s);
  rig.runUntil(5s);
  CHECK(task->runs() == 5);
  CHECK(listener->errors().size() == 5);
  CHECK(metrics->snapshot().taskErrors == 5);  // the listener's own exceptions are not counted
  CHECK(rig.pending() == 1);
}

TEST_CASE("cancel drops the pending timeout at once and the task never runs again") {
  Rig rig;
  auto ch = rig.channel();
  auto listener = std::make_shared<RecordingListener>();
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s), listener);
  task->start(1s);
  rig.runUntil(3s);
  REQUIRE(task->runs() == 3);
  REQUIRE(rig.pending() == 1);
  CHECK(task->cancel());
  CHECK(rig.pending() == 0);
  CHECK_FALSE(task->cancel());
  CHECK(task->isCancelled());
  CHECK(task->isEnded());
  rig.runUntil(20s);
  CHECK(task->runs() == 3);
  CHECK(rig.pending() == 0);
  CHECK(listener->ended().empty());  // cancel() is not reported: its caller knows
}

TEST_CASE("cancel from inside the task's own body") {
  Rig rig;
  auto ch = rig.channel();
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, [](ScriptedTask& self, Channel&, ns) {
    if (self.runs() == 3) CHECK(self.cancel());
    return 1s;
  });
  task->start(1s);
  rig.runUntil(3s);
  CHECK(task->runs() == 3);
  CHECK(rig.pending() == 0);
  rig.runUntil(10s);
  CHECK(task->runs() == 3);
  CHECK_FALSE(task->cancel());
}

TEST_CASE("cancel a sibling due in the same tick from inside a body") {
  Rig rig;
  auto ch = rig.channel();
  std::shared_ptr<ScriptedTask> second;
  auto first =
      std::make_shared<ScriptedTask>(rig.timer(), ch, [&](ScriptedTask& self, Channel&, ns) {
        if (self.runs() == 1) CHECK(second->cancel());
        return 1s;
      });
  second = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s));
  first->start(1s);
  second->start(1s);
  REQUIRE(rig.pending() == 2);
  rig.runUntil(5s);
  CHECK(first->runs() == 5);
  CHECK(second->runs() == 0);
  CHECK(rig.pending() == 1);
}

TEST_CASE("a task cancelled before start is not armed") {
  Rig rig;
  auto ch = rig.channel();
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s));
  CHECK(task->cancel());
  task->start(1s);
  CHECK(rig.pending() == 0);
  rig.runUntil(3s);
  CHECK(task->runs() == 0);
}

TEST_CASE("a task whose owner dropped it does not run again") {
  Rig rig;
  auto ch = rig.channel();
  auto metrics = std::make_shared<TaskMetrics>();
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s), nullptr, metrics);
  std::weak_ptr<ScriptedTask> weak = task;
  task->start(1s);
  rig.runUntil(2s);
  REQUIRE(metrics->snapshot().runs == 2);
  task.reset();
  CHECK(weak.expired());      // the wheel does not keep it alive
  CHECK(rig.pending() == 1);  // its timeout is still there ...
  rig.runUntil(3s);
  CHECK(rig.pending() == 0);  // ... fires, finds nothing and does not re-arm
  rig.runUntil(10s);
  CHECK(metrics->snapshot().runs == 2);
}

TEST_CASE("a closed channel ends the task and the listener is told once") {
  Rig rig;
  auto ch = rig.channel();
  auto listener = std::make_shared<RecordingListener>();
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s), listener);
  task->start(1s);
  rig.runUntil(2s);
  ch->setClosed();
  rig.runUntil(10s);
  CHECK(task->runs() == 2);
  CHECK(task->isEnded());
  CHECK_FALSE(task->isCancelled());
  CHECK(rig.pending() == 0);
  CHECK(listener->ended() == std::vector<std::string>{"channel closed"});
}

TEST_CASE("a destroyed channel ends the task") {
  Rig rig;
  auto ch = rig.channel();
  auto listener = std::make_shared<RecordingListener>();
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s), listener);
  task->start(1s);
  rig.runUntil(2s);
  ch.reset();
  rig.runUntil(10s);
  CHECK(task->runs() == 2);
  CHECK(task->isEnded());
  CHECK(rig.pending() == 0);
  CHECK(listener->ended() == std::vector<std::string>{"channel gone"});
}

TEST_CASE("finish from the body ends the chain after that run") {
  Rig rig;
  auto ch = rig.channel();
  auto listener = std::make_shared<RecordingListener>();
  auto task = std::make_shared<ScriptedTask>(
      rig.timer(), ch,
      [](ScriptedTask& self, Channel&, ns) {
        if (self.runs() == 2) self.finish("done");
        return 1s;
      },
      listener);
  task->start(1s);
  rig.runUntil(10s);
  CHECK(task->runs() == 2);
  CHECK(task->isEnded());
  CHECK(rig.pending() == 0);
  CHECK(listener->ended() == std::vector<std::string>{"done"});
}

TEST_CASE("start on a stopped timer throws TimerStoppedError") {
  Rig rig;
  auto ch = rig.channel();
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s));
  rig.timer().stop();
  CHECK_THROWS_AS(task->start(1s), TimerStoppedError);
  CHECK(task->runs() == 0);
}

TEST_CASE("start twice or without a shared_ptr owner is a logic error") {
  Rig rig;
  auto ch = rig.channel();
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s));
  task->start(1s);
  CHECK_THROWS_AS(task->start(1s), std::logic_error);
  CHECK(rig.pending() == 1);
  ScriptedTask onStack(rig.timer(), ch, every(1s));
  CHECK_THROWS_AS(onStack.start(1s), std::logic_error);
  CHECK(rig.pending() == 1);
}

TEST_CASE("a task run after the timer stopped ends quietly") {
  // An executor that only collects the closures lets the test run one after stop().
  std::vector<std::function<void()>> handedOver;
  TimerHooks hooks;
  hooks.executor = [&](std::function<void()> run) { handedOver.push_back(std::move(run)); };
  Rig rig(Rig::defaultWheel(), std::move(hooks));
  auto ch = rig.channel();
  auto listener = std::make_shared<RecordingListener>();
  auto task = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s), listener);
  task->start(1s);
  rig.runUntil(1s);
  REQUIRE(handedOver.size() == 1);
  rig.timer().stop();
  handedOver.front()();
  CHECK(task->runs() == 1);
  CHECK(task->isEnded());
  CHECK(listener->ended() == std::vector<std::string>{"timer stopped"});
  CHECK(listener->errors().empty());
}

TEST_CASE("a re-arm refused by maxPendingTimeouts ends the task as an error") {
  auto options = Rig::defaultWheel();
  options.maxPendingTimeouts = 1;
  Rig rig(options);
  auto ch = rig.channel();
  auto listener = std::make_shared<RecordingListener>();
  auto metrics = std::make_shared<TaskMetrics>();
  auto task = std::make_shared<ScriptedTask>(
      rig.timer(), ch,
      [&](ScriptedTask&, Channel&, ns) {
        rig.timer().newTimeout([] {}, 1h);  // takes the only pending place
        return 1s;
      },
      listener, metrics);
  task->start(1s);
  rig.runUntil(5s);
  CHECK(task->runs() == 1);
  CHECK(task->isEnded());
  CHECK(metrics->snapshot().taskErrors == 1);
  CHECK(listener->errors().size() == 1);
  CHECK(listener->ended() == std::vector<std::string>{"re-arm rejected"});
}

TEST_CASE("tasks given one TaskMetrics share its counters") {
  Rig rig;
  auto ch = rig.channel();
  auto metrics = std::make_shared<TaskMetrics>();
  auto a = std::make_shared<ScriptedTask>(rig.timer(), ch, every(1s), nullptr, metrics);
  auto b = std::make_shared<ScriptedTask>(rig.timer(), ch, every(500ms), nullptr, metrics);
  a->start(1s);
  b->start(500ms);
  rig.runUntil(5s);
  CHECK(a->runs() == 5);
  CHECK(b->runs() == 10);
  TaskMetricsSnapshot expected;
  expected.runs = 15;
  CHECK(metrics->snapshot() == expected);
  CHECK(metrics->snapshot().toString() ==
        "heartbeatsSent=0 reconnectsStarted=0 closes=0 giveUps=0 taskErrors=0 runs=15 "
        "idleDeferred=0");
}

}  // TEST_SUITE("tasks")
