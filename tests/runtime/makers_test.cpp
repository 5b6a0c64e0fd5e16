// Every maker of the runtime: the object its section configures, and its metrics collected with
// no glue (names from the catalogue) while it lives, gone when it goes.
#include "support.h"

#include <wheelbeat/registry/registry_server.h>
#include <wheelbeat/runtime/runtime.h>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <future>

using namespace std::chrono_literals;
using runtime_test::sample;
using runtime_test::waitUntil;
using wheelbeat::Runtime;
namespace net = wheelbeat::net;
namespace tasks = wheelbeat::tasks;

namespace {

// A server answering every two-way request with its body.
net::ChannelHandler echo(std::atomic<int>& served) {
  return {.onFrame = [&served](net::Channel& ch, const net::FrameView& f) {
    if (!f.isRequest() || !f.isTwoWay()) return;
    ++served;
    (void)ch.reply(f, std::string(f.body));
  }};
}

std::string text(Runtime& rt) { return rt.metrics().prometheusText(); }

}  // namespace

TEST_SUITE("runtime") {
TEST_CASE(
    "server and client from the config: connected - answered - channel metrics with no glue") {
  Runtime rt = Runtime::fromJson(R"({ "loop": { "io_threads": 2 },
      "server": { "listen": "127.0.0.1:0", "max_connections": 7 },
      "client": { "connect_timeout": "2s" } })");
  std::atomic<int> served{0};
  auto server = rt.server(echo(served));
  const std::uint16_t port = server->listen();
  auto client = rt.client("127.0.0.1", port);
  client->start();
  REQUIRE(waitUntil([&] { return client->state() == net::ClientState::Connected; }));
  std::promise<net::CallResult> answer;
  (void)client->channel().request("hello", 5s,
                                  [&](const net::CallResult& r) { answer.set_value(r); });
  const net::CallResult r = answer.get_future().get();
  CHECK(r.status == net::CallStatus::Ok);
  CHECK(r.body == "hello");
  CHECK(served == 1);
  const std::string t = text(rt);
  CHECK(sample(t, "wheelbeat_server_accepted_total") == 1.0);
  CHECK(sample(t, "wheelbeat_channels{state=\"connected\"}") == 2.0);  // both ends
  // The server decoded the request before answering (the client may count the response after
  // its callback).
  CHECK(sample(t, "wheelbeat_channel_frames_in_total").value_or(0) >= 1.0);
}

TEST_CASE("client(): the config's server endpoint") {
  Runtime rt = Runtime::fromJson(R"({ "loop": { "io_threads": 1 },
      "client": { "server": "127.0.0.1:4321" } })");
  auto client = rt.client();
  CHECK(client->state() == net::ClientState::Disconnected);
  CHECK_THROWS_WITH_AS((void)rt.client("127.0.0.1", 0), doctest::Contains("server.port = 0"),
                       std::invalid_argument);
}

TEST_CASE("retry: the named policy on the wheel - its budget's metrics while the runner lives") {
  Runtime rt = Runtime::fromJson(R"({ "loop": { "io_threads": 1 }, "wheel": { "tick": "1ms" },
      "retry": { "flaky": { "backoff": "fixed", "initial_delay": "5ms", "jitter": "none",
                            "max_attempts": 5 } },
      "retry_budget": { "ratio": 0, "min_retries_per_second": 1 } })");
  auto runner = rt.retry("flaky");
  CHECK(runner->policy().maxAttempts == 5);
  // Always failing: attempt 2 spends the reserve's one token; no token is left for attempt 3.
  std::promise<tasks::RetryResult> done;
  std::atomic<int> attempts{0};
  (void)runner->run(
      [&](std::int64_t, tasks::AttemptDone d) {
        ++attempts;
        d.fail("timeout");
      },
      [&](const tasks::RetryResult& r) { done.set_value(r); });
  const tasks::RetryResult r = done.get_future().get();
  CHECK(r.outcome == tasks::RetryOutcome::GaveUp);
  CHECK(r.reason == tasks::GiveUp::BudgetExhausted);
  CHECK(r.attempts == 2);
  CHECK(attempts == 2);
  CHECK(sample(text(rt), "wheelbeat_retry_budget_refusals_total") == 1.0);
  CHECK(sample(text(rt), "wheelbeat_retry_budget_tokens").has_value());
  runner.reset();  // its collector goes with it
  CHECK_FALSE(sample(text(rt), "wheelbeat_retry_budget_refusals_total").has_value());
  CHECK_THROWS_WITH_AS((void)rt.retry("flakey"), doctest::Contains("\"flaky\""), std::out_of_range);
}

