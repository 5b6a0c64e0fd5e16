// RetryRunner on a manual clock (10 ms ticks): exact attempt times and counts for fixed,
// exponential and seeded-jitter policies, per-error rules, the budget, the deadline, the attempt
// timeout, and the error-name vocabulary.
#include "retry_runner_rig.h"

#include <wheelbeat/tasks/failback_invoker.h>

#include <doctest/doctest.h>

#include <set>

using namespace wbtest;

namespace {

// When a retry scheduled at tick time t with `delay` runs: the first tick at or after t + delay,
// and never before the next tick (ticks are 10 ms from the rig's origin).
ns retryTime(ns t, ns delay) {
  const ns tick = 10ms;
  return std::max(t + tick, ((t + delay + tick - 1ns) / tick) * tick);
}

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("retry runner: a first success ends Ok after 1 attempt inside run()") {
  Rig rig;
  Flaky op{&rig, {""}};
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, 3));
  const RetryHandle h = runner.run(op.operation(), finals.callback());
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::Ok);
  CHECK(r.reason == GiveUp::None);
  CHECK(r.attempts == 1);
  CHECK(r.lastError.empty());
  CHECK(r.elapsed == 0ns);
  CHECK(finals.threads.front() == std::this_thread::get_id());
  CHECK(h.finished());
  CHECK(h.attempts() == 1);
  CHECK(rig.pending() == 0);
}

TEST_CASE("retry runner: exponential attempts at 0 100 300 700ms then max-attempts") {
  Rig rig;
  Flaky op{&rig, {"timeout", "timeout", "timeout", "timeout", "timeout"}};
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, 3, 2.0));
  runner.run(op.operation(), finals.callback());
  rig.runUntil(2s);
  CHECK(op.at == std::vector<ns>{0ms, 100ms, 300ms, 700ms});
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::GaveUp);
  CHECK(r.reason == GiveUp::MaxAttempts);
  CHECK(r.attempts == 4);
  CHECK(r.lastError == "timeout");
  CHECK(r.elapsed == 700ms);
  CHECK(rig.pending() == 0);
}

TEST_CASE("retry runner: a success on attempt 3 ends Ok with 3 attempts") {
  Rig rig;
  Flaky op{&rig, {"disconnected", "timeout", ""}};
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(50ms, -1));
  runner.run(op.operation(), finals.callback());
  rig.runUntil(1s);
  CHECK(op.at == std::vector<ns>{0ms, 50ms, 100ms});
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::Ok);
  CHECK(r.attempts == 3);
  CHECK(r.lastError == "timeout");
  CHECK(r.elapsed == 100ms);
}

TEST_CASE("retry runner: seeded jitter gives the delays of RetryState with seed + run number") {
  Rig rig;
  RetryOptions policy = exponential(100ms, 1.6, 2s, Jitter::Full);
  policy.maxAttempts = 5;
  // Run 1 (the second run) of a runner seeded 42 uses seed 43.
  RetryState expected(policy, rig.timer().now(), 43);
  RetryRunner runner(rig.timer(), policy, {.seed = 42});
  Flaky first{&rig, {""}};
  Finals finals;
  runner.run(first.operation(), finals.callback());
  Flaky op{&rig, std::vector<std::string>(6, "timeout")};
  runner.run(op.operation(), finals.callback());
  rig.runUntil(20s);
  std::vector<ns> times{0ms};
  for (int i = 0; i < 5; ++i) {
    // Each retry starts on the first tick at or after the failure time + its delay.
    times.push_back(retryTime(times.back(), expected.next(0ns, "timeout").delay));
  }
  CHECK(op.at == times);
  REQUIRE(finals.results.size() == 2);
  CHECK(finals.results[1].attempts == 6);
  CHECK(finals.results[1].reason == GiveUp::MaxAttempts);
}

TEST_CASE("retry runner: a completion later on waits the delay from the failure") {
  Rig rig;
  Flaky op{&rig, {"defer"}};
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, 1));
  runner.run(op.operation(), finals.callback());
  rig.runUntil(50ms);
  REQUIRE(op.open.size() == 1);
  op.open.front().fail(errors::kOverloaded);
  rig.runUntil(1s);
  CHECK(op.at == std::vector<ns>{0ms, 150ms});
  CHECK(finals.only().outcome == RetryOutcome::Ok);
  CHECK(finals.only().attempts == 2);
}

