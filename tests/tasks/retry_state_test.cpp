// RetryState: maxAttempts, the deadline boundary, retryOn / ignore precedence, reset(), the order
// of the checks, and giveUpName().
#include "support.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

using namespace wbtest;

namespace {

// Fixed 1s backoff without jitter: every delay is exactly 1s.
RetryOptions fixedOneSecond() {
  RetryOptions o;
  o.backoff = Backoff::Fixed;
  o.initialDelay = 1s;
  o.maxDelay = 1s;
  o.jitter = Jitter::None;
  return o;
}

RetryOptions withMaxAttempts(std::int64_t maxAttempts) {
  auto o = fixedOneSecond();
  o.maxAttempts = maxAttempts;
  return o;
}

void checkRefused(const Decision& d, GiveUp reason, std::int64_t attempt) {
  CHECK_FALSE(d.retry);
  CHECK(d.reason == reason);
  CHECK(d.attempt == attempt);
  CHECK(d.delay == 0ns);
}

void checkGranted(const Decision& d, std::int64_t attempt, ns delay) {
  CHECK(d.retry);
  CHECK(d.reason == GiveUp::None);
  CHECK(d.attempt == attempt);
  CHECK(d.delay == delay);
}

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("maxAttempts 0 never retries") {
  RetryState state(withMaxAttempts(0), kStart, 1);
  checkRefused(state.next(kStart, "io"), GiveUp::MaxAttempts, 1);
  checkRefused(state.next(kStart + 1s, "io"), GiveUp::MaxAttempts, 1);
  CHECK(state.attempts() == 0);
}

TEST_CASE("maxAttempts 1 allows exactly one retry") {
  RetryState state(withMaxAttempts(1), kStart, 1);
  checkGranted(state.next(kStart, "io"), 1, 1s);
  checkRefused(state.next(kStart + 1s, "io"), GiveUp::MaxAttempts, 2);
  CHECK(state.attempts() == 1);
}

TEST_CASE("maxAttempts 3 allows retries numbered 1 to 3") {
  RetryState state(withMaxAttempts(3), kStart, 1);
  for (std::int64_t n = 1; n <= 3; ++n) checkGranted(state.next(kStart, "io"), n, 1s);
  checkRefused(state.next(kStart, "io"), GiveUp::MaxAttempts, 4);
  checkRefused(state.next(kStart, "io"), GiveUp::MaxAttempts, 4);
  CHECK(state.attempts() == 3);
}

TEST_CASE("maxAttempts -1 retries forever") {
  RetryState state(withMaxAttempts(-1), kStart, 1);
  for (std::int64_t n = 1; n <= 100'000; ++n) {
    const Decision d = state.next(kStart, "io");
    REQUIRE(d.retry);
    REQUIRE(d.attempt == n);
  }
  CHECK(state.attempts() == 100'000);
}

TEST_CASE("a retry landing exactly on the deadline is allowed and one nanosecond later refused") {
  auto o = fixedOneSecond();
  o.deadline = 10s;
  RetryState state(o, kStart, 1);
  checkGranted(state.next(kStart + 9s, "io"), 1, 1s);  // retry at start + 10s: allowed
  checkRefused(state.next(kStart + 9s + 1ns, "io"), GiveUp::Deadline, 2);
  checkRefused(state.next(kStart + 1h, "io"), GiveUp::Deadline, 2);
  CHECK(state.attempts() == 1);
}

TEST_CASE("the deadline counts the delay not just the time of the failure") {
  auto o = exponential(1s, 2.0, 60s);
  o.deadline = 6s;
  RetryState state(o, kStart, 1);
  checkGranted(state.next(kStart, "io"), 1, 1s);       // at 1s
  checkGranted(state.next(kStart + 1s, "io"), 2, 2s);  // at 3s
  // The third retry would wait 4s: 3s + 4s = 7s > 6s, although the failure is at 3s only.
  checkRefused(state.next(kStart + 3s, "io"), GiveUp::Deadline, 3);
}

TEST_CASE("deadline 0 never refuses even at the end of time") {
  RetryState state(fixedOneSecond(), kStart, 1);
  checkGranted(state.next(ns::max() - 1s, "io"), 1, 1s);
  checkGranted(state.next(ns::max(), "io"), 2, 1s);  // now + delay saturates, no overflow
}

TEST_CASE("a huge deadline saturates instead of overflowing") {
  auto o = fixedOneSecond();
  o.deadline = ns::max();
  RetryState state(o, kStart, 1);
  checkGranted(state.next(kStart + 1h, "io"), 1, 1s);
  checkGranted(state.next(ns::max(), "io"), 2, 1s);
}

TEST_CASE("empty rule lists retry every error") {
  RetryState state(fixedOneSecond(), kStart, 1);
  CHECK(state.next(kStart, "timeout").retry);
  CHECK(state.next(kStart, "").retry);
  CHECK(state.next(kStart, "anything at all").retry);
}

TEST_CASE("retryOn retries only the errors it names") {
  auto o = fixedOneSecond();
  o.retryOn = {"timeout", "refused"};
  RetryState state(o, kStart, 1);
  checkGranted(state.next(kStart, "timeout"), 1, 1s);
  checkGranted(state.next(kStart, "refused"), 2, 1s);
  checkRefused(state.next(kStart, "reset"), GiveUp::NotRetryable, 3);
  checkRefused(state.next(kStart, "Timeout"), GiveUp::NotRetryable, 3);  // case-sensitive
  checkRefused(state.next(kStart, ""), GiveUp::NotRetryable, 3);
  CHECK(state.attempts() == 2);
}

TEST_CASE("ignore refuses the errors it names and retries the others") {
  auto o = fixedOneSecond();
  o.ignore = {"auth"};
  RetryState state(o, kStart, 1);
  checkRefused(state.next(kStart, "auth"), GiveUp::NotRetryable, 1);
  checkGranted(state.next(kStart, "timeout"), 1, 1s);
}

TEST_CASE("ignore wins over retryOn for an error both name") {
  auto o = fixedOneSecond();
  o.retryOn = {"timeout", "refused"};
  o.ignore = {"refused"};
  RetryState state(o, kStart, 1);
  checkRefused(state.next(kStart, "refused"), GiveUp::NotRetryable, 1);
  checkGranted(state.next(kStart, "timeout"), 1, 1s);
}

TEST_CASE("a not retryable error is reported before max attempts and the deadline") {
  auto o = withMaxAttempts(0);
  o.ignore = {"auth"};
  o.deadline = 1ns;
  RetryState state(o, kStart, 1);
  checkRefused(state.next(kStart + 1h, "auth"), GiveUp::NotRetryable, 1);
  checkRefused(state.next(kStart + 1h, "io"), GiveUp::MaxAttempts, 1);
}

TEST_CASE("max attempts is reported before the deadline") {
  auto o = withMaxAttempts(1);
  o.deadline = 2s;
  RetryState state(o, kStart, 1);
  checkGranted(state.next(kStart, "io"), 1, 1s);
  checkRefused(state.next(kStart + 1h, "io"), GiveUp::MaxAttempts, 2);
}

TEST_CASE("reset starts the attempts the backoff and the deadline over") {
  auto o = exponential(1s, 2.0, 60s);
  o.maxAttempts = 3;
  o.deadline = 10s;
  RetryState state(o, kStart, 1);
  checkGranted(state.next(kStart, "io"), 1, 1s);
  checkGranted(state.next(kStart, "io"), 2, 2s);
  checkGranted(state.next(kStart, "io"), 3, 4s);
  checkRefused(state.next(kStart, "io"), GiveUp::MaxAttempts, 4);

  const ns later = kStart + 1h;  // far past the first deadline
  state.reset(later);
  CHECK(state.attempts() == 0);
  CHECK(state.start() == later);
  checkGranted(state.next(later + 9s, "io"), 1, 1s);  // lands exactly on the new deadline
  checkRefused(state.next(later + 9s, "io"), GiveUp::Deadline, 2);
}

TEST_CASE("reset returns decorrelated jitter to initialDelay") {
  const auto o = withJitter(Jitter::Decorrelated);
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    RetryState state(o, kStart, seed);
    for (int i = 0; i < 20; ++i) (void)state.next(kStart, "io");
    state.reset(kStart);
    const ns d = state.next(kStart, "io").delay;
    REQUIRE(d >= 1s);
    REQUIRE(d <= 3s);
  }
}

TEST_CASE("reset continues the random sequence without re-seeding") {
  const auto o = withJitter(Jitter::Full);
  RetryState a(o, kStart, 5);
  RetryState b(o, kStart, 5);
  const ns first = a.next(kStart, "io").delay;
  CHECK(b.next(kStart, "io").delay == first);
  a.reset(kStart);
  b.reset(kStart);
  const ns secondA = a.next(kStart, "io").delay;
  CHECK(b.next(kStart, "io").delay == secondA);  // same calls, same delays
  RetryState fresh(o, kStart, 5);
  CHECK(fresh.next(kStart, "io").delay == first);
  CHECK(secondA != first);  // attempt 1 again, but the next draw of the sequence
}

TEST_CASE("the state keeps a copy of its options") {
  auto o = withMaxAttempts(2);
  RetryState state(o, kStart, 1);
  o.maxAttempts = 0;
  CHECK(state.options().maxAttempts == 2);
  CHECK(state.next(kStart, "io").retry);
}

TEST_CASE("giveUpName names every reason") {
  CHECK(giveUpName(GiveUp::None) == "none");
  CHECK(giveUpName(GiveUp::NotRetryable) == "not-retryable");
  CHECK(giveUpName(GiveUp::MaxAttempts) == "max-attempts");
  CHECK(giveUpName(GiveUp::Deadline) == "deadline");
  CHECK(giveUpName(GiveUp::BudgetExhausted) == "budget-exhausted");
  CHECK(giveUpName(static_cast<GiveUp>(99)) == "unknown");
}

}  // TEST_SUITE("tasks")
