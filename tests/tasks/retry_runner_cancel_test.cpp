// RetryRunner: cancel before / during / after, completions twice or late, the timer stopped or
// full, a throwing final callback, and completions and cancels on other threads (TSan).
#include "retry_runner_rig.h"

#include <wheelbeat/core/log.h>

#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>

using namespace wbtest;

namespace {

// One thread running posted jobs in order; drained() waits (bounded) until none is left.
class Worker {
public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void post(std::function<void()> job) {
    {
      const std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_all();
  }
  bool drained(ns bound) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, bound, [this] { return jobs_.empty() && !busy_; });
  }
  std::thread::id id() const { return thread_.get_id(); }

private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      busy_ = true;
      lock.unlock();
      job();
      lock.lock();
      busy_ = false;
      cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

struct ManualTimer {
  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>();
  std::unique_ptr<HashedWheelTimer> timer = std::make_unique<HashedWheelTimer>(
      Rig::defaultWheel(),
      TimerHooks{.executor = {}, .onTaskError = {}, .clock = clock, .drive = Drive::Manual});
};

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("retry runner: cancel during attempt 1 ends Cancelled and ignores its completion") {
  Rig rig;
  Flaky op{&rig, {"defer"}};
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, -1));
  const RetryHandle h = runner.run(op.operation(), finals.callback());
  rig.runUntil(30ms);
  CHECK(h.cancel());
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::Cancelled);
  CHECK(r.reason == GiveUp::None);
  CHECK(r.attempts == 1);
  CHECK(r.elapsed == 30ms);
  CHECK(finals.threads.front() == std::this_thread::get_id());
  REQUIRE(op.open.size() == 1);
  op.open.front().fail(errors::kTimeout);
  rig.runUntil(1s);
  CHECK(op.at.size() == 1);
  CHECK(finals.results.size() == 1);
  CHECK(rig.pending() == 0);
}

TEST_CASE("retry runner: cancel while a retry waits means the retry never runs") {
  Rig rig;
  RetryOptions policy = plainPolicy(100ms, -1);
  policy.deadline = 10s;
  Flaky op{&rig, {"timeout"}};
  Finals finals;
  RetryRunner runner(rig.timer(), policy);
  const RetryHandle h = runner.run(op.operation(), finals.callback());
  rig.runUntil(50ms);
  CHECK(rig.pending() == 2);  // the retry and the deadline
  CHECK(h.cancel());
  CHECK(rig.pending() == 0);
  rig.runUntil(1s);
  CHECK(op.at == std::vector<ns>{0ms});
  CHECK(finals.only().outcome == RetryOutcome::Cancelled);
  CHECK(finals.only().attempts == 1);
  CHECK(finals.only().lastError == "timeout");
}

TEST_CASE("retry runner: cancel after the end returns false and calls nothing") {
  Rig rig;
  Flaky op{&rig, {"timeout"}};
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, 0));
  const RetryHandle h = runner.run(op.operation(), finals.callback());
  CHECK(h.finished());
  CHECK_FALSE(h.cancel());
  CHECK(finals.only().reason == GiveUp::MaxAttempts);
  CHECK_FALSE(RetryHandle{}.cancel());
  CHECK_FALSE(RetryHandle{}.finished());
  CHECK(RetryHandle{}.attempts() == 0);
}

TEST_CASE("retry runner: cancel inside the operation and inside the final callback") {
  Rig rig;
  Finals finals;
  RetryHandle h;
  bool cancelInFinal = true;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, -1));
  h = runner.run(
      [&](std::int64_t attempt, const AttemptDone& done) {
        if (attempt == 2) CHECK(h.cancel());
        done.fail(errors::kTimeout);  // after the cancel: ignored
      },
      [&](const RetryResult& r) {
        finals.results.push_back(r);
        cancelInFinal = h.cancel();
      });
  rig.runUntil(1s);
  CHECK(finals.only().outcome == RetryOutcome::Cancelled);
  CHECK(finals.only().attempts == 2);
  CHECK_FALSE(cancelInFinal);
}

TEST_CASE("retry runner: an attempt completed twice counts once") {
  Rig rig;
  Finals finals;
  int calls = 0;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, -1));
  runner.run(
      [&](std::int64_t attempt, const AttemptDone& done) {
        ++calls;
        if (attempt == 1) {
          done.fail(errors::kTimeout);
          done.succeed();  // ignored: the failure counted
          done.fail(errors::kDisconnected);
        } else {
          done.succeed();
          done.succeed();
        }
      },
      finals.callback());
  rig.runUntil(1s);
  CHECK(calls == 2);
  CHECK(finals.only().outcome == RetryOutcome::Ok);
  CHECK(finals.only().attempts == 2);
  CHECK(finals.only().lastError == "timeout");
}

TEST_CASE("retry runner: run on a stopped timer throws and calls nothing") {
  Rig rig;
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, -1));
  CHECK(rig.timer().stop().empty());
  Flaky op{&rig, {""}};
  CHECK_THROWS_AS(runner.run(op.operation(), finals.callback()), TimerStoppedError);
  CHECK(op.at.empty());
  CHECK(finals.results.empty());
}

