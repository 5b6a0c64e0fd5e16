// ServiceClient end to end on loopback: an in-process RegistryServer, providers as real
// TcpServers that answer as each case needs (echo, busy, an application's error, late, silent),
// the client on a consumer's Registry. Counts are exact: each provider counts the requests it
// received, and the client's stats must match them.
#include "../net/support.h"

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>

#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace wbnet;
using namespace wheelbeat::registry;
using wheelbeat::cluster::CallOptions;
using wheelbeat::cluster::CallOutcome;
using wheelbeat::cluster::ClusterOptions;
using wheelbeat::cluster::ServiceClient;
using wheelbeat::tasks::cluster::BalancerKind;
using wheelbeat::tasks::cluster::Mode;

namespace {

const std::string kService = "org.example.Echo";

enum class Behaviour { Echo, Busy, AppError, Late, Silent };

// A provider: a TcpServer that answers every two-way request as its behaviour says.
struct Provider {
  Provider(Env& env, Behaviour b) : behaviour(b), timer(env.timer) {
    server = std::make_unique<TcpServer>(
        env.loop, env.timer, serverOptions(),
        ChannelHandler{.onFrame = [this](Channel& ch, const FrameView& f) { answer(ch, f); }});
    port = server->listen();
  }
  void answer(Channel& ch, const FrameView& f) {
    if (!f.isRequest() || !f.isTwoWay()) return;
    ++received;
    const std::string body = std::string(f.body);
    switch (behaviour) {
      case Behaviour::Echo: (void)ch.reply(f, body); break;
      case Behaviour::Busy: (void)ch.reply(f, "busy", 100); break;
      case Behaviour::AppError: (void)ch.reply(f, "no such greeting", 70); break;
      case Behaviour::Silent: break;
      case Behaviour::Late: {
        // Answered 300 ms later from the wheel: the loop is never blocked.
        const std::uint8_t serialization = f.serialization();
        const std::uint64_t id = f.id;
        (void)timer.newTimeout(
            [&ch, serialization, id, body] { (void)ch.send(serialization, kStatusOk, id, body); },
            300ms);
        break;
      }
    }
  }
  std::string url() const {
    return fmt::format("dubbo://127.0.0.1:{}/{}?weight=100", port, kService);
  }

  Behaviour behaviour;
  HashedWheelTimer& timer;
  std::unique_ptr<TcpServer> server;
  std::uint16_t port = 0;
  std::atomic<int> received{0};
};

// Outcomes collected from the loop thread.
struct Outcomes {
  std::mutex mutex;
  std::vector<CallOutcome> all;
  wheelbeat::cluster::CallDone done() {
    return [this](const CallOutcome& o) {
      std::lock_guard lock(mutex);
      all.push_back(o);
    };
  }
  std::size_t size() {
    std::lock_guard lock(mutex);
    return all.size();
  }
};

ClusterOptions fastCluster(Mode mode = Mode::Failover) {
  ClusterOptions o;
  o.mode = mode;
  o.balancer = BalancerKind::RoundRobin;
  o.directory.client = clientOptions(1);
  o.directory.minHeartbeat = 50ms;
  o.maxExtraPercent = 100;
  o.budget.minRetriesPerSecond = 1000;
  return o;
}

// A registry node, the providers registered in it, and a client that sees all of them connected.
struct Cluster {
  Cluster(Env& e, std::vector<Behaviour> behaviours, ClusterOptions options) : env(e) {
    node = std::make_unique<RegistryServer>(env.loop, env.timer, serverOptions());
    const std::uint16_t port = node->start();
    for (const Behaviour b : behaviours) providers.push_back(std::make_unique<Provider>(env, b));
    RegistrySetup setup;
    setup.registry.address = Endpoint{"127.0.0.1", port};
    setup.client = clientOptions(port);
    setup.failback = fastFailback();
    providerRegistry = makeRegistry(env.loop, env.timer, setup);
    consumerRegistry = makeRegistry(env.loop, env.timer, setup);
    providerRegistry->start();
    consumerRegistry->start();
    for (const auto& p : providers) providerRegistry->registerUrl(p->url());
    client = std::make_unique<ServiceClient>(env.loop, env.timer, *consumerRegistry, kService,
                                             std::move(options));
    client->start();
    REQUIRE(waitFor([&] { return client->available() == providers.size(); }, 5s));
  }
  ~Cluster() {
    client->close();
    for (auto& p : providers) p->server->stop();
    providerRegistry->close();
    consumerRegistry->close();
    node->stop();
  }
  int received(std::size_t i) const { return providers[i]->received.load(); }

  Env& env;
  std::unique_ptr<RegistryServer> node;
  std::vector<std::unique_ptr<Provider>> providers;
  std::unique_ptr<Registry> providerRegistry;
  std::unique_ptr<Registry> consumerRegistry;
  std::unique_ptr<ServiceClient> client;
};

}  // namespace

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

TEST_CASE("service client: bad calls are refused and change nothing; close ends what runs") {
  Env env;
  Cluster c(env, {Behaviour::Silent}, fastCluster(Mode::Failfast));
  CHECK_THROWS_AS(c.client->call("x", {}, nullptr), std::invalid_argument);
  CallOptions zero;
  zero.deadline = 0ms;
  Outcomes outcomes;
  CHECK_THROWS_WITH_AS(c.client->call("x", zero, outcomes.done()),
                       "ServiceClient::call: deadline = 0s (expected: > 0)", std::invalid_argument);
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
  CHECK_THROWS_WITH_AS(ServiceClient(env.loop, env.timer, *c.consumerRegistry, kService,
                                     fastCluster(Mode::Failback)),
                       "ClusterOptions.mode = failback (expected: failover, failfast, failsafe, "
                       "forking or broadcast; for failback, give failed calls to a "
                       "tasks::FailbackInvoker)",
                       std::invalid_argument);
}
}  // TEST_SUITE("cluster")
