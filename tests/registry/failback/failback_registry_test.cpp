// FailbackRegistry on a manual clock (10 ms ticks) over a scripted backend: Dubbo's failback
// rules (one entry per key, cancel by the opposite or the same call, recover()), plus give-up
// removal, check=true, superseded results, stop() and destruction, and the decision lines it logs.
#include "../../log_capture.h"
#include "fake_backend.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace wbtest;
using wheelbeat::core::LogLevel;
using Lines = std::vector<std::string>;

namespace {

FailbackOptions retrying(std::int64_t maxAttempts = -1) {
  FailbackOptions o;
  o.check = false;
  o.registryRetry.maxAttempts = maxAttempts;  // 5 s fixed, no jitter (Dubbo's period)
  return o;
}

struct RegistryRig {
  Rig rig;
  std::shared_ptr<FakeBackend> backend = std::make_shared<FakeBackend>();
  std::shared_ptr<RecordingFailbackListener> listener =
      std::make_shared<RecordingFailbackListener>();
  std::shared_ptr<FailbackMetrics> metrics = std::make_shared<FailbackMetrics>();
  std::unique_ptr<FailbackRegistry> registry;

  explicit RegistryRig(FailbackOptions o = retrying(),
                       std::shared_ptr<RetryBudget> budget = nullptr) {
    registry = std::make_unique<FailbackRegistry>(rig.timer(), backend, o, listener, metrics,
                                                  std::move(budget), 42);
  }
  FailbackMetricsSnapshot counts() const { return metrics->snapshot(); }
};

std::vector<std::string> keysOf(const std::vector<PendingRetry>& pending) {
  std::vector<std::string> out;
  for (const auto& p : pending) {
    out.push_back(fmt::format("{} {} {}", failbackOpName(p.op), p.key, p.attempts));
  }
  return out;
}

// A register that fails once (registry down), then succeeds on its retry 5 s later.
Lines decisionLog(LogLevel level) {
  LevelLogCapture log(level);
  Rig rig;
  auto backend = std::make_shared<FakeBackend>();
  FailbackOptions o;
  o.check = false;
  FailbackRegistry registry(rig.timer(), backend, o, nullptr, nullptr, nullptr, 42);
  backend->setDown(true);
  registry.registerUrl("dubbo://192.0.2.1:20880/Echo", nullptr);
  backend->setDown(false);
  rig.runUntil(6s);
  CHECK(registry.pendingRetryCount() == 0);
  registry.stop();
  return log.lines();
}

}  // namespace

TEST_SUITE("registry") {

TEST_CASE("failback registry: a successful register keeps nothing pending") {
  RegistryRig r;
  Outcomes out;
  r.registry->registerUrl("a", out.sink());
  CHECK(r.backend->calls() == std::vector<std::string>{"register a"});
  CHECK(r.registry->registered() == std::vector<std::string>{"a"});
  CHECK(r.registry->pendingRetryCount() == 0);
  REQUIRE(out.seen.size() == 1);
  CHECK(out.seen[0].ok);
  CHECK(r.rig.pending() == 0);
}

TEST_CASE("failback registry: a failed register is retried after 5s and recovers") {
  RegistryRig r;
  r.backend->script({down()});
  Outcomes out;
  r.registry->registerUrl("a", out.sink());
  REQUIRE(out.seen.size() == 1);
  CHECK_FALSE(out.seen[0].ok);
  CHECK(out.seen[0].retrying);
  CHECK(out.seen[0].error == "disconnected");
  CHECK(keysOf(r.registry->pendingRetries()) == std::vector<std::string>{"register a 1"});
  r.rig.runUntil(5s - 10ms);
  CHECK(r.backend->callCount() == 1);  // not before the retry period
  r.rig.runUntil(5s);
  CHECK(r.backend->callCount() == 2);
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.backend->urls() == std::set<std::string>{"a"});
  CHECK(r.listener->events() ==
        std::vector<std::string>{"scheduled register a #1 5000", "recovered register a 1"});
  CHECK(r.counts() == FailbackMetricsSnapshot{1, 1, 1, 0, 0, 0, 0});
  CHECK(out.seen.size() == 1);  // the completion reports the first attempt only
  CHECK(r.rig.pending() == 0);
}

