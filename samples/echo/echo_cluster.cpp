// echo_client --registry: every request goes through a cluster::ServiceClient over the providers
// the registry lists (see echo_client.cpp). What the client prints:
//   providers: N: URL, URL            the registry's list, as far as it matches this consumer
//   response #7: "hello #7" from URL in 1.2ms (1 attempt)
//   request #8 failed: no-endpoint after 0 attempt(s)
// and, on exit, the cluster client's figures (calls, attempts by kind, ejections) and, when the
// list went empty meanwhile, the reconnects made since (0: no link to a provider that left is
// kept). On ZooKeeper it also registers its consumer url (/dubbo/INTERFACE/consumers), as Dubbo
// consumers do; the embedded and Redis registries keep providers only.
#include "../common/format.h"
#include "../common/say.h"
#include "echo_client.h"

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/registry/backend.h>
#include <wheelbeat/registry/service.h>

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
namespace cluster = wheelbeat::cluster;
namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;
namespace tc = wheelbeat::tasks::cluster;

namespace samples::echo {

namespace {

// A call's deadline, every attempt included (the direct mode's request timeout).
constexpr auto kDeadline = 2s;

// Dubbo's words (failback is not offered: the cluster client refuses it, see service_client.h).
const std::vector<std::string> kModes{"failover", "failfast", "failsafe", "forking", "broadcast"};
const std::vector<std::string> kBalancers{"p2c", "round_robin", "random", "least_active",
                                          "consistent_hash"};

// The enum value whose name is `name` (oneOf() let only known names through).
template <class Enum, class NameOf>
Enum byName(const std::string& name, Enum last, NameOf nameOf) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (nameOf(static_cast<Enum>(i)) == name) return static_cast<Enum>(i);
  }
  throw std::invalid_argument(fmt::format("unknown name \"{}\"", name));
}

std::string joined(const std::vector<std::string>& urls) {
  std::string out;
  for (const auto& u : urls) out += (out.empty() ? "" : ", ") + u;
  return out;
}

// Prints the registry's list of the service, the providers this consumer matches (loop thread).
class ProviderPrinter final : public registry::NotifyListener {
public:
  explicit ProviderPrinter(registry::ServiceOptions service) : service_(std::move(service)) {}
  void notify(const std::string&, const std::vector<std::string>& providers) override {
    std::vector<std::string> urls;
    for (const auto& url : providers) {
      if (registry::matches(service_, url)) urls.push_back(url);
    }
    samples::info("providers: {}{}{}", urls.size(), urls.empty() ? "" : ": ", joined(urls));
    std::fflush(stdout);
  }

private:
  registry::ServiceOptions service_;
};

cluster::ClusterOptions clusterOptions(const wheelbeat::config::Config& cfg,
                                       const registry::ServiceOptions& service,
                                       const ClusterArgs& args, const ClientStats& stats) {
  cluster::ClusterOptions o;
  o.directory.client = cfg.client;
  o.directory.client.metrics = stats.channels;
  o.directory.client.taskMetrics = stats.tasks;
  o.directory.protectionWindow = cfg.registry.session;  // providers re-register within a session
  o.directory.accept = [service](std::string_view url) { return registry::matches(service, url); };
  o.deadline = kDeadline;
  if (args.mode) o.mode = byName(*args.mode, tc::Mode::Broadcast, tc::modeName);
  if (args.balancer) {
    o.balancer = byName(*args.balancer, tc::BalancerKind::ConsistentHash, tc::balancerKindName);
  }
  if (args.retries) o.retries = static_cast<std::uint32_t>(*args.retries);
  if (args.hedgeMs) {
    o.hedge = true;
    o.hedgeDelay.fixed = std::chrono::milliseconds(*args.hedgeMs);
  }
  // One request a second: the default cap (5 % of the last second's calls) would refuse every
  // hedge; the retry budget still bounds them.
  o.maxExtraPercent = 100;
  try {
    cluster::validate(o);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("the cluster flags: {}", e.what()));
  }
  return o;
}

void sendCall(cluster::ServiceClient& client, std::uint64_t n,
              const std::shared_ptr<ClientStats>& stats, Outstanding& open) {
  open.begin();
  client.call(fmt::format("hello #{}", n), {}, [n, stats, &open](const cluster::CallOutcome& o) {
    const char* plural = o.attempts == 1 ? "" : "s";
    if (o.ok && !o.failsafe) {
      stats->ok.fetch_add(1);
      samples::info("response #{}: \"{}\" from {} in {} ({} attempt{}{})", n, o.response.body,
                    o.provider, samples::human(o.latency), o.attempts, plural,
                    o.hedgeWon ? ", the hedge won" : "");
    } else {
      stats->failed.fetch_add(1);
      samples::warn("request #{} failed: {} after {} attempt{}{}", n, o.error, o.attempts, plural,
                    o.failsafe ? " (failsafe: answered empty)" : "");
    }
    std::fflush(stdout);
    open.end();
  });
}

void printFigures(const cluster::ServiceClient::Stats& s) {
  std::uint64_t ejections = 0;
  for (const std::uint64_t e : s.ejections) ejections += e;
  samples::info(
      "echo_client: cluster: calls={} ok={} failed={} failsafe={} attempts "
      "first/retry/hedge={}/{}/{} "
      "hedges won={} late answers={} ejections={}",
      s.calls, s.ok, s.failed, s.failsafe, s.attempts[0], s.attempts[1], s.attempts[2], s.hedgesWon,
      s.lateAnswers, ejections);
}