TEST_CASE("registry and serviceClient: one registry - calls over its providers - their metrics") {
  // The registry node (embedded engine) runs in its own loop and wheel, as another process.
  wheelbeat::core::HashedWheelTimer nodeTimer(wheelbeat::core::WheelOptions{.tickDuration = 5ms});
  net::EventLoop nodeLoop("registry-node");
  net::ServerOptions nodeOptions;
  nodeOptions.listen = {"127.0.0.1", 0};
  auto node =
      std::make_unique<wheelbeat::registry::RegistryServer>(nodeLoop, nodeTimer, nodeOptions);
  const std::uint16_t nodePort = node->start();
  {
    Runtime rt = Runtime::fromJson(fmt::format(R"({{ "loop": {{ "io_threads": 2 }},
        "wheel": {{ "tick": "5ms" }}, "server": {{ "listen": "127.0.0.1:0" }},
        "registry": {{ "kind": "embedded", "address": "127.0.0.1:{}" }},
        "cluster": {{ "deadline": "3s" }} }})",
                                               nodePort));
    auto registry = rt.registry();
    CHECK(rt.registry() == registry);  // one per runtime
    registry->start();
    std::atomic<int> served{0};
    auto provider = rt.server(echo(served));
    registry->registerUrl(fmt::format("dubbo://127.0.0.1:{}/org.example.Echo", provider->listen()));
    auto consumer = rt.serviceClient("org.example.Echo");
    consumer->start();
    REQUIRE(waitUntil([&] { return consumer->available() == 1; }));
    std::promise<wheelbeat::cluster::CallOutcome> outcome;
    consumer->call("hi", {},
                   [&](const wheelbeat::cluster::CallOutcome& o) { outcome.set_value(o); });
    const auto o = outcome.get_future().get();
    CHECK(o.ok);
    CHECK(o.response.body == "hi");
    const std::string t = text(rt);
    CHECK(sample(t, "wheelbeat_registry_registered{engine=\"embedded\"}") == 1.0);
    CHECK(sample(t, "wheelbeat_registry_subscribed{engine=\"embedded\"}") == 1.0);
    CHECK(sample(t, "wheelbeat_cluster_calls_total{outcome=\"ok\"}") == 1.0);
    CHECK(sample(t, "wheelbeat_cluster_providers") == 1.0);
    consumer.reset();
    CHECK_FALSE(sample(text(rt), "wheelbeat_cluster_providers").has_value());
    rt.stop();
    CHECK(registry->isConnected() == false);
  }
  node->stop();
  node.reset();
  nodeLoop.stop();
  nodeTimer.stop();
}

TEST_CASE("the application's counter and wheelbeat's metrics on one endpoint") {
  Runtime rt = Runtime::fromJson(R"({ "loop": { "io_threads": 1 },
      "metrics": { "listen": "127.0.0.1:0" } })");
  auto& orders = rt.metrics().counter("runtime_test_orders_total", "Orders.", {"kind"});
  orders.inc({"book"}, 2);
  const std::string scraped = runtime_test::scrape(rt.metricsPort());
  CHECK(sample(scraped, "runtime_test_orders_total{kind=\"book\"}") == 2.0);
  CHECK(sample(scraped, "wheelbeat_wheel_scheduled_total").has_value());
}
}  // TEST_SUITE("runtime")

TEST_SUITE("runtime") {
TEST_CASE("requestWithRetries: a refused send and an overloaded answer retried - then the answer") {
  Runtime rt = Runtime::fromJson(R"({ "loop": { "io_threads": 1 }, "wheel": { "tick": "1ms" },
      "server": { "listen": "127.0.0.1:0" },
      "retry": { "calls": { "backoff": "fixed", "initial_delay": "5ms", "jitter": "none",
                            "max_attempts": 200 } } })");
  std::atomic<int> calls{0};
  auto server = rt.server({.onFrame = [&](net::Channel& ch, const net::FrameView& f) {
    const bool busy = ++calls == 1;
    (void)ch.reply(f, busy ? "busy" : "pong", busy ? 100 : net::kStatusOk);
  }});
  auto client = rt.client("127.0.0.1", server->listen());
  std::promise<tasks::RetryResult> done;
  // Not started yet: attempt 1 is refused ("disconnected") before anything is sent.
  (void)wheelbeat::requestWithRetries(*rt.retry("calls"), client->channel(), "ping", 2s,
                                      [&](const tasks::RetryResult& r) { done.set_value(r); });
  auto result = done.get_future();
  client->start();
  const tasks::RetryResult r = result.get();
  CHECK(r.outcome == tasks::RetryOutcome::Ok);
  CHECK(calls == 2);       // the busy answer, then the good one
  CHECK(r.attempts >= 3);  // refused ones while connecting, the busy one, the good one
  CHECK(r.lastError == "overloaded");
}
}  // TEST_SUITE("runtime")