TEST_CASE("failback registry: retries forever by default with attempts counted from 1") {
  RegistryRig r;
  r.backend->setDown(true);
  r.registry->registerUrl("a");
  r.rig.runUntil(60s);
  CHECK(r.backend->callCount() == 13);  // the call + a retry every 5 s
  const auto events = r.listener->events();
  REQUIRE(events.size() == 13);
  CHECK(events.front() == "scheduled register a #1 5000");
  CHECK(events.back() == "scheduled register a #13 5000");
  CHECK(keysOf(r.registry->pendingRetries()) == std::vector<std::string>{"register a 13"});
  r.backend->setDown(false);
  r.rig.runUntil(65s);
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.listener->events().back() == "recovered register a 13");
}

TEST_CASE("failback registry: the opposite call cancels the pending retry") {
  RegistryRig r;
  r.backend->script({down()});
  r.registry->registerUrl("a");
  REQUIRE(r.registry->pendingRetryCount() == 1);
  r.registry->unregisterUrl("a");
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.registry->registered().empty());
  CHECK(r.rig.pending() == 0);  // the wheel timeout was cancelled too
  r.rig.runUntil(20s);
  CHECK(r.backend->calls() == std::vector<std::string>{"register a", "unregister a"});
  CHECK(r.counts().cancelled == 1);
}

TEST_CASE("failback registry: a failed unregister is cancelled by a new register") {
  RegistryRig r;
  r.registry->registerUrl("a");
  r.backend->script({down()});
  r.registry->unregisterUrl("a");
  CHECK(keysOf(r.registry->pendingRetries()) == std::vector<std::string>{"unregister a 1"});
  r.registry->registerUrl("a");
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.registry->registered() == std::vector<std::string>{"a"});
  r.rig.runUntil(20s);
  CHECK(r.backend->callCount() == 3);
}

TEST_CASE("failback registry: the same call again replaces the pending retry") {
  RegistryRig r;
  r.backend->script({down(), down()});
  r.registry->registerUrl("a");
  r.rig.runUntil(3s);
  r.registry->registerUrl("a");  // fails again: a fresh entry, attempt 1 from now
  CHECK(keysOf(r.registry->pendingRetries()) == std::vector<std::string>{"register a 1"});
  CHECK(r.counts().cancelled == 1);
  r.rig.runUntil(7s);
  CHECK(r.backend->callCount() == 2);  // the first entry's retry (due at 5 s) never ran
  r.rig.runUntil(8s);
  CHECK(r.backend->callCount() == 3);
  CHECK(r.registry->pendingRetryCount() == 0);
}

TEST_CASE("failback registry: give-up after maxAttempts removes the entry and reports it") {
  RegistryRig r(retrying(3));
  r.backend->setDown(true);
  r.registry->registerUrl("a");
  r.rig.runUntil(15s);
  CHECK(r.backend->callCount() == 4);
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.rig.pending() == 0);
  CHECK(r.listener->events().back() == "gave-up register a max-attempts disconnected");
  CHECK(r.counts() == FailbackMetricsSnapshot{4, 3, 0, 0, 1, 0, 0});
  CHECK(r.registry->registered() == std::vector<std::string>{"a"});  // still wanted
  r.rig.runUntil(60s);
  CHECK(r.backend->callCount() == 4);
}

TEST_CASE("failback registry: maxAttempts 0 gives up at the first failure") {
  RegistryRig r(retrying(0));
  r.backend->script({down()});
  Outcomes out;
  r.registry->registerUrl("a", out.sink());
  REQUIRE(out.seen.size() == 1);
  CHECK_FALSE(out.seen[0].retrying);
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.listener->events() ==
        std::vector<std::string>{"gave-up register a max-attempts disconnected"});
}