TEST_CASE("retry runner: a retry waiting when the timer stops ends TimerUnavailable") {
  ManualTimer t;
  Finals finals;
  RetryOptions policy = plainPolicy(100ms, -1);
  policy.deadline = 10s;
  RetryRunner runner(*t.timer, policy);
  int calls = 0;
  runner.run(
      [&](std::int64_t, const AttemptDone& done) {
        ++calls;
        done.fail(errors::kTimeout);
      },
      finals.callback());
  CHECK(t.timer->stop().size() == 2);  // the retry and the deadline, kept until destruction
  CHECK(finals.results.empty());
  t.timer.reset();  // destroys the pending tasks: the run learns it cannot go on
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::TimerUnavailable);
  CHECK(r.attempts == 1);
  CHECK(r.lastError == "timeout");
  CHECK(calls == 1);
}

TEST_CASE("retry runner: a failure after the timer stopped ends TimerUnavailable at once") {
  ManualTimer t;
  Finals finals;
  std::vector<AttemptDone> open;
  RetryRunner runner(*t.timer, plainPolicy(100ms, -1));
  runner.run([&](std::int64_t, AttemptDone done) { open.push_back(std::move(done)); },
             finals.callback());
  CHECK(t.timer->stop().empty());
  REQUIRE(open.size() == 1);
  open.front().fail(errors::kDisconnected);
  CHECK(finals.only().outcome == RetryOutcome::TimerUnavailable);
  CHECK(finals.only().attempts == 1);
}

TEST_CASE("retry runner: a timer at maxPendingTimeouts ends the run TimerUnavailable") {
  WheelOptions wheel = Rig::defaultWheel();
  wheel.maxPendingTimeouts = 1;
  Rig rig(wheel);
  RetryOptions policy = plainPolicy(100ms, -1);
  policy.deadline = 10s;  // takes the one slot
  Flaky op{&rig, {"timeout"}};
  Finals finals;
  RetryRunner runner(rig.timer(), policy);
  runner.run(op.operation(), finals.callback());
  CHECK(finals.only().outcome == RetryOutcome::TimerUnavailable);
  CHECK(finals.only().attempts == 1);
  CHECK(rig.pending() == 0);
}

TEST_CASE("retry runner: a final callback that throws is logged and the wheel goes on") {
  Rig rig;
  std::vector<std::string> logged;
  auto previous = wheelbeat::core::setLogSink(
      [&](wheelbeat::core::LogLevel, std::string_view m) { logged.emplace_back(m); });
  Flaky op{&rig, {"timeout"}};
  RetryRunner runner(rig.timer(), plainPolicy(100ms, -1));
  runner.run(op.operation(), [](const RetryResult&) { throw std::runtime_error("oops"); });
  rig.runUntil(200ms);
  wheelbeat::core::setLogSink(std::move(previous));
  CHECK(op.at == std::vector<ns>{0ms, 100ms});
  CHECK(logged == std::vector<std::string>{"wheelbeat: a retry run's final callback threw: oops"});
  CHECK(rig.timer().metrics().taskErrors == 0);
}

TEST_CASE("retry runner: completions on another thread drive the retries") {
  Rig rig;
  Worker worker;
  Finals finals;
  std::vector<ns> at;
  RetryRunner runner(rig.timer(), plainPolicy(20ms, 5));
  runner.run(
      [&](std::int64_t attempt, AttemptDone done) {
        at.push_back(rig.elapsed());
        worker.post(
            [attempt, done] { attempt < 4 ? done.fail(errors::kTimeout) : done.succeed(); });
      },
      finals.callback());
  for (int i = 0; i < 100; ++i) {
    REQUIRE(worker.drained(10s));
    if (!finals.results.empty()) break;
    rig.runUntil(rig.elapsed() + 10ms);
  }
  CHECK(at == std::vector<ns>{0ms, 20ms, 40ms, 60ms});
  CHECK(finals.only().outcome == RetryOutcome::Ok);
  CHECK(finals.only().attempts == 4);
  CHECK(finals.threads.front() == worker.id());
}

TEST_CASE("retry runner: cancel racing with completion ends each run exactly once") {
  Rig rig;
  constexpr std::size_t kRuns = 200;
  std::array<std::atomic<int>, kRuns> finals{};
  std::atomic<int> ok{0};
  std::atomic<int> cancelled{0};
  std::vector<RetryHandle> handles;
  std::vector<AttemptDone> open;
  RetryRunner runner(rig.timer(), plainPolicy(10ms, -1));
  for (std::size_t i = 0; i < kRuns; ++i) {
    handles.push_back(runner.run([&](std::int64_t, AttemptDone done) { open.push_back(done); },
                                 [&, i](const RetryResult& r) {
                                   finals[i].fetch_add(1);
                                   (r.outcome == RetryOutcome::Ok ? ok : cancelled).fetch_add(1);
                                 }));
  }
  REQUIRE(open.size() == kRuns);
  std::atomic<int> wonCancels{0};
  std::thread canceller([&] {
    for (const auto& h : handles) wonCancels.fetch_add(h.cancel() ? 1 : 0);
  });
  std::thread completer([&] {
    for (auto it = open.rbegin(); it != open.rend(); ++it) it->succeed();
  });
  canceller.join();
  completer.join();
  rig.runUntil(100ms);
  for (const auto& count : finals) CHECK(count.load() == 1);
  CHECK(ok.load() + cancelled.load() == static_cast<int>(kRuns));
  CHECK(cancelled.load() == wonCancels.load());
  CHECK(rig.pending() == 0);
}

}  // TEST_SUITE("tasks")
