// RetryBudget: earned tokens (ratio × requests), the per-second reserve refilling with time, the
// expiry window, sharing between RetryStates, and that refused retries spend nothing.
#include "support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

using namespace wbtest;

namespace {

void requests(RetryBudget& budget, int count, ns now) {
  for (int i = 0; i < count; ++i) budget.onRequest(now);
}

RetryOptions fixedOneSecond() {
  RetryOptions o;
  o.backoff = Backoff::Fixed;
  o.maxDelay = o.initialDelay = 1s;
  o.jitter = Jitter::None;
  return o;
}

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("budget ratio 0.1 with 100 requests allows exactly 10 retries") {
  RetryBudget budget(budgetOptions(0.1, 0));
  requests(budget, 100, kStart);
  CHECK(budget.available(kStart) == 10);
  CHECK(drain(budget, kStart) == 10);
  CHECK_FALSE(budget.tryWithdraw(kStart));
  CHECK(budget.available(kStart) == 0);
}

TEST_CASE("budget ratio 0.1 with 99 requests allows 9 retries") {
  RetryBudget budget(budgetOptions(0.1, 0));
  requests(budget, 99, kStart);  // 9.9 tokens: a retry needs a whole one
  CHECK(drain(budget, kStart) == 9);
  budget.onRequest(kStart);  // 0.9 + 0.1 = exactly 1
  CHECK(drain(budget, kStart) == 1);
}

TEST_CASE("budget adds the reserve of minRetriesPerSecond to the earned tokens") {
  RetryBudget budget(budgetOptions(0.1, 10));
  requests(budget, 100, kStart);
  CHECK(budget.available(kStart) == 20);
  CHECK(drain(budget, kStart) == 20);
}

TEST_CASE("a fresh budget allows the reserve alone") {
  RetryBudget budget;  // ratio 0.2, 10 per second, 10s window
  CHECK(drain(budget, kStart) == 10);
}

TEST_CASE("the reserve refills at minRetriesPerSecond up to one second's worth") {
  RetryBudget budget(budgetOptions(0.0, 10));
  CHECK(drain(budget, kStart) == 10);
  CHECK(budget.available(kStart + 99ms) == 0);   // 0.99 token
  CHECK(budget.available(kStart + 100ms) == 1);  // 10 per second = 1 per 100ms
  CHECK(drain(budget, kStart + 100ms) == 1);
  CHECK(budget.available(kStart + 150ms) == 0);  // 0.5 token, kept
  CHECK(drain(budget, kStart + 200ms) == 1);     // 0.5 + 0.5: fractions are not lost
  CHECK(budget.available(kStart + 700ms) == 5);
  CHECK(budget.available(kStart + 1200ms) == 10);
  CHECK(budget.available(kStart + 1h) == 10);  // capped: idle time does not pile up
  CHECK(drain(budget, kStart + 1h) == 10);
}

TEST_CASE("a budget with ratio 0 and no reserve refuses every retry") {
  RetryBudget budget(budgetOptions(0.0, 0));
  requests(budget, 1000, kStart);
  CHECK_FALSE(budget.tryWithdraw(kStart));
  CHECK_FALSE(budget.tryWithdraw(kStart + 1h));
}

TEST_CASE("earned tokens expire one window after their slice") {
  // window 10s = 10 slices of 1s; kStart = 5s lies in slice 5, which expires when slice 15 starts.
  RetryBudget budget(budgetOptions(0.5, 0, 10s));
  requests(budget, 20, kStart);
  CHECK(budget.available(kStart + 9s + 999ms) == 10);
  CHECK(budget.available(kStart + 10s) == 0);
}

TEST_CASE("a deposit late in its slice lives just over 0.9 window") {
  RetryBudget budget(budgetOptions(0.5, 0, 10s));
  requests(budget, 20, kStart + 999ms);  // still slice 5
  CHECK(budget.available(kStart + 9s + 999ms) == 10);
  CHECK(budget.available(kStart + 10s) == 0);  // 9.001s after the deposit
}

TEST_CASE("retries spend the oldest earned tokens first") {
  RetryBudget budget(budgetOptions(0.1, 0, 10s));
  requests(budget, 100, kStart);       // 10 tokens in slice 5
  requests(budget, 100, kStart + 5s);  // 10 tokens in slice 10
  CHECK(drain(budget, kStart + 7s, 10) == 10);
  // Slice 5 was spent, so its expiry takes nothing away.
  CHECK(budget.available(kStart + 10s) == 10);
  CHECK(budget.available(kStart + 15s) == 0);
}

TEST_CASE("earned tokens stay bounded by ratio times the requests of one window") {
  // 10 requests per second for 100 seconds at ratio 0.1: one token per second, ten live slices.
  RetryBudget budget(budgetOptions(0.1, 0, 10s));
  for (int second = 0; second < 100; ++second) {
    requests(budget, 10, kStart + ns(std::chrono::seconds(second)));
    REQUIRE(budget.available(kStart + ns(std::chrono::seconds(second))) ==
            std::min(second + 1, 10));
  }
}

TEST_CASE("time going backwards neither refills nor expires") {
  RetryBudget budget(budgetOptions(0.1, 10, 10s));
  requests(budget, 100, kStart + 10s);
  CHECK(drain(budget, kStart + 10s) == 20);
  CHECK(budget.available(kStart) == 0);
  CHECK_FALSE(budget.tryWithdraw(kStart));
  budget.onRequest(kStart);  // deposited in the current slice, not an older one
  CHECK(budget.available(kStart + 10s + 100ms) == 1);
}

TEST_CASE("a budget shared by two states stops both") {
  auto budget = std::make_shared<RetryBudget>(budgetOptions(0.1, 0));
  requests(*budget, 30, kStart);  // 3 tokens
  RetryState a(fixedOneSecond(), kStart, 1, budget);
  RetryState b(fixedOneSecond(), kStart, 2, budget);
  CHECK(a.next(kStart, "io").retry);
  CHECK(b.next(kStart, "io").retry);
  CHECK(a.next(kStart, "io").retry);
  const Decision refusedB = b.next(kStart, "io");
  CHECK_FALSE(refusedB.retry);
  CHECK(refusedB.reason == GiveUp::BudgetExhausted);
  CHECK(refusedB.attempt == 2);
  CHECK(a.next(kStart, "io").reason == GiveUp::BudgetExhausted);
  CHECK(a.attempts() == 2);
  CHECK(b.attempts() == 1);

  budget->onRequest(kStart + 1s);  // traffic resumes: 10 requests earn one more token
  requests(*budget, 9, kStart + 1s);
  const Decision retried = b.next(kStart + 1s, "io");
  CHECK(retried.retry);
  CHECK(retried.attempt == 2);  // the refusal did not count an attempt
}

TEST_CASE("a retry refused for another reason does not spend a budget token") {
  auto budget = std::make_shared<RetryBudget>(budgetOptions(0.0, 1));
  CHECK(budget->available(kStart) == 1);

  auto noRetries = fixedOneSecond();
  noRetries.maxAttempts = 0;
  RetryState maxed(noRetries, kStart, 1, budget);
  CHECK(maxed.next(kStart, "io").reason == GiveUp::MaxAttempts);

  auto ignoring = fixedOneSecond();
  ignoring.ignore = {"auth"};
  RetryState ignored(ignoring, kStart, 1, budget);
  CHECK(ignored.next(kStart, "auth").reason == GiveUp::NotRetryable);

  auto late = fixedOneSecond();
  late.deadline = 2s;
  RetryState expired(late, kStart, 1, budget);
  CHECK(expired.next(kStart + 1500ms, "io").reason == GiveUp::Deadline);

  CHECK(budget->available(kStart) == 1);
  CHECK(expired.next(kStart + 1s, "io").retry);  // the one token, now spent
  CHECK(budget->available(kStart + 1s) == 0);
}

TEST_CASE("concurrent withdrawals never exceed the tokens") {
  auto budget = std::make_shared<RetryBudget>(budgetOptions(1.0, 0));
  requests(*budget, 1000, kStart);
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&budget, &granted] {
      for (int i = 0; i < 1000; ++i) {
        if (budget->tryWithdraw(kStart)) granted.fetch_add(1, std::memory_order_relaxed);
        budget->onRequest(kStart);  // 4000 more deposits of 1 token, interleaved
      }
    });
  }
  for (auto& thread : threads) thread.join();
  // 5000 tokens were deposited in total and at most 4000 withdrawals tried: all succeed.
  CHECK(granted.load() == 4000);
  CHECK(budget->available(kStart) == 1000);

  // Now 4 threads race for the 1000 left with 1000 tries each: exactly 1000 win.
  granted.store(0);
  threads.clear();
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&budget, &granted] {
      for (int i = 0; i < 1000; ++i) {
        if (budget->tryWithdraw(kStart)) granted.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(granted.load() == 1000);
  CHECK(budget->available(kStart) == 0);
}

}  // TEST_SUITE("tasks")