TEST_CASE("failback registry: the deadline ends the retries") {
  FailbackOptions o = retrying();
  o.registryRetry.deadline = 12s;
  RegistryRig r(o);
  r.backend->setDown(true);
  r.registry->registerUrl("a");
  r.rig.runUntil(30s);
  CHECK(r.backend->callCount() == 3);  // t = 0, 5, 10; a retry at 15 s would pass 12 s
  CHECK(r.listener->events().back() == "gave-up register a deadline disconnected");
}

TEST_CASE("failback registry: the shared budget stops retries and is counted") {
  RetryBudgetOptions bo;
  bo.ratio = 0;
  bo.minRetriesPerSecond = 1;  // one token, refilled at 1/s
  RegistryRig r(retrying(), std::make_shared<RetryBudget>(bo));
  r.backend->setDown(true);
  r.registry->registerUrl("a");
  r.registry->registerUrl("b");
  CHECK(keysOf(r.registry->pendingRetries()) == std::vector<std::string>{"register a 1"});
  CHECK(r.listener->events() ==
        std::vector<std::string>{"scheduled register a #1 5000",
                                 "gave-up register b budget-exhausted disconnected"});
  CHECK(r.counts().budgetExhausted == 1);
  CHECK(r.counts().giveUps == 1);
}

TEST_CASE("failback registry: an ignored error is not retried") {
  FailbackOptions o = retrying();
  o.registryRetry.ignore = {"forbidden"};
  RegistryRig r(o);
  r.backend->script({CallResult::failure("forbidden", "no rights")});
  Outcomes out;
  r.registry->registerUrl("a", out.sink());
  CHECK_FALSE(out.seen.at(0).retrying);
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.listener->events() ==
        std::vector<std::string>{"gave-up register a not-retryable forbidden"});
}

TEST_CASE("failback registry: check=true reports the first failure and changes nothing") {
  FailbackOptions o = retrying();
  o.check = true;
  RegistryRig r(o);
  r.backend->script({down()});
  Outcomes out;
  r.registry->registerUrl("a", out.sink());
  REQUIRE(out.seen.size() == 1);
  CHECK_FALSE(out.seen[0].ok);
  CHECK_FALSE(out.seen[0].retrying);
  CHECK(r.registry->registered().empty());
  CHECK(r.registry->pendingRetryCount() == 0);
  r.registry->registerUrl("a");
  r.backend->script({down()});
  r.registry->unregisterUrl("a");  // fails: "a" stays registered
  CHECK(r.registry->registered() == std::vector<std::string>{"a"});
  r.rig.runUntil(20s);
  CHECK(r.backend->callCount() == 3);
}

TEST_CASE("failback registry: recover re-sends every registration and subscription") {
  RegistryRig r;
  auto l1 = std::make_shared<NullNotify>();
  r.registry->registerUrl("a");
  r.registry->registerUrl("b");
  r.registry->subscribe("svc", l1);
  r.backend->forget();
  r.registry->recover();
  CHECK(r.registry->pendingRetryCount() == 3);
  r.rig.runUntil(10ms);  // the next tick
  CHECK(r.backend->calls() == std::vector<std::string>{"register a", "register b", "subscribe svc",
                                                       "register a", "register b",
                                                       "subscribe svc"});
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.backend->urls() == std::set<std::string>{"a", "b"});
}

TEST_CASE("failback registry: recover while the registry is still down keeps retrying") {
  RegistryRig r;
  r.registry->registerUrl("a");
  r.backend->setDown(true);
  r.registry->recover();
  r.rig.runUntil(10ms);
  CHECK(keysOf(r.registry->pendingRetries()) == std::vector<std::string>{"register a 1"});
  r.backend->setDown(false);
  r.rig.runUntil(5010ms);
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.backend->callCount() == 3);
}

