// CallMachine::onSuspect: a failover call whose only attempt waits on a provider that became
// suspect is retried elsewhere at once, once, within its retries and the budget; the suspected
// attempt stays in flight and may still win.
#include "support.h"

#include <wheelbeat/tasks/cluster/call_machine.h>

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <vector>

using namespace std::chrono_literals;
using namespace wheelbeat::tasks::cluster;
using cluster_test::failed;
using cluster_test::FakeContext;
using cluster_test::ok;

namespace {

CallPolicy failover() { return CallPolicy{}; }  // failover, retries 2, deadline 1 s

}  // namespace

TEST_SUITE("cluster") {
TEST_CASE("suspect: the call goes to another provider at once with the time left") {
  FakeContext ctx(3);
  CallMachine call(failover());
  (void)call.start(ctx, 0ms);
  const Step s = call.onSuspect(ctx, 0, 30ms);
  REQUIRE(s.sends.size() == 1);
  CHECK(s.sends[0].provider == 2);
  CHECK(s.sends[0].kind == AttemptKind::Retry);
  CHECK(s.sends[0].timeout == 970ms);
  CHECK(s.wakeAt == 1s);
  CHECK_FALSE(s.result);
  CHECK(ctx.retries == 1);
  CHECK(call.inFlight() == 2);
}

TEST_CASE("suspect: the first success of the two wins and the other is dropped") {
  for (const std::uint32_t winner : {0U, 1U}) {
    FakeContext ctx(3);
    CallMachine call(failover());
    (void)call.start(ctx, 0ms);
    (void)call.onSuspect(ctx, 0, 30ms);
    const Step s = call.onAnswer(ctx, winner, ok(), 40ms);
    REQUIRE(s.result);
    CHECK(s.result->ok);
    CHECK(s.result->attempt == winner);
    CHECK(s.result->attempts == 2);
    CHECK(s.dropped == std::vector<std::uint32_t>{1 - winner});
    CHECK(call.onAnswer(ctx, 1 - winner, ok(), 50ms).late);
  }
}

TEST_CASE("suspect: the suspected attempt's failure waits for the retry in flight") {
  FakeContext ctx(3);
  CallMachine call(failover());
  (void)call.start(ctx, 0ms);
  (void)call.onSuspect(ctx, 0, 30ms);
  const Step failedFirst = call.onAnswer(ctx, 0, failed("timeout"), 40ms);
  CHECK_FALSE(failedFirst.result);
  REQUIRE(failedFirst.sends.size() == 1);  // the one retry left goes too
  CHECK(failedFirst.sends[0].provider == 3);
  const Step s = call.onAnswer(ctx, 1, ok(), 45ms);
  REQUIRE(s.result);
  CHECK(s.result->ok);
  CHECK(ctx.retries == 2);
}

TEST_CASE("suspect: once per attempt and nothing when retries or the budget are spent") {
  FakeContext ctx(3);
  CallMachine call(failover());
  (void)call.start(ctx, 0ms);
  CHECK(call.onSuspect(ctx, 0, 30ms).sends.size() == 1);
  CHECK(call.onSuspect(ctx, 0, 35ms).sends.empty());  // suspected already
  CHECK(call.onSuspect(ctx, 1, 36ms).sends.empty());  // not alone: attempt 0 still races it

  FakeContext noToken(3);
  noToken.tokens = 0;
  CallMachine poor(failover());
  (void)poor.start(noToken, 0ms);
  const Step refused = poor.onSuspect(noToken, 0, 30ms);
  CHECK(refused.sends.empty());
  CHECK_FALSE(refused.wakeAt);  // nothing changed: the wake-up armed before stays
  CHECK(noToken.refused == 1);

  FakeContext plenty(3);
  CallPolicy none = failover();
  none.retries = 0;
  CallMachine noRetries(none);
  (void)noRetries.start(plenty, 0ms);
  CHECK(noRetries.onSuspect(plenty, 0, 30ms).sends.empty());
  CHECK(plenty.picks == 1);  // not even a choice was made
}

TEST_CASE("suspect: only failover acts - never on the same provider - an unknown index throws") {
  for (const Mode mode : {Mode::Failfast, Mode::Failsafe, Mode::Failback, Mode::Forking}) {
    FakeContext ctx(3);
    CallPolicy p;
    p.mode = mode;
    p.forks = 1;
    CallMachine call(p);
    (void)call.start(ctx, 0ms);
    CHECK(call.onSuspect(ctx, 0, 30ms).sends.empty());
    CHECK(ctx.retries == 0);
  }
  FakeContext alone(1);  // the only provider is the suspect: no retry to it
  CallMachine call(failover());
  (void)call.start(alone, 0ms);
  CHECK(call.onSuspect(alone, 0, 30ms).sends.empty());
  CHECK(call.inFlight() == 1);
  CHECK_THROWS_AS((void)call.onSuspect(alone, 5, 31ms), std::invalid_argument);
}

TEST_CASE("suspect: an ended call sends nothing") {
  FakeContext ctx(3);
  CallMachine call(failover());
  (void)call.start(ctx, 0ms);
  (void)call.onAnswer(ctx, 0, ok(), 1ms);
  const Step s = call.onSuspect(ctx, 0, 30ms);
  CHECK(s.sends.empty());
  CHECK_FALSE(s.result);
}
}  // TEST_SUITE("cluster")
