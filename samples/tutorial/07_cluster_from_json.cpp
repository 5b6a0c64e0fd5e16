// Tutorial 07 — calls over a provider set, configured in JSON: failover and hedging.
//
// Three providers of one service register in an embedded registry node: A answers at once, B
// is overloaded (Dubbo's status 100, "thread pool exhausted", on every call) and C answers
// 400 ms late. The consumer's cluster client (cluster::ServiceClient) comes from the document's
// "cluster" section: failover with 2 retries, round robin, attempts of 250 ms, a hedge after
// 30 ms, and outlier ejection after 3 failures in a row. Every call still succeeds, from A:
// a call that went to B is retried, one that went to C is hedged and the hedge wins; B is
// ejected at its third failure. The figures say exactly what that took. (Suspicion — no new call
// to a provider whose call waits far too long — is off here so that C keeps getting calls to
// hedge; with it on, C would be passed over while its answer is late, and since suspects count
// against max_ejection_percent, B would then stay in.)
#include "common/program.h"
#include "common/say.h"
#include "common/wait.h"

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/config/config.h>
#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>

#include <fmt/format.h>

#include <csignal>
#include <future>

using namespace std::chrono_literals;
namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;
namespace cluster = wheelbeat::cluster;

namespace {

constexpr std::string_view kService = "org.example.Echo";

// What the consumer's process would read from its configuration file.
constexpr std::string_view kConsumerJson = R"({
  "heartbeat": {"interval": "200ms", "reconnect": {"initial_delay": "100ms", "max_delay": "400ms"}},
  "cluster": {
    "mode": "failover",
    "retries": 2,
    "balancer": "round_robin",
    "deadline": "2s",
    "attempt_timeout": "250ms",
    "outlier": {"consecutive_failures": 3, "base_ejection_time": "30s", "suspect_factor": 0},
    "hedging": {"enabled": true, "delay": "30ms", "max_extra_percent": 100}
  }
})";

enum class Kind { Quick, Overloaded, Late };

// A provider: a TcpServer answering every request as its kind says (C's late answer is sent
// from the wheel, so its loop is never blocked).
struct Provider {
  Provider(net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer, Kind k) : kind(k) {
    net::ServerOptions o;
    o.listen = {"127.0.0.1", 0};
    server = std::make_unique<net::TcpServer>(
        loop, timer, o,
        net::ChannelHandler{.onFrame = [this, &timer](net::Channel& ch, const net::FrameView& f) {
          if (!f.isRequest() || !f.isTwoWay()) return;
          ++received;
          if (kind == Kind::Overloaded) {
            (void)ch.reply(f, "thread pool exhausted", 100);
          } else if (kind == Kind::Quick) {
            (void)ch.reply(f, std::string(f.body));
          } else {
            ++lateDue;
            (void)timer.newTimeout(
                [this, &ch, s = f.serialization(), id = f.id, body = std::string(f.body)] {
                  (void)ch.send(s, net::kStatusOk, id, body);
                  --lateDue;
                },
                400ms);
          }
        }});
    url = fmt::format("dubbo://127.0.0.1:{}/{}", server->listen(), kService);
  }
  Kind kind;
  std::unique_ptr<net::TcpServer> server;
  std::string url;
  std::atomic<int> received{0};
  std::atomic<int> lateDue{0};  // late answers not sent yet: the server must outlive them
};

cluster::CallOutcome callOnce(cluster::ServiceClient& client, const std::string& body) {
  auto promise = std::make_shared<std::promise<cluster::CallOutcome>>();
  auto outcome = promise->get_future();
  client.call(body, {}, [promise](const cluster::CallOutcome& o) { promise->set_value(o); });
  return outcome.get();  // the call's deadline (2 s) bounds the wait
}

}  // namespace

int main(int argc, char** argv) {
  if (const auto status = samples::noOptions(
          argc, argv, "tutorial_07_cluster_from_json",
          "Tutorial 07: a cluster client from JSON (failover, hedging, outlier ejection) over "
          "three providers: one quick, one overloaded, one late."))
    return *status;
  samples::lineBufferedOutput();
  std::signal(SIGPIPE, SIG_IGN);  // see tutorial 05
  const wheelbeat::config::Config config = wheelbeat::config::loadString(kConsumerJson);

  wheelbeat::core::HashedWheelTimer timer(wheelbeat::core::WheelOptions{.tickDuration = 5ms});
  net::EventLoop loop("tutorial-07");
  net::ServerOptions nodeOptions;
  nodeOptions.listen = {"127.0.0.1", 0};
  registry::RegistryServer node(loop, timer, nodeOptions);
  registry::RegistrySetup setup;
  setup.registry.address = {"127.0.0.1", node.start()};
  setup.client.heartbeat = config.heartbeat;
  auto providers = registry::makeRegistry(loop, timer, setup);
  auto consumers = registry::makeRegistry(loop, timer, setup);
  providers->start();
  consumers->start();
  Provider a(loop, timer, Kind::Quick);
  Provider b(loop, timer, Kind::Overloaded);
  Provider c(loop, timer, Kind::Late);
  for (const Provider* p : {&a, &b, &c}) providers->registerUrl(p->url);

  cluster::ServiceClient client(loop, timer, *consumers, std::string(kService), config.cluster);
  client.start();
  const bool discovered = samples::waitUntil([&] { return client.available() == 3; }, 5s);
  samples::info("providers: A {} (quick), B {} (overloaded), C {} (late)", a.url, b.url, c.url);

  bool allFromA = true;
  for (int i = 0; i < 12; ++i) {
    const cluster::CallOutcome o = callOnce(client, fmt::format("call {}", i));
    const char* who = o.provider == a.url ? "A" : o.provider == b.url ? "B" : "C";
    samples::info("  call {:2}: {} from {} after {} attempt{}{}", i, o.ok ? "ok" : o.error, who,
                  o.attempts, o.attempts == 1 ? "" : "s", o.hedgeWon ? ", a hedge won" : "");
    allFromA = allFromA && o.ok && o.provider == a.url;
  }
  const auto s = client.stats();
  samples::info(
      "cluster client: {} calls, {} ok; attempts {} first, {} retries, {} hedges; "
      "{} hedges won; B received {}, ejections for failures in a row: {}",
      s.calls, s.ok, s.attempts[0], s.attempts[1], s.attempts[2], s.hedgesWon, b.received.load(),
      s.ejections[0]);
  // Every attempt B received failed and was retried (B's attempts are exactly the retries that
  // followed them, unless a hedge went to B); it was ejected after its third failure in a row.
  const bool counted = s.calls == 12 && s.ok == 12 && s.hedgesWon >= 1 && s.attempts[1] >= 1 &&
                       s.ejections[0] == 1 && b.received.load() == 3;

  // C's late answers go out on the consumer's connections: they are waited for before the
  // consumer closes them (a channel must not be used after it closed).
  const bool answered = samples::waitUntil([&] { return c.lateDue.load() == 0; }, 5s);
  client.close();
  for (Provider* p : {&a, &b, &c}) p->server->stop();
  providers->close();
  consumers->close();
  node.stop();
  const bool clean = loop.stop() == 0;
  timer.stop();
  const bool ok = discovered && allFromA && counted && answered && clean;
  samples::info("{}", ok ? "07 ok" : "07 FAILED");
  return ok ? 0 : 1;
}
