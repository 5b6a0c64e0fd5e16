// CallMachine: Dubbo's cluster modes, the deadline, attempt timeouts, hedging and the budget, on
// explicit times with a fake context; and a randomised run of every mode in which each call ends
// exactly once and nothing answers after the end.
#include "support.h"

#include <wheelbeat/tasks/cluster/call_machine.h>
#include <wheelbeat/tasks/small_rng.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using std::chrono::nanoseconds;
using namespace wheelbeat::tasks::cluster;
using cluster_test::failed;
using cluster_test::FakeContext;
using cluster_test::ok;
using wheelbeat::tasks::SmallRng;

namespace {

CallPolicy policy(Mode mode) {
  CallPolicy p;
  p.mode = mode;
  return p;
}

}  // namespace

TEST_SUITE("cluster") {
TEST_CASE("call: failover retries a retryable failure on another provider, up to retries") {
  FakeContext ctx(5);
  CallMachine call(policy(Mode::Failover));  // retries = 2
  Step s = call.start(ctx, 0ms);
  REQUIRE(s.sends.size() == 1);
  CHECK(s.sends[0].provider == 1);
  CHECK(s.sends[0].timeout == 1s);
  s = call.onAnswer(ctx, 0, failed("timeout"), 100ms);
  REQUIRE(s.sends.size() == 1);
  CHECK(s.sends[0].provider == 2);
  CHECK(s.sends[0].kind == AttemptKind::Retry);
  CHECK(s.sends[0].timeout == 900ms);  // the time left
  s = call.onAnswer(ctx, 1, failed("disconnected"), 150ms);
  REQUIRE(s.sends.size() == 1);
  CHECK(s.sends[0].provider == 3);
  s = call.onAnswer(ctx, 2, failed("overloaded"), 200ms);
  CHECK(s.sends.empty());
  REQUIRE(s.result);
  CHECK_FALSE(s.result->ok);
  CHECK(s.result->error == "overloaded");
  CHECK(s.result->provider == 3u);
  CHECK(s.result->attempts == 3);
  CHECK(s.result->latency == 200ms);
  CHECK(ctx.retries == 2);
  CHECK(call.finished());
}

TEST_CASE("call: failover never retries an application's error") {
  for (const char* error : {"rejected", "bad-request", "exception", "failback-rejected"}) {
    FakeContext ctx(3);
    CallMachine call(policy(Mode::Failover));
    (void)call.start(ctx, 0ms);
    const Step s = call.onAnswer(ctx, 0, failed(error), 1ms);
    CHECK(s.sends.empty());
    REQUIRE(s.result);
    CHECK(s.result->error == error);
    CHECK(s.result->attempts == 1);
    CHECK(ctx.retries == 0);
  }
  CHECK(retryable("timeout"));
  CHECK(retryable("no-endpoint"));
  CHECK_FALSE(retryable("rejected"));
}

TEST_CASE("call: a retry needs the budget's token") {
  FakeContext ctx(3);
  ctx.tokens = 0;
  CallMachine call(policy(Mode::Failover));
  (void)call.start(ctx, 0ms);
  const Step s = call.onAnswer(ctx, 0, failed("timeout"), 1ms);
  CHECK(s.sends.empty());
  REQUIRE(s.result);
  CHECK(s.result->error == "timeout");
  CHECK(ctx.refused == 1);
}

TEST_CASE("call: failfast, failsafe and failback make one attempt") {
  FakeContext ctx(3);
  CallMachine fast(policy(Mode::Failfast));
  (void)fast.start(ctx, 0ms);
  Step s = fast.onAnswer(ctx, 0, failed("timeout"), 1ms);
  REQUIRE(s.result);
  CHECK_FALSE(s.result->ok);
  CHECK(s.sends.empty());

  CallMachine safe(policy(Mode::Failsafe));
  (void)safe.start(ctx, 0ms);
  s = safe.onAnswer(ctx, 0, failed("rejected"), 1ms);
  REQUIRE(s.result);
  CHECK(s.result->ok);
  CHECK(s.result->failsafe);
  CHECK(s.result->error == "rejected");

  CallMachine back(policy(Mode::Failback));
  (void)back.start(ctx, 0ms);
  s = back.onAnswer(ctx, 0, failed("timeout"), 1ms);
  REQUIRE(s.result);
  CHECK(s.result->ok);
  CHECK(s.result->failback);
  CHECK_FALSE(s.result->failsafe);
  CHECK(ctx.retries == 0);
}

TEST_CASE("call: no provider at all ends at once with no-endpoint") {
  FakeContext none(0);
  CallMachine call(policy(Mode::Failover));
  const Step s = call.start(none, 0ms);
  CHECK(s.sends.empty());
  REQUIRE(s.result);
  CHECK(s.result->error == "no-endpoint");
  CHECK_FALSE(s.result->provider.has_value());
  CallMachine safe(policy(Mode::Failsafe));
  CHECK(safe.start(none, 0ms).result->ok);
  CHECK_THROWS_AS((void)call.start(none, 0ms), std::logic_error);
}

TEST_CASE("call: forking sends to distinct providers, the first success wins, the rest drop") {
  FakeContext ctx(5);
  CallPolicy p = policy(Mode::Forking);
  p.forks = 3;
  CallMachine call(p);
  Step s = call.start(ctx, 0ms);
  REQUIRE(s.sends.size() == 3);
  CHECK(s.sends[0].provider == 1);
  CHECK(s.sends[1].provider == 2);
  CHECK(s.sends[2].provider == 3);
  s = call.onAnswer(ctx, 1, failed("timeout"), 5ms);
  CHECK_FALSE(s.result);
  s = call.onAnswer(ctx, 2, ok(), 6ms);
  REQUIRE(s.result);
  CHECK(s.result->ok);
  CHECK(s.result->provider == 3u);
  CHECK(s.dropped == std::vector<std::uint32_t>{0});
  CHECK(call.onAnswer(ctx, 0, ok(), 7ms).late);
  // Two providers for three forks: two attempts; both fail: failed.
  FakeContext two(2);
  CallMachine small(p);
  CHECK(small.start(two, 0ms).sends.size() == 2);
  CHECK_FALSE(small.onAnswer(two, 0, failed("timeout"), 1ms).result);
  s = small.onAnswer(two, 1, failed("disconnected"), 2ms);
  REQUIRE(s.result);
  CHECK(s.result->error == "disconnected");
}

TEST_CASE("call: broadcast is ok only when every provider answered ok") {
  FakeContext ctx(3);
  CallMachine call(policy(Mode::Broadcast));
  Step s = call.start(ctx, 0ms);
  CHECK(s.sends.size() == 3);
  CHECK_FALSE(call.onAnswer(ctx, 2, ok(), 1ms).result);
  CHECK_FALSE(call.onAnswer(ctx, 0, failed("rejected"), 2ms).result);
  s = call.onAnswer(ctx, 1, ok(), 3ms);
  REQUIRE(s.result);
  CHECK_FALSE(s.result->ok);
  CHECK(s.result->error == "rejected");
  CHECK(s.result->provider == 1u);
  CallMachine all(policy(Mode::Broadcast));
  (void)all.start(ctx, 0ms);
  (void)all.onAnswer(ctx, 0, ok(), 1ms);
  (void)all.onAnswer(ctx, 1, ok(), 1ms);
  CHECK(all.onAnswer(ctx, 2, ok(), 1ms).result->ok);
}

TEST_CASE("call: the deadline ends the call with timeout and drops what is in flight") {
  FakeContext ctx(3);
  CallPolicy p = policy(Mode::Failover);
  p.deadline = 500ms;
  p.attemptTimeout = 200ms;
  CallMachine call(p);
  Step s = call.start(ctx, 0ms);
  CHECK(s.sends[0].timeout == 200ms);
  CHECK(s.wakeAt == 500ms);
  s = call.onAnswer(ctx, 0, failed("timeout"), 400ms);
  REQUIRE(s.sends.size() == 1);
  CHECK(s.sends[0].timeout == 100ms);  // the time left is less than attemptTimeout
  CHECK(call.onWake(ctx, 499ms).result == std::nullopt);
  s = call.onWake(ctx, 500ms);
  REQUIRE(s.result);
  CHECK(s.result->error == "timeout");
  CHECK(s.result->attempts == 2);
  CHECK(s.dropped == std::vector<std::uint32_t>{1});
  CHECK(call.onAnswer(ctx, 1, ok(), 501ms).late);
  CHECK_FALSE(call.onWake(ctx, 600ms).result);
  CHECK_THROWS_AS((void)call.onAnswer(ctx, 5, ok(), 600ms), std::invalid_argument);
}

TEST_CASE("call: a hedge goes to another provider after the delay and may win") {
  FakeContext ctx(3);
  ctx.hedgeAfter = 20ms;
  CallPolicy p = policy(Mode::Failover);
  p.hedge = true;
  CallMachine call(p);
  Step s = call.start(ctx, 0ms);
  CHECK(s.wakeAt == 20ms);
  s = call.onWake(ctx, 20ms);
  REQUIRE(s.sends.size() == 1);
  CHECK(s.sends[0].kind == AttemptKind::Hedge);
  CHECK(s.sends[0].provider == 2);
  CHECK(s.wakeAt == 1s);  // one hedge per call: the deadline is next
  s = call.onAnswer(ctx, 1, ok(), 25ms);
  REQUIRE(s.result);
  CHECK(s.result->hedgeWon);
  CHECK(s.result->provider == 2u);
  CHECK(s.dropped == std::vector<std::uint32_t>{0});
  CHECK(call.onAnswer(ctx, 0, ok(), 30ms).late);  // the loser's answer is never delivered
  CHECK(ctx.hedges == 1);
}

TEST_CASE("call: no token, no hedge - one provider, no hedge") {
  FakeContext ctx(3);
  ctx.hedgeAfter = 20ms;
  ctx.tokens = 0;
  CallPolicy p = policy(Mode::Failfast);
  p.hedge = true;
  CallMachine call(p);
  (void)call.start(ctx, 0ms);
  CHECK(call.onWake(ctx, 20ms).sends.empty());
  CHECK(ctx.refused == 1);
  FakeContext one(1);
  one.hedgeAfter = 20ms;
  CallMachine alone(p);
  (void)alone.start(one, 0ms);
  CHECK(alone.onWake(one, 20ms).sends.empty());
  CHECK(one.hedges == 0);
}

TEST_CASE("call: a failed first attempt waits for the hedge still in flight") {
  FakeContext ctx(3);
  ctx.hedgeAfter = 10ms;
  CallPolicy p = policy(Mode::Failfast);
  p.hedge = true;
  CallMachine call(p);
  (void)call.start(ctx, 0ms);
  (void)call.onWake(ctx, 10ms);
  CHECK_FALSE(call.onAnswer(ctx, 0, failed("timeout"), 11ms).result);
  const Step s = call.onAnswer(ctx, 1, ok(), 12ms);
  REQUIRE(s.result);
  CHECK(s.result->ok);
  CHECK(s.result->hedgeWon);
}

TEST_CASE("call: policies are checked") {
  CallPolicy p;
  p.forks = 0;
  CHECK_THROWS_WITH_AS(CallMachine{p}, "CallPolicy.forks = 0 (expected: 1..100)",
                       std::invalid_argument);
  p = {};
  p.deadline = 0ms;
  CHECK_THROWS_WITH_AS(CallMachine{p}, "CallPolicy.deadline = 0s (expected: > 0)",
                       std::invalid_argument);
  p = policy(Mode::Broadcast);
  p.hedge = true;
  CHECK_THROWS_WITH_AS(CallMachine{p},
                       "CallPolicy.hedge = true with mode broadcast (expected: hedging with "
                       "failover or failfast only)",
                       std::invalid_argument);
}

// Properties over random interleavings of answers (ok, retryable, application errors), hedge
// delays, attempt timeouts and deadlines, in every mode:
//   - each call ends exactly once (never zero, never two), and nothing is sent after its end;
//   - the deciding answer is one that came, never a dropped attempt's (a hedge loser's answer is
//     never delivered), and every answer after the end is late;
//   - extra attempts (retries, hedges) never exceed the tokens the budget gave (none: none);
//   - failover never retries an application's error.
TEST_CASE("call: random interleavings in every mode end each call exactly once") {
  SmallRng rng(2024);
  const char* errors[] = {"timeout", "disconnected", "overloaded", "rejected", "bad-request"};
  int totalExtras = 0;
  int hedgeWins = 0;
  int lateChecked = 0;
  int suspectRetries = 0;
  for (int round = 0; round < 3000; ++round) {
    FakeContext ctx(rng() % 5);  // 0..4 providers
    const int tokens = static_cast<int>(rng() % 3);
    ctx.tokens = tokens;
    ctx.hedgeAfter = std::chrono::milliseconds(rng() % 50);
    CallPolicy p;
    p.mode = static_cast<Mode>(rng() % 6);
    p.retries = static_cast<std::uint32_t>(rng() % 4);
    p.forks = 1 + static_cast<std::uint32_t>(rng() % 3);
    p.deadline = std::chrono::milliseconds(50 + rng() % 200);
    p.attemptTimeout = std::chrono::milliseconds(rng() % 2 == 0 ? 0 : 10 + rng() % 100);
    p.hedge = (p.mode == Mode::Failover || p.mode == Mode::Failfast) && rng() % 2 == 0;
    CallMachine call(p);
    int results = 0;
    int extras = 0;
    std::vector<std::uint32_t> inFlight;
    std::vector<std::uint32_t> answered;
    std::optional<nanoseconds> wake;
    std::uint32_t sent = 0;
    const auto take = [&](const Step& s) {
      REQUIRE((results == 0 || (s.sends.empty() && !s.result)));
      for (const Attempt& a : s.sends) {
        CHECK(a.index == sent++);
        CHECK(a.timeout > 0ns);
        CHECK(a.timeout <= p.deadline);
        if (p.attemptTimeout > 0ns) CHECK(a.timeout <= p.attemptTimeout);
        extras += a.kind == AttemptKind::First ? 0 : 1;
        inFlight.push_back(a.index);
      }
      if (s.result) {
        ++results;
        for (const std::uint32_t d : s.dropped) {
          CHECK(std::find(inFlight.begin(), inFlight.end(), d) != inFlight.end());
        }
        if (s.result->attempt) {
          CHECK(std::find(answered.begin(), answered.end(), *s.result->attempt) != answered.end());
        }
        CHECK(s.result->attempts == sent);
        hedgeWins += s.result->hedgeWon ? 1 : 0;
      }
      if (s.wakeAt || s.result) wake = s.wakeAt;  // a step without one keeps the last
    };
    nanoseconds now = 0ms;
    take(call.start(ctx, now));
    for (int step = 0; step < 100 && results == 0; ++step) {
      now += std::chrono::milliseconds(rng() % 30);
      if (!inFlight.empty() && rng() % 4 == 0) {  // its provider became suspect
        const std::uint32_t index = inFlight[rng() % inFlight.size()];
        const Step s = call.onSuspect(ctx, index, now);
        for (const Attempt& a : s.sends) CHECK(a.kind == AttemptKind::Retry);
        suspectRetries += static_cast<int>(s.sends.size());
        take(s);
      } else if (!inFlight.empty() && rng() % 3 != 0) {
        const std::size_t i = rng() % inFlight.size();
        const std::uint32_t index = inFlight[i];
        inFlight.erase(inFlight.begin() + static_cast<std::ptrdiff_t>(i));
        answered.push_back(index);
        const AttemptOutcome outcome = rng() % 3 == 0 ? ok() : failed(errors[rng() % 5]);
        const Step s = call.onAnswer(ctx, index, outcome, now);
        if (p.mode == Mode::Failover && !outcome.ok && !retryable(outcome.error)) {
          for (const Attempt& a : s.sends) CHECK(a.kind != AttemptKind::Retry);
        }
        take(s);
      } else if (wake) {
        now = std::max(now, *wake);
        take(call.onWake(ctx, now));
      }
    }
    CHECK(results == 1);  // never zero, never two
    CHECK(call.finished());
    CHECK(extras <= tokens);
    CHECK(extras == ctx.retries + ctx.hedges);
    totalExtras += extras;
    for (const std::uint32_t index : inFlight) {
      CHECK(call.onAnswer(ctx, index, ok(), now).late);
      ++lateChecked;
    }
  }
  // The properties were exercised, not vacuous.
  CHECK(totalExtras > 100);
  CHECK(hedgeWins > 10);
  CHECK(lateChecked > 500);
  CHECK(suspectRetries > 20);
}
}  // TEST_SUITE("cluster")