TEST_CASE("retry runner: an error not in retry_on stops at once") {
  Rig rig;
  RetryOptions policy = plainPolicy(100ms, -1);
  policy.retryOn = {"timeout", "disconnected"};
  Flaky op{&rig, {"bad-request"}};
  Finals finals;
  RetryRunner runner(rig.timer(), policy);
  runner.run(op.operation(), finals.callback());
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::GaveUp);
  CHECK(r.reason == GiveUp::NotRetryable);
  CHECK(r.attempts == 1);
  CHECK(r.lastError == "bad-request");
  CHECK(rig.pending() == 0);
  rig.runUntil(1s);
  CHECK(op.at.size() == 1);
}

TEST_CASE("retry runner: an ignored error stops at once even when retry_on names it") {
  Rig rig;
  RetryOptions policy = plainPolicy(100ms, -1);
  policy.retryOn = {"timeout", "rejected"};
  policy.ignore = {"rejected"};
  Flaky op{&rig, {"timeout", "rejected"}};
  Finals finals;
  RetryRunner runner(rig.timer(), policy);
  runner.run(op.operation(), finals.callback());
  rig.runUntil(1s);
  CHECK(op.at == std::vector<ns>{0ms, 100ms});
  CHECK(finals.only().reason == GiveUp::NotRetryable);
  CHECK(finals.only().attempts == 2);
}

TEST_CASE("retry runner: the budget reserve allows 1 retry and then refuses") {
  Rig rig;
  auto budget = std::make_shared<RetryBudget>(budgetOptions(0.0, 1));
  Flaky op{&rig, std::vector<std::string>(5, "timeout")};
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, -1), {.budget = budget});
  runner.run(op.operation(), finals.callback());
  rig.runUntil(1s);
  CHECK(op.at == std::vector<ns>{0ms, 100ms});
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::GaveUp);
  CHECK(r.reason == GiveUp::BudgetExhausted);
  CHECK(r.attempts == 2);
  CHECK(r.elapsed == 100ms);
}

TEST_CASE("retry runner: each run deposits one request in the budget") {
  Rig rig;
  // ratio 0.5, no reserve: two runs earn one token, which the first failure spends.
  auto budget = std::make_shared<RetryBudget>(budgetOptions(0.5, 0));
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, -1), {.budget = budget});
  Flaky ok{&rig, {""}};
  runner.run(ok.operation(), finals.callback());
  CHECK(budget->available(rig.timer().now()) == 0);
  Flaky failing{&rig, std::vector<std::string>(5, "timeout")};
  runner.run(failing.operation(), finals.callback());
  rig.runUntil(1s);
  CHECK(failing.at == std::vector<ns>{0ms, 100ms});
  REQUIRE(finals.results.size() == 2);
  CHECK(finals.results[1].reason == GiveUp::BudgetExhausted);
  CHECK(budget->available(rig.timer().now()) == 0);
}

TEST_CASE("retry runner: the deadline refuses a retry that would start after it") {
  Rig rig;
  RetryOptions policy = plainPolicy(100ms, -1);
  policy.deadline = 250ms;
  Flaky op{&rig, std::vector<std::string>(5, "timeout")};
  Finals finals;
  RetryRunner runner(rig.timer(), policy);
  runner.run(op.operation(), finals.callback());
  rig.runUntil(1s);
  CHECK(op.at == std::vector<ns>{0ms, 100ms, 200ms});
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::Deadline);
  CHECK(r.reason == GiveUp::Deadline);
  CHECK(r.attempts == 3);
  CHECK(r.elapsed == 200ms);
  CHECK(rig.pending() == 0);
}

TEST_CASE("retry runner: the deadline ends an attempt still in flight") {
  Rig rig;
  RetryOptions policy = plainPolicy(100ms, -1);
  policy.deadline = 250ms;
  Flaky op{&rig, {"timeout", "defer"}};
  Finals finals;
  RetryRunner runner(rig.timer(), policy);
  runner.run(op.operation(), finals.callback());
  rig.runUntil(240ms);
  CHECK(finals.results.empty());
  rig.runUntil(250ms);
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::Deadline);
  CHECK(r.reason == GiveUp::Deadline);
  CHECK(r.attempts == 2);
  CHECK(r.lastError == "timeout");
  CHECK(r.elapsed == 250ms);
  REQUIRE(op.open.size() == 1);
  op.open.front().succeed();  // late: ignored
  CHECK(finals.results.size() == 1);
}

