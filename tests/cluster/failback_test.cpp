// ServiceClient's failback mode on loopback: a failed call ends at once as an empty success and
// is retried in the background (FailbackInvoker) on a provider other than the one that failed;
// maxPendingRetries rejects beyond its limit; close() hands back the calls still waiting.
#include "support.h"

#include <doctest/doctest.h>

using namespace wbcluster;
using FailbackResult = wheelbeat::tasks::CallResult;

namespace {

ClusterOptions failbackCluster(std::chrono::nanoseconds retryDelay) {
  ClusterOptions o = fastCluster(Mode::Failback);
  o.failback.invocationRetry.initialDelay = retryDelay;
  o.failback.invocationRetry.maxDelay = retryDelay;
  o.failback.invocationRetry.jitterRatio = 0;
  return o;
}

// failbackDone's outcomes, from the loop or the wheel thread.
struct Ends {
  std::mutex mutex;
  std::vector<FailbackResult> all;
  wheelbeat::tasks::Completion done() {
    return [this](const FailbackResult& r) {
      std::lock_guard lock(mutex);
      all.push_back(r);
    };
  }
  std::size_t size() {
    std::lock_guard lock(mutex);
    return all.size();
  }
};

}  // namespace

TEST_SUITE("cluster") {
TEST_CASE("service client failback: a failed call is an empty success, recovered later") {
  Env env;
  Cluster c(env, {Behaviour::BusyThenEcho}, failbackCluster(50ms));
  Outcomes outcomes;
  Ends ends;
  CallOptions call;
  call.failbackDone = ends.done();
  c.client->call("hello", call, outcomes.done());
  REQUIRE(waitFor([&] { return outcomes.size() == 1; }, 5s));
  const CallOutcome& o = outcomes.all[0];
  CHECK(o.ok);
  CHECK(o.failback);
  CHECK(o.error == "overloaded");
  CHECK(o.response.body.empty());
  REQUIRE(waitFor([&] { return ends.size() == 1; }, 5s));
  CHECK(ends.all[0].ok);
  CHECK(c.received(0) == 2);  // the call, then its one background retry
  const auto s = c.client->stats();
  CHECK(s.calls == 1);
  CHECK(s.failback == 1);
  CHECK(s.ok == 0);
  CHECK(s.failbackRetries.failures == 1);
  CHECK(s.failbackRetries.retriesScheduled == 1);
  CHECK(s.failbackRetries.recovered == 1);
  CHECK(s.failbackPending == 0);
  wheelbeat::core::MetricsWriter metrics;
  c.client->writeMetrics(metrics);
  CHECK(metrics.value("wheelbeat_cluster_calls_total", {"failback"}) == 1);
  CHECK(metrics.value("wheelbeat_cluster_failback_total", {"recovered"}) == 1);
  CHECK(metrics.value("wheelbeat_cluster_failback_pending") == 0);
  CHECK(c.client->close().empty());
}

TEST_CASE("service client failback: a retry goes to another provider than the one that failed") {
  Env env;
  ClusterOptions o = failbackCluster(50ms);
  o.outlier.suspectFactor = 0;
  Cluster c(env, {Behaviour::Busy, Behaviour::Echo}, o);
  Outcomes outcomes;
  Ends ends;
  CallOptions call;
  call.failbackDone = ends.done();
  for (int i = 0; i < 6; ++i) c.client->call("hi", call, outcomes.done());
  REQUIRE(waitFor([&] { return outcomes.size() == 6; }, 5s));
  const int failed = c.received(0);  // round robin: the busy one got some first attempts
  CHECK(failed > 0);
  REQUIRE(waitFor([&] { return ends.size() == static_cast<std::size_t>(failed); }, 5s));
  for (const FailbackResult& r : ends.all) CHECK(r.ok);
  CHECK(c.received(0) == failed);  // no retry went back to the busy provider
  CHECK(c.received(1) == 6);       // its own first attempts and every retry
  CHECK(c.client->stats().failbackRetries.recovered == static_cast<std::uint64_t>(failed));
}

TEST_CASE("service client failback: beyond maxPendingRetries a failed call is rejected") {
  Env env;
  ClusterOptions o = failbackCluster(60s);
  o.failback.maxPendingRetries = 1;
  Cluster c(env, {Behaviour::Busy}, o);
  Outcomes outcomes;
  Ends ends;
  CallOptions call;
  call.failbackDone = ends.done();
  c.client->call("first", call, outcomes.done());
  REQUIRE(waitFor([&] { return outcomes.size() == 1; }, 5s));
  c.client->call("second", call, outcomes.done());
  REQUIRE(waitFor([&] { return ends.size() == 1; }, 5s));
  CHECK(ends.all[0].error == "failback-rejected");
  CHECK(outcomes.size() == 2);
  const auto s = c.client->stats();
  CHECK(s.failback == 2);
  CHECK(s.failbackRetries.rejected == 1);
  CHECK(s.failbackPending == 1);
  // close() hands back the one still waiting for its retry, with what is known of it.
  const auto held = c.client->close();
  REQUIRE(held.size() == 1);
  CHECK(held[0].body == "first");
  CHECK(held[0].lastProvider == c.providers[0]->url());
  CHECK(held[0].retries == 0);
  CHECK(ends.size() == 1);  // a handed-back call's failbackDone is not called
  CHECK(c.client->close().empty());
}
}  // TEST_SUITE("cluster")
