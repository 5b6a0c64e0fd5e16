// Tutorial 05 — an embeddable RPC: the greeter (samples/rpc/greeter.h) over a registry.
//
// In one process, as three would be in production: an embedded registry node, two Dubbo providers
// of org.wheelbeat.samples.Greeter that register their Dubbo urls ("dubbo://127.0.0.1:<port>/
// INTERFACE?...&methods=sayHello&..."), and a consumer whose cluster client
// (cluster::ServiceClient) calls sayHello on them round robin and fails a call over to the other
// provider when an attempt fails. Then one provider goes away: every call still succeeds, on the
// other one, and the cluster client's figures say how many attempts that took.
#include "common/program.h"
#include "common/say.h"
#include "common/wait.h"
#include "rpc/greeter.h"

#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>

#include <fmt/format.h>

#include <csignal>
#include <future>
#include <set>

using namespace std::chrono_literals;
namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;
namespace tasks = wheelbeat::tasks;
using samples::rpc::GreeterConsumer;
using samples::rpc::GreeterProvider;
using samples::rpc::Reply;

namespace {

tasks::HeartbeatOptions quickHeartbeat() {
  tasks::HeartbeatOptions hb;
  hb.interval = 200ms;
  hb.reconnect.initialDelay = 100ms;
  hb.reconnect.maxDelay = 400ms;
  return hb;
}

// Each participant gets its own registry connection (makeRegistry: embedded unless the options
// say Redis), as separate processes would.
std::unique_ptr<registry::Registry> connectRegistry(net::EventLoop& loop,
                                                    wheelbeat::core::HashedWheelTimer& timer,
                                                    std::uint16_t port) {
  registry::RegistrySetup setup;
  setup.registry.address = {"127.0.0.1", port};
  setup.client.heartbeat = quickHeartbeat();
  setup.failback.check = false;  // retry a failed registration instead of reporting it
  auto registry = wheelbeat::registry::makeRegistry(loop, timer, setup);
  registry->start();
  return registry;
}

// One call, waited for (a real caller would go on with its work and use the callback).
Reply callOnce(GreeterConsumer& consumer, const std::string& name) {
  auto promise = std::make_shared<std::promise<Reply>>();
  auto reply = promise->get_future();
  consumer.sayHello(name, [promise](const Reply& r) { promise->set_value(r); });
  if (reply.wait_for(10s) == std::future_status::ready) return reply.get();
  Reply none;
  none.error = "no answer within 10s";
  return none;
}

// `n` calls; returns the providers that answered (empty if any call failed).
std::set<std::string> callMany(GreeterConsumer& consumer, int n) {
  std::set<std::string> answeredBy;
  for (int i = 0; i < n; ++i) {
    const Reply r = callOnce(consumer, fmt::format("caller-{}", i));
    const auto by = samples::rpc::endpointOfUrl(r.provider);
    samples::info("  {} -> {} ({} attempt{})", r.ok ? r.greeting : "FAILED: " + r.error,
                  by ? fmt::format("{}:{}", by->host, by->port) : r.provider, r.attempts,
                  r.attempts == 1 ? "" : "s");
    if (!r.ok) return {};
    answeredBy.insert(r.provider);
  }
  return answeredBy;
}

}  // namespace

int main(int argc, char** argv) {
  if (const auto status = samples::noOptions(
          argc, argv, "tutorial_05_rpc_greeter",
          "Tutorial 05: an embeddable RPC (the greeter) over an embedded registry: two providers, "
          "a consumer that fails over when one goes away."))
    return *status;
  samples::lineBufferedOutput();
  // libuv writes with write(2): a write to a connection the peer reset raises SIGPIPE, which
  // kills a process by default. Every program using wheelbeat's net layer ignores it (the
  // channel then sees EPIPE and reports the close through onClosed).
  std::signal(SIGPIPE, SIG_IGN);
  wheelbeat::core::HashedWheelTimer timer(wheelbeat::core::WheelOptions{.tickDuration = 10ms});
  net::EventLoop loop("tutorial-05");
  net::ServerOptions registryOptions;
  registryOptions.listen = {"127.0.0.1", 0};
  registryOptions.heartbeat = quickHeartbeat();
  registry::RegistryServer registryNode(loop, timer, registryOptions);
  const std::uint16_t registryPort = registryNode.start();

  net::ServerOptions serverOptions;
  serverOptions.listen = {"127.0.0.1", 0};
  serverOptions.heartbeat = quickHeartbeat();
  auto registryA = connectRegistry(loop, timer, registryPort);
  auto registryB = connectRegistry(loop, timer, registryPort);
  GreeterProvider providerA(loop, timer, serverOptions);
  GreeterProvider providerB(loop, timer, serverOptions);
  samples::info("providers: {} and {}", providerA.start(*registryA), providerB.start(*registryB));

  samples::rpc::GreeterOptions options;
  options.cluster.directory.client.heartbeat = quickHeartbeat();
  options.cluster.deadline = 2s;  // a call, every attempt included
  options.cluster.balancer = wheelbeat::tasks::cluster::BalancerKind::RoundRobin;
  auto registryC = connectRegistry(loop, timer, registryPort);
  GreeterConsumer consumer(loop, timer, options);
  consumer.subscribe(*registryC);
  const bool discovered = samples::waitUntil([&] { return consumer.available() == 2; }, 5s);

  samples::info("round robin over both providers:");
  const bool both = callMany(consumer, 4).size() == 2;

  samples::info("provider A stops (and leaves the registry); calls go on:");
  providerA.stop();
  registryA->close();
  const bool survived = callMany(consumer, 4).size() == 1;
  const auto stats = consumer.stats();
  samples::info("cluster client: {} calls, {} ok, attempts: {} first, {} retries, {} hedges",
                stats.calls, stats.ok, stats.attempts[0], stats.attempts[1], stats.attempts[2]);
  const bool counted = stats.calls == 8 && stats.ok == 8 && stats.failed == 0;

  consumer.close();
  providerB.stop();
  for (auto* r : {registryB.get(), registryC.get()}) r->close();
  registryNode.stop();
  const bool clean = loop.stop() == 0;
  timer.stop();
  const bool ok = discovered && both && survived && counted && clean;
  samples::info("{}", ok ? "05 ok" : "05 FAILED");
  return ok ? 0 : 1;
}
