// Safe-run: exceptions escaping tasks (std and non-std), the onTaskError hook, the Error log,
// and the custom executor (TimerHooks::executor), including one that throws.
#include "support.h"

#include <doctest/doctest.h>

#include <deque>
#include <functional>
#include <stdexcept>
#include <thread>

using namespace wbtest;

namespace {

struct ErrorLog {
  std::vector<std::exception_ptr> errors;
  std::vector<Timeout> timeouts;
  std::vector<std::thread::id> threads;
};

TimerHooks hooksRecording(ErrorLog& log) {
  TimerHooks hooks;
  hooks.onTaskError = [&log](std::exception_ptr error, const Timeout& timeout) {
    log.errors.push_back(error);
    log.timeouts.push_back(timeout);
    log.threads.push_back(std::this_thread::get_id());
  };
  return hooks;
}

std::string messageOf(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (int value) {
    return "int " + std::to_string(value);
  } catch (...) {
    return "unknown";
  }
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("a task throwing std::exception does not kill the timer") {
  ErrorLog errors;
  ManualWheel w(wheelOptions(10ms, 32), hooksRecording(errors));
  w.start();
  LogCapture log;
  const Timeout bad = w.schedule([] { throw std::runtime_error("boom"); }, 10ms);
  int next = 0;
  w.schedule([&] { ++next; }, 10ms);   // same tick, after the throwing one
  w.schedule([&] { ++next; }, 100ms);  // a later tick
  CHECK(w.step() == 2);
  CHECK(next == 1);
  CHECK(w.timer().metrics().taskErrors == 1);
  REQUIRE(errors.errors.size() == 1);
  CHECK(messageOf(errors.errors[0]) == "boom");
  CHECK(errors.timeouts[0] == bad);
  CHECK(errors.threads[0] == std::this_thread::get_id());  // the thread that ran the task
  CHECK(log.count(LogLevel::Error) == 1);                  // logged once
  CHECK(bad.isExpired());
  w.step(9);
  CHECK(next == 2);
  CHECK(w.timer().metrics().fired == 3);
  CHECK(w.timer().pendingTimeouts() == 0);
}

TEST_CASE("a task throwing a non-std exception does not kill the timer") {
  ErrorLog errors;
  ManualWheel w(wheelOptions(10ms, 32), hooksRecording(errors));
  w.start();
  LogCapture log;
  const Timeout bad = w.schedule([] { throw 42; }, 10ms);
  int next = 0;
  w.schedule([&] { ++next; }, 20ms);
  w.step(2);
  CHECK(next == 1);
  CHECK(w.timer().metrics().taskErrors == 1);
  REQUIRE(errors.errors.size() == 1);
  CHECK(messageOf(errors.errors[0]) == "int 42");
  CHECK(errors.timeouts[0] == bad);
  CHECK(log.count(LogLevel::Error) == 1);
}

TEST_CASE("every throwing task is counted and reported") {
  ErrorLog errors;
  ManualWheel w(wheelOptions(10ms, 32), hooksRecording(errors));
  w.start();
  LogCapture log;
  int fine = 0;
  for (int i = 1; i <= 20; ++i) {
    w.schedule(
        [i] {
          if (i % 2 == 0) throw std::logic_error("even");
        },
        i * 10ms);
    w.schedule([&] { ++fine; }, i * 10ms);
  }
  CHECK(w.step(20) == 40);
  CHECK(fine == 20);
  CHECK(w.timer().metrics().taskErrors == 10);
  CHECK(errors.errors.size() == 10);
  CHECK(log.count(LogLevel::Error) == 10);
}

TEST_CASE("a throwing task without an error hook is logged and counted") {
  ManualWheel w;
  w.start();
  LogCapture log;
  w.schedule([] { throw std::runtime_error("no hook"); }, 10ms);
  int next = 0;
  w.schedule([&] { ++next; }, 10ms);
  CHECK(w.step() == 2);
  CHECK(next == 1);
  CHECK(w.timer().metrics().taskErrors == 1);
  const auto lines = log.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].level == LogLevel::Error);
  CHECK_MESSAGE(contains(lines[0].text, "no hook"), lines[0].text);
}

TEST_CASE("an onTaskError hook that throws is dropped and the wheel goes on") {
  TimerHooks hooks;
  int hookCalls = 0;
  hooks.onTaskError = [&](std::exception_ptr, const Timeout&) {
    ++hookCalls;
    throw std::runtime_error("hook failed");
  };
  ManualWheel w(wheelOptions(10ms, 32), hooks);
  w.start();
  LogCapture log;
  w.schedule([] { throw std::runtime_error("task failed"); }, 10ms);
  int next = 0;
  w.schedule([&] { ++next; }, 10ms);
  w.schedule([&] { ++next; }, 20ms);
  CHECK(w.step(2) == 3);
  CHECK(hookCalls == 1);
  CHECK(next == 2);
  CHECK(w.timer().metrics().taskErrors == 1);
  CHECK(log.count(LogLevel::Error) >= 1);
}