TEST_CASE("failback registry: a superseded in-flight result queues nothing") {
  RegistryRig r;
  r.backend->setDeferred(true);
  Outcomes out;
  r.registry->registerUrl("a", out.sink());
  r.registry->unregisterUrl("a");
  r.backend->complete(0, down());  // the register failed, but unregister came after it
  CHECK(r.registry->pendingRetryCount() == 0);
  REQUIRE(out.seen.size() == 1);
  CHECK_FALSE(out.seen[0].retrying);
  r.backend->complete(1, CallResult::success());
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK(r.registry->registered().empty());
}

TEST_CASE("failback registry: subscriptions are keyed by service and listener") {
  RegistryRig r;
  auto l1 = std::make_shared<NullNotify>();
  auto l2 = std::make_shared<NullNotify>();
  r.backend->script({down(), down()});
  r.registry->subscribe("svc", l1);
  r.registry->subscribe("svc", l2);
  CHECK(r.registry->pendingRetryCount() == 2);
  r.registry->unsubscribe("svc", l1);
  const auto pending = r.registry->pendingRetries();
  REQUIRE(pending.size() == 1);
  CHECK(pending[0].listener == l2);
  CHECK(r.registry->subscribed().size() == 1);
  CHECK_THROWS_AS(r.registry->subscribe("svc", nullptr), std::invalid_argument);
}

TEST_CASE("failback registry: a backend that throws counts as a failure") {
  RegistryRig r;
  r.backend->setThrows(true);
  Outcomes out;
  r.registry->registerUrl("a", out.sink());
  REQUIRE(out.seen.size() == 1);
  CHECK(out.seen[0].error == "exception");
  CHECK(out.seen[0].message == "backend exploded");
  CHECK(r.registry->pendingRetryCount() == 1);
  r.backend->setThrows(false);
  r.rig.runUntil(5s);
  CHECK(r.registry->pendingRetryCount() == 0);
}

TEST_CASE("failback registry: stop hands back the pending entries and refuses later calls") {
  RegistryRig r;
  r.backend->setDown(true);
  r.registry->registerUrl("b");
  r.registry->registerUrl("a");
  r.rig.runUntil(5s);
  const auto handed = r.registry->stop();
  CHECK(keysOf(handed) == std::vector<std::string>{"register a 2", "register b 2"});
  CHECK(r.rig.pending() == 0);
  CHECK(r.registry->pendingRetryCount() == 0);
  CHECK_THROWS_AS(r.registry->registerUrl("c"), std::logic_error);
  CHECK_THROWS_AS(r.registry->recover(), std::logic_error);
  r.rig.runUntil(30s);
  CHECK(r.backend->callCount() == 4);
}

TEST_CASE("failback registry: destroyed with work in flight and pending") {
  RegistryRig r;
  r.backend->setDeferred(true);
  r.registry->registerUrl("a");
  r.registry->registerUrl("b");
  r.backend->complete(0, down());
  REQUIRE(r.rig.pending() == 1);
  r.registry.reset();
  CHECK(r.rig.pending() == 0);
  r.backend->complete(1, down());  // a late completion finds nothing: no crash, no retry
  r.rig.runUntil(10s);
  CHECK(r.backend->callCount() == 2);
}

TEST_CASE("failback registry: a retry is logged with its cause and delay, then its recovery") {
  CHECK(decisionLog(LogLevel::Debug) ==
        Lines{"DEBUG failback: register dubbo://192.0.2.1:20880/Echo failed (disconnected: "
              "registry down): retry 1 in 5s",
              "DEBUG failback: register dubbo://192.0.2.1:20880/Echo succeeded after 1 retry"});
  CHECK(decisionLog(LogLevel::Info).empty());
}

}  // TEST_SUITE("registry")