// The reconnects counted when the cluster client's list was first seen empty after it had
// providers: a link to a provider that left must not be dialled again.
class EmptyWatch {
public:
  void check(std::size_t providers, const ClientStats& stats) {
    if (providers > 0) {
      hadProviders_ = true;
      reconnectsAtEmpty_.reset();
    } else if (hadProviders_ && !reconnectsAtEmpty_) {
      reconnectsAtEmpty_ = stats.tasks->reconnectsStarted.load();
    }
  }
  void report(const ClientStats& stats) const {
    if (!reconnectsAtEmpty_) return;
    samples::info("echo_client: {} reconnect(s) since the provider list emptied",
                  stats.tasks->reconnectsStarted.load() - *reconnectsAtEmpty_);
  }

private:
  bool hadProviders_ = false;
  std::optional<std::uint64_t> reconnectsAtEmpty_;
};

}  // namespace

void addClusterOptions(wheelbeat::cli::App& app, ClusterArgs& args) {
  app.add_option("--cluster-mode", args.mode, "with --registry: what a failed attempt leads to")
      ->type_name("MODE")
      ->check(wheelbeat::cli::oneOf(kModes))
      ->default_str("failover");
  app.add_option("--balancer", args.balancer, "with --registry: which provider an attempt goes to")
      ->type_name("KIND")
      ->check(wheelbeat::cli::oneOf(kBalancers))
      ->default_str("p2c");
  app.add_option("--retries", args.retries, "with --registry: failover's extra attempts")
      ->type_name("N")
      ->check(wheelbeat::cli::range(0, 100).description(""))
      ->default_str("2");
  app.add_option("--hedge-ms", args.hedgeMs,
                 "with --registry: a second attempt on another provider after this wait "
                 "(failover and failfast)")
      ->type_name("MS")
      ->check(wheelbeat::cli::range(1, 1999).description(""))
      ->default_str("none, no hedging");
}

void checkClusterArgs(const ClusterArgs& args, bool withRegistry) {
  if (withRegistry) return;
  const std::pair<const char*, bool> given[] = {{"--cluster-mode", args.mode.has_value()},
                                                {"--balancer", args.balancer.has_value()},
                                                {"--retries", args.retries.has_value()},
                                                {"--hedge-ms", args.hedgeMs.has_value()}};
  for (const auto& [flag, present] : given) {
    if (present) throw std::invalid_argument(fmt::format("{} needs --registry", flag));
  }
}

int runCluster(const wheelbeat::config::Config& cfg, const RegistryFlags& f,
               const ClusterArgs& args, const Pace& pace,
               wheelbeat::net::ShutdownSignal& shutdown) {
  const registry::ServiceOptions service = serviceOf(f);
  auto stats = std::make_shared<ClientStats>();
  const cluster::ClusterOptions options = clusterOptions(cfg, service, args, *stats);
  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop("echo-client", cfg.loop);
  auto reg = registry::makeRegistry(loop, timer, f.url, registrySetup(cfg, f, "echo_client"));
  reg->start();
  const std::string consumer = registry::consumerUrl(service, "127.0.0.1");
  const bool registersConsumer = f.registry.kind == registry::RegistryKind::ZooKeeper;
  if (registersConsumer) reg->registerUrl(consumer);
  cluster::ServiceClient client(loop, timer, *reg, f.service, options);
  auto printer = std::make_shared<ProviderPrinter>(service);
  reg->subscribe(f.service, printer);
  samples::info(
      "echo_client: calling {} (version {}, group {}) on {}{}: {}, {}, {} retries, {}", f.service,
      f.version.empty() ? "none" : f.version, f.group.empty() ? "none" : f.group, f.url,
      registersConsumer ? fmt::format(" as {}", consumer) : "", tc::modeName(options.mode),
      tc::balancerKindName(options.balancer), options.retries,
      options.hedge ? fmt::format("hedge after {}", samples::human(options.hedgeDelay.fixed))
                    : std::string("no hedging"));
  std::fflush(stdout);
  client.start();
  samples::SampleMetrics metrics;
  addClientCollectors(metrics, timer, stats);
  metrics.add([&](wheelbeat::core::MetricsWriter& out) {
    reg->writeMetrics(out);
    client.writeMetrics(out);
  });
  metrics.serve(loop, cfg.metrics, "echo_client");
  Outstanding open;
  EmptyWatch watch;
  sendLoop(
      pace, shutdown, open, kDeadline + 1s,
      [&](std::uint64_t n) {
        sendCall(client, n, stats, open);
        watch.check(client.providers(), *stats);
      },
      [&] {
        stats->print(fmt::format("{}-of-{}-available", client.available(), client.providers()));
      });
  metrics.close();
  samples::info("echo_client: {}, stopping ({} provider(s) followed)",
                shutdown.requested() ? fmt::format("signal {}", shutdown.signal())
                                     : std::string("all requests answered"),
                client.providers());
  printFigures(client.stats());
  watch.report(*stats);
  client.close();
  reg->unsubscribe(f.service, printer);
  reg->close();
  const int loopResult = loop.stop();
  timer.stop();
  samples::info("echo_client: stopped{}", loopResult == 0 ? "" : " (loop did not close cleanly)");
  return loopResult == 0 ? 0 : 1;
}

}  // namespace samples::echo