TEST_CASE("a custom executor receives every task and the tasks run when it runs them") {
  std::deque<std::function<void()>> queue;
  int dispatched = 0;
  TimerHooks hooks;
  hooks.executor = [&](std::function<void()> closure) {
    ++dispatched;
    queue.push_back(std::move(closure));
  };
  ManualWheel w(wheelOptions(10ms, 32), hooks);
  w.start();
  int runs = 0;
  std::vector<Timeout> handles;
  for (int i = 0; i < 10; ++i) handles.push_back(w.schedule([&] { ++runs; }, (1 + i % 3) * 10ms));
  CHECK(w.step(3) == 10);
  CHECK(dispatched == 10);
  CHECK(runs == 0);  // handed over, not run by the wheel
  for (const Timeout& t : handles) CHECK(t.isExpired());
  CHECK(w.timer().pendingTimeouts() == 0);
  CHECK(w.timer().metrics().fired == 10);
  while (!queue.empty()) {
    queue.front()();
    queue.pop_front();
  }
  CHECK(runs == 10);
  CHECK(dispatched == 10);
}

TEST_CASE("executor closures run after the timer is destroyed") {
  std::deque<std::function<void()>> queue;
  TimerHooks hooks;
  hooks.executor = [&](std::function<void()> closure) { queue.push_back(std::move(closure)); };
  int runs = 0;
  auto payload = std::make_shared<int>(5);
  std::weak_ptr<int> watch = payload;
  {
    ManualWheel w(wheelOptions(10ms, 32), hooks);
    w.start();
    w.schedule([&runs, p = std::move(payload)] { runs += *p; }, 10ms);
    w.schedule([&runs] { ++runs; }, 10ms);
    CHECK(w.step() == 2);
    CHECK(w.timer().stop().empty());
  }
  REQUIRE(queue.size() == 2);
  CHECK_FALSE(watch.expired());  // the closure owns its task
  for (auto& closure : queue) closure();
  CHECK(runs == 6);
  queue.clear();
  CHECK(watch.expired());
}

TEST_CASE("a task run by the executor that throws is caught inside the closure") {
  std::deque<std::function<void()>> queue;
  ErrorLog errors;
  TimerHooks hooks = hooksRecording(errors);
  hooks.executor = [&](std::function<void()> closure) { queue.push_back(std::move(closure)); };
  ManualWheel w(wheelOptions(10ms, 32), hooks);
  w.start();
  LogCapture log;
  const Timeout bad = w.schedule([] { throw std::runtime_error("in executor"); }, 10ms);
  CHECK(w.step() == 1);
  REQUIRE(queue.size() == 1);
  bool escaped = false;
  std::thread runner([&] {
    try {
      queue.front()();
    } catch (...) {
      escaped = true;
    }
  });
  const std::thread::id runnerId = runner.get_id();
  runner.join();
  CHECK_FALSE(escaped);
  CHECK(w.timer().metrics().taskErrors == 1);
  REQUIRE(errors.errors.size() == 1);
  CHECK(messageOf(errors.errors[0]) == "in executor");
  CHECK(errors.timeouts[0] == bad);
  CHECK(errors.threads[0] == runnerId);  // the thread that ran the task
}

TEST_CASE("an executor that throws is counted and the wheel goes on") {
  ErrorLog errors;
  TimerHooks hooks = hooksRecording(errors);
  int calls = 0;
  hooks.executor = [&](std::function<void()> closure) {
    if (++calls == 1) throw std::runtime_error("executor full");
    closure();
  };
  ManualWheel w(wheelOptions(10ms, 32), hooks);
  w.start();
  LogCapture log;
  int runs = 0;
  w.schedule([&] { ++runs; }, 10ms);  // its hand-over fails
  w.schedule([&] { ++runs; }, 10ms);
  w.schedule([&] { ++runs; }, 20ms);
  w.step(2);
  CHECK(calls == 3);
  CHECK(runs == 2);
  CHECK(w.timer().metrics().taskErrors == 1);
  REQUIRE(errors.errors.size() == 1);
  CHECK(messageOf(errors.errors[0]) == "executor full");
  CHECK(w.timer().pendingTimeouts() == 0);
}

}  // TEST_SUITE("core")
