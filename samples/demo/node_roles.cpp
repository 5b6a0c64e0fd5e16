// The three roles of a demo node. Each sets up its part, reports its status every 500 ms until
// a signal arrives, then stops what it started (the caller stops the loop and the wheel).
#include "common/say.h"
#include "node.h"
#include "rpc/greeter.h"

#include <wheelbeat/registry/embedded_engine.h>
#include <wheelbeat/registry/registry_server.h>

#include <fmt/format.h>

#include <atomic>
#include <cstdio>

namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;
namespace tasks = wheelbeat::tasks;
using samples::rpc::GreeterConsumer;
using samples::rpc::GreeterProvider;

namespace demo {

namespace {

// Each greeting "works" this long before it is answered.
constexpr std::chrono::milliseconds kServiceTime{50};

std::string portOf(const std::string& url) {
  const auto endpoint = samples::rpc::endpointOfUrl(url);
  return endpoint ? std::to_string(endpoint->port) : url;
}

std::string portsOf(const std::vector<std::string>& urls) {
  std::string out;
  for (const auto& url : urls) out += (out.empty() ? "" : ",") + portOf(url);
  return out.empty() ? "-" : out;
}

long long micros(std::chrono::nanoseconds d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

// The embedded engine exposes its connection (heartbeat RTT, reconnects); Redis does not here.
const net::TcpClient* connectionOf(registry::Registry& registry) {
  auto* embedded = dynamic_cast<registry::EmbeddedEngine*>(&registry.engine());
  return embedded != nullptr ? &embedded->connection() : nullptr;
}

}  // namespace

registry::RegistrySetup registrySetup(const wheelbeat::config::Config& cfg) {
  registry::RegistrySetup setup;
  setup.registry = cfg.registry;
  setup.client = cfg.client;
  setup.failback = cfg.failback;
  // A registry call waits at most two heartbeats: past that the link is suspect anyway.
  setup.requestTimeout = 2 * cfg.client.heartbeat.interval;
  return setup;
}

void emitStatus(const std::string& fields) {
  samples::info("STATUS {}", fields);
  std::fflush(stdout);
}

int runRegistry(NodeContext& node) {
  net::ServerOptions options = node.cfg.server;
  options.listen = node.cfg.registry.address;
  registry::RegistryServer registry(node.loop, node.timer, options);
  registry.start();
  while (!node.shutdown.wait(kStatusPeriod)) {
    const auto providers = registry.providers(std::string(samples::rpc::kGreeterService));
    emitStatus(fmt::format("role=registry state=listening sessions={} known={}",
                           registry.sessions(), portsOf(providers)));
  }
  registry.stop();
  return 0;
}

int runProvider(NodeContext& node) {
  net::ServerOptions options = node.cfg.server;
  options.listen = {"127.0.0.1", 0};  // any free port: the url tells consumers which one
  auto registry = wheelbeat::registry::makeRegistry(node.loop, node.timer, registrySetup(node.cfg));
  registry->start();
  GreeterProvider provider(node.loop, node.timer, options);
  provider.setServiceTime(kServiceTime);  // calls are in flight when a SIGTERM comes
  const std::string url = provider.start(*registry);
  auto collected = node.metrics.scoped(
      [&registry](wheelbeat::core::MetricsWriter& out) { registry->writeMetrics(out); });
  while (!node.shutdown.wait(kStatusPeriod)) {
    const net::TcpClient* link = connectionOf(*registry);
    const auto rtt =
        link != nullptr ? link->channel().lastHeartbeatRtt() : std::chrono::nanoseconds(0);
    const auto reconnects =
        link != nullptr && link->connectAttempts() > 0 ? link->connectAttempts() - 1 : 0;
    emitStatus(fmt::format("role=provider state={} port={} rtt={} hb={} rc={} pend={} ok={} fail=0",
                           registry->isConnected() ? "registered" : "no-registry", portOf(url),
                           micros(rtt), provider.heartbeatsAnswered(), reconnects,
                           registry->failback().pendingRetryCount(), provider.served()));
  }
  // SIGTERM: Dubbo's graceful order (unregister, READONLY, answer what is in flight, close).
  const net::ShutdownReport report = provider.shutdown(*registry, node.cfg.server.shutdownGrace);
  emitStatus(
      fmt::format("role=provider state=stopped port={} notified={} inflight={} "
                  "abandoned={} drain_ms={}",
                  portOf(url), report.notified, report.inFlightAtStart, report.abandoned,
                  micros(report.elapsed) / 1000));
  registry->close();
  return 0;
}

namespace {

// A provider counts as in use while it answered one of this consumer's calls within this window:
// 5 calls a second go round robin over at most 3 providers, so each one in use answers several.
constexpr std::chrono::seconds kInUse{1};

struct CallCounters {
  std::atomic<std::uint64_t> ok{0};
  std::atomic<std::uint64_t> failed{0};
  std::atomic<std::int64_t> lastRttUs{0};
};

// "port:ok:failed:inUse" per provider the registry lists now.
std::string linksOf(const std::vector<samples::rpc::ProviderView>& views) {
  std::string out;
  for (const auto& p : views) {
    if (!p.listed) continue;
    const bool inUse = p.lastOk.count() >= 0 && p.lastOk < kInUse;
    out += fmt::format("{}{}:{}:{}:{}", out.empty() ? "" : ",", portOf(p.url), p.ok, p.failed,
                       inUse ? 1 : 0);
  }
  return out.empty() ? "-" : out;
}

std::string consumerStatus(const GreeterConsumer& consumer, registry::Registry& registry,
                           const CallCounters& calls, const tasks::TaskMetrics& metrics) {
  const auto m = metrics.snapshot();
  const auto s = consumer.stats();
  const std::size_t available = consumer.available();
  std::uint64_t ejections = 0;
  for (const std::uint64_t e : s.ejections) ejections += e;
  return fmt::format(
      "role=consumer state={} rtt={} hb={} rc={} pend={} ok={} fail={} notifies={} halfopens={} "
      "known={} avail={} listed={} first={} retries={} hedges={} ejections={} links={}",
      available > 0 ? "calling" : "no-provider", calls.lastRttUs.load(), m.heartbeatsSent,
      m.reconnectsStarted, registry.failback().pendingRetryCount(), calls.ok.load(),
      calls.failed.load(), consumer.notifications(), consumer.halfOpens(),
      portsOf(consumer.knownProviders()), available, consumer.listed(), s.attempts[0],
      s.attempts[1], s.attempts[2], ejections, linksOf(consumer.providers()));
}

// The cluster client's options for the demo: round robin (every provider's share shows in the
// table), a call bounded by two heartbeats, an attempt by a third of that, and a hedge after
// three service times (a frozen provider costs a call 150 ms, not its deadline).
wheelbeat::cluster::ClusterOptions clusterOptions(const wheelbeat::config::Config& cfg) {
  wheelbeat::cluster::ClusterOptions o;
  o.directory.client = cfg.client;
  // The providers advertise the config's heartbeat (500 ms): taken as is, not raised to the 1 s
  // default floor, the consumers find a frozen provider's half-open link after the config's
  // idle_timeout (1.5 s), well before the registry's close-idle (3 s) drops it.
  o.directory.minHeartbeat = cfg.client.heartbeat.interval;
  o.balancer = wheelbeat::tasks::cluster::BalancerKind::RoundRobin;
  o.deadline = 2 * cfg.client.heartbeat.interval;
  o.attemptTimeout = o.deadline / 3;
  o.hedge = true;
  o.hedgeDelay.fixed = 3 * kServiceTime;
  // 5 calls a second: the default cap (5 % of them) would refuse every hedge; the retry budget
  // still bounds them.
  o.maxExtraPercent = 100;
  return o;
}

}  // namespace

int runConsumer(NodeContext& node) {
  auto registry = wheelbeat::registry::makeRegistry(node.loop, node.timer, registrySetup(node.cfg));
  registry->start();
  samples::rpc::GreeterOptions options{clusterOptions(node.cfg)};
  auto metrics = std::make_shared<tasks::TaskMetrics>();
  options.cluster.directory.client.taskMetrics = metrics;
  GreeterConsumer consumer(node.loop, node.timer, options);
  consumer.subscribe(*registry);
  auto collected =
      node.metrics.scoped([&registry, &consumer, metrics](wheelbeat::core::MetricsWriter& out) {
        registry->writeMetrics(out);
        tasks::writeMetrics(*metrics, out);
        consumer.writeMetrics(out);
      });
  auto calls = std::make_shared<CallCounters>();  // shared: a late callback may outlive this frame
  for (std::uint64_t n = 0; !node.shutdown.wait(kCallPeriod); ++n) {
    consumer.sayHello(node.name, [calls](const samples::rpc::Reply& r) {
      if (r.ok) {
        ++calls->ok;
        calls->lastRttUs = micros(r.rtt);
      } else {
        ++calls->failed;
      }
    });
    if (n % (kStatusPeriod / kCallPeriod) == 0) {
      emitStatus(consumerStatus(consumer, *registry, *calls, *metrics));
    }
  }
  collected.reset();
  consumer.close();
  registry->close();
  return 0;
}

}  // namespace demo
