// ServiceClient end to end on loopback: an in-process RegistryServer, providers as real
// TcpServers that answer as each case needs (echo, busy, an application's error, late, silent),
// the client on a consumer's Registry. Counts are exact: each provider counts the requests it
// received, and the client's stats must match them.
#include "support.h"

#include <doctest/doctest.h>

using namespace wbcluster;

TEST_SUITE("cluster") {
TEST_CASE("service client: failover retries a busy provider's calls on the others") {
  Env env;
  Cluster c(env, {Behaviour::Busy, Behaviour::Echo, Behaviour::Echo}, fastCluster());
  Outcomes outcomes;
  for (int i = 0; i < 30; ++i) c.client->call(fmt::format("hello {}", i), {}, outcomes.done());
  REQUIRE(waitFor([&] { return outcomes.size() == 30; }, 10s));
  for (const CallOutcome& o : outcomes.all) {
    CHECK(o.ok);
    CHECK(o.response.frameStatus == kStatusOk);
    CHECK(o.provider != c.providers[0]->url());
  }
  const auto stats = c.client->stats();
  CHECK(stats.calls == 30);
  CHECK(stats.ok == 30);
  CHECK(stats.attempts[0] == 30);
  // Every attempt the busy provider received was retried once, elsewhere, with success.
  CHECK(c.received(0) > 0);
  CHECK(stats.attempts[1] == static_cast<std::uint64_t>(c.received(0)));
  CHECK(c.received(1) + c.received(2) == 30);
  // The same figures in the metrics.
  wheelbeat::core::MetricsWriter metrics;
  c.client->writeMetrics(metrics);
  CHECK(metrics.value("wheelbeat_cluster_calls_total", {"ok"}) == 30);
  CHECK(metrics.value("wheelbeat_cluster_calls_total", {"failed"}) == 0);
  CHECK(metrics.value("wheelbeat_cluster_attempts_total", {"first"}) == 30);
  CHECK(metrics.value("wheelbeat_cluster_attempts_total", {"retry"}) == c.received(0));
  CHECK(metrics.value("wheelbeat_cluster_providers") == 3);
}

TEST_CASE("service client: an application's error is returned, never retried") {
  Env env;
  Cluster c(env, {Behaviour::AppError, Behaviour::AppError}, fastCluster());
  Outcomes outcomes;
  for (int i = 0; i < 10; ++i) c.client->call("hi", {}, outcomes.done());
  REQUIRE(waitFor([&] { return outcomes.size() == 10; }, 10s));
  for (const CallOutcome& o : outcomes.all) {
    CHECK_FALSE(o.ok);
    CHECK(o.error == "rejected");
    CHECK(o.attempts == 1);
    CHECK(o.response.frameStatus == 70);
    CHECK(o.response.body.find("no such greeting") != std::string::npos);
  }
  CHECK(c.received(0) + c.received(1) == 10);
  CHECK(c.client->stats().attempts[1] == 0);
}

TEST_CASE("service client: a hedge on another provider wins over a late one") {
  Env env;
  ClusterOptions o = fastCluster(Mode::Failfast);
  o.hedge = true;
  o.hedgeDelay.fixed = 30ms;
  o.outlier.suspectFactor = 0;  // this case is about hedging alone
  Cluster c(env, {Behaviour::Late, Behaviour::Echo}, o);
  Outcomes outcomes;
  for (int i = 0; i < 10; ++i) c.client->call("hi", {}, outcomes.done());
  REQUIRE(waitFor([&] { return outcomes.size() == 10; }, 10s));
  int hedged = 0;
  for (const CallOutcome& x : outcomes.all) {
    CHECK(x.ok);
    CHECK(x.provider == c.providers[1]->url());
    CHECK(x.latency < 300ms);
    hedged += x.hedgeWon ? 1 : 0;
  }
  // Each call that went to the late provider first was hedged and the hedge won; its late answer
  // arrives later and is discarded.
  CHECK(hedged == c.received(0));
  CHECK(hedged > 0);
  CHECK(waitFor([&] { return c.client->stats().lateAnswers == static_cast<std::uint64_t>(hedged); },
                5s));
  CHECK(c.client->stats().hedgesWon == static_cast<std::uint64_t>(hedged));
}

TEST_CASE("service client: calls waiting on a provider that turns suspect go elsewhere at once") {
  Env env;
  ClusterOptions o = fastCluster();  // failover, round robin, no hedging
  o.outlier.suspectFloor = 20ms;
  o.outlier.consecutiveFailures = 0;  // suspicion alone takes it out
  Cluster c(env, {Behaviour::Silent, Behaviour::Echo}, o);
  Outcomes outcomes;
  CallOptions call;
  call.deadline = 5s;  // far away: only suspicion can end these calls early
  for (int i = 0; i < 10; ++i) c.client->call("hi", call, outcomes.done());
  REQUIRE(waitFor([&] { return outcomes.size() == 10; }, 10s));
  int retried = 0;
  for (const CallOutcome& x : outcomes.all) {
    CHECK(x.ok);
    CHECK(x.provider == c.providers[1]->url());
    CHECK(x.latency < 2s);  // not the deadline: the sweep found the suspect within ~25 ms
    retried += x.attempts == 2 ? 1 : 0;
  }
  // Every call the silent provider received was retried once on the other, and won there.
  CHECK(c.received(0) > 0);
  CHECK(retried == c.received(0));
  CHECK(c.received(1) == 10);
  const auto stats = c.client->stats();
  CHECK(stats.attempts[1] == static_cast<std::uint64_t>(c.received(0)));
  CHECK(stats.ejections[2] == 1);  // suspect, once
  CHECK(stats.hedgesWon == 0);
}

TEST_CASE("service client: P2C stops choosing a provider whose failures are fast") {
  Env env;
  ClusterOptions o = fastCluster();
  o.balancer = BalancerKind::P2C;
  o.outlier.consecutiveFailures = 0;  // no ejection: the balancer alone must steer away
  o.outlier.suspectFactor = 0;
  Cluster c(env, {Behaviour::Busy, Behaviour::Echo, Behaviour::Echo}, o);
  for (int i = 0; i < 60; ++i) {  // one at a time: in-flight counts play no part
    Outcomes one;
    c.client->call("hi", {}, one.done());
    REQUIRE(waitFor([&] { return one.size() == 1; }, 5s));
    CHECK(one.all[0].ok);
  }
  // Its "overloaded" answers come as fast as the others' echoes; counted as 100 ms answers,
  // the first one makes it lose every comparison with a healthy provider from then on.
  CHECK(c.received(0) <= 1);
  CHECK(c.received(1) + c.received(2) == 60);
}

TEST_CASE("service client: the deadline ends a call no provider answers") {
  Env env;
  ClusterOptions o = fastCluster(Mode::Failfast);
  Cluster c(env, {Behaviour::Silent}, o);
  Outcomes outcomes;
  const auto start = Clock::now();
  CallOptions call;
  call.deadline = 200ms;
  c.client->call("hi", call, outcomes.done());
  REQUIRE(waitFor([&] { return outcomes.size() == 1; }, 5s));
  const auto waited = Clock::now() - start;
  CHECK(outcomes.all[0].error == "timeout");
  CHECK(waited >= 200ms);
  CHECK(waited < 2s);
  CHECK(c.received(0) == 1);
}

TEST_CASE("service client: bad calls are refused and change nothing - close ends what runs") {
  Env env;
  Cluster c(env, {Behaviour::Silent}, fastCluster(Mode::Failfast));
  CHECK_THROWS_AS(c.client->call("x", {}, nullptr), std::invalid_argument);
  CallOptions zero;
  zero.deadline = 0ms;
  Outcomes outcomes;
  CHECK_THROWS_WITH_AS(c.client->call("x", zero, outcomes.done()),
                       "ServiceClient::call: deadline = 0s (expected: > 0)", std::invalid_argument);
  const std::size_t maxBody = fastCluster().directory.client.codec.maxBody;
  const std::string tooLarge = fmt::format(
      "ServiceClient::call: body of {} bytes (expected: at most directory.client.codec.maxBody = "
      "{})",
      maxBody + 1, maxBody);
  CHECK_THROWS_WITH_AS(c.client->call(std::string(maxBody + 1, 'x'), {}, outcomes.done()),
                       tooLarge.c_str(), std::invalid_argument);
  CHECK(c.client->stats().calls == 0);
  c.client->call("waits", {}, outcomes.done());
  REQUIRE(waitFor([&] { return c.received(0) == 1; }, 5s));
  c.client->close();
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes.all[0].error == "disconnected");
  CHECK_THROWS_AS(c.client->call("x", {}, outcomes.done()), std::logic_error);
  ClusterOptions bad = fastCluster(Mode::Broadcast);
  bad.hedge = true;
  CHECK_THROWS_WITH_AS(ServiceClient(env.loop, env.timer, *c.consumerRegistry, kService, bad),
                       "CallPolicy.hedge = true with mode broadcast (expected: hedging with "
                       "failover or failfast only)",
                       std::invalid_argument);
  ClusterOptions noToken = fastCluster(Mode::Failover);
  noToken.hedge = true;
  noToken.budget.ratio = 0;
  noToken.budget.minRetriesPerSecond = 0;
  CHECK_THROWS_WITH_AS(
      ServiceClient(env.loop, env.timer, *c.consumerRegistry, kService, noToken),
      "ClusterOptions.hedge = true (expected: a budget that can give a token (a ratio or a "
      "per-second reserve above 0))",
      std::invalid_argument);
  noToken = fastCluster(Mode::Failover);
  noToken.hedge = true;
  noToken.maxExtraPercent = 0;
  CHECK_THROWS_WITH_AS(ServiceClient(env.loop, env.timer, *c.consumerRegistry, kService, noToken),
                       "ClusterOptions.hedge = true (expected: maxExtraPercent > 0)",
                       std::invalid_argument);
  ClusterOptions noRoom = fastCluster(Mode::Failback);
  noRoom.failback.maxPendingRetries = 0;
  CHECK_THROWS_WITH_AS(ServiceClient(env.loop, env.timer, *c.consumerRegistry, kService, noRoom),
                       "ClusterOptions.failback.maxPendingRetries = 0 (expected: >= 1)",
                       std::invalid_argument);
}
}  // TEST_SUITE("cluster")