TEST_CASE("retry runner: an attempt that never completes fails with timeout after attemptTimeout") {
  Rig rig;
  Flaky op{&rig, {"hang", "hang", "hang"}};
  Finals finals;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, 2), {.attemptTimeout = 50ms});
  runner.run(op.operation(), finals.callback());
  rig.runUntil(1s);
  CHECK(op.at == std::vector<ns>{0ms, 150ms, 300ms});
  const RetryResult& r = finals.only();
  CHECK(r.outcome == RetryOutcome::GaveUp);
  CHECK(r.reason == GiveUp::MaxAttempts);
  CHECK(r.attempts == 3);
  CHECK(r.lastError == "timeout");
  CHECK(r.elapsed == 350ms);
  CHECK(rig.pending() == 0);
}

TEST_CASE("retry runner: an operation that throws fails the attempt with exception") {
  Rig rig;
  Finals finals;
  int calls = 0;
  RetryRunner runner(rig.timer(), plainPolicy(100ms, 1));
  runner.run(
      [&](std::int64_t, const AttemptDone&) {
        ++calls;
        throw std::runtime_error("boom");
      },
      finals.callback());
  rig.runUntil(1s);
  CHECK(calls == 2);
  CHECK(finals.only().lastError == "exception");
  CHECK(finals.only().reason == GiveUp::MaxAttempts);
}

TEST_CASE("retry runner: bad arguments are refused with the field and the value") {
  Rig rig;
  CHECK(errorOf([&] {
          RetryRunner(rig.timer(), plainPolicy(100ms, 1), {.attemptTimeout = -1ms});
        }) == "RetryRunnerOptions.attemptTimeout = -1ms (expected: 0 (none) or > 0)");
  RetryOptions bad = plainPolicy(100ms, 1);
  bad.maxAttempts = -2;
  CHECK(errorOf([&] { RetryRunner(rig.timer(), bad); }) ==
        "RetryOptions.maxAttempts = -2 (expected: -1 (forever), 0 (none) or > 0)");
  RetryRunner runner(rig.timer(), plainPolicy(100ms, 1));
  Finals finals;
  CHECK(errorOf([&] { runner.run(nullptr, finals.callback()); }) ==
        "RetryRunner::run: operation = empty");
  Flaky op{&rig, {"defer"}};
  CHECK(errorOf([&] { runner.run(op.operation(), nullptr); }) == "RetryRunner::run: done = empty");
  CHECK(op.at.empty());
  runner.run(op.operation(), finals.callback());
  REQUIRE(op.open.size() == 1);
  CHECK(errorOf([&] { op.open.front().fail(""); }) ==
        "AttemptDone::fail: errorName = \"\" (expected: a non-empty name)");
  op.open.front().succeed();  // the refused fail() left the attempt open
  CHECK(finals.only().outcome == RetryOutcome::Ok);
}

TEST_CASE("retry runner: outcome names") {
  CHECK(retryOutcomeName(RetryOutcome::Ok) == "ok");
  CHECK(retryOutcomeName(RetryOutcome::GaveUp) == "gave-up");
  CHECK(retryOutcomeName(RetryOutcome::Deadline) == "deadline");
  CHECK(retryOutcomeName(RetryOutcome::Cancelled) == "cancelled");
  CHECK(retryOutcomeName(RetryOutcome::TimerUnavailable) == "timer-unavailable");
}

TEST_CASE("error names: 9 distinct lower-case names and isKnown") {
  const std::set<std::string_view> names(errors::kAll.begin(), errors::kAll.end());
  CHECK(names.size() == 9);
  for (std::string_view n : errors::kAll) {
    CHECK(errors::isKnown(n));
    for (char c : n) CHECK(((c >= 'a' && c <= 'z') || c == '-'));
  }
  CHECK(errors::isKnown("disconnected"));
  CHECK_FALSE(errors::isKnown("closed"));
  CHECK_FALSE(errors::isKnown("Timeout"));
  CHECK_FALSE(errors::isKnown(""));
  CHECK(wheelbeat::tasks::kFailbackRejected == errors::kFailbackRejected);
}

}  // TEST_SUITE("tasks")
