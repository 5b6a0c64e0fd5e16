// A live process's whole scrape: an embedded RegistryServer, a provider (TcpServer + Registry), a
// consumer (Registry + Directory), a request, a heartbeat and a retry budget, every layer's
// collector in one core::MetricsRegistry. Every catalogue metric has a sample, the registry and
// directory numbers are exact, and `promtool check metrics` (Debian's prometheus package)
// accepts the text; without promtool that test reports itself skipped (ctest's
// SKIP_REGULAR_EXPRESSION), with the reason.
#include "../../net/support.h"

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/core/metrics.h>
#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/registry/directory.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>
#include <wheelbeat/tasks/retry_budget.h>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <sstream>

using namespace wbnet;
using namespace wheelbeat::registry;
using wheelbeat::core::MetricsRegistry;
using wheelbeat::core::MetricsWriter;

namespace {

const std::string kService = "org.example.Echo";

RegistrySetup setupAt(std::uint16_t port) {
  RegistrySetup setup;
  setup.registry.address = Endpoint{"127.0.0.1", port};
  setup.client = clientOptions(port);
  setup.failback = fastFailback();
  setup.requestTimeout = 500ms;
  return setup;
}

// A request to the picked provider answered OK, within 10 s (a refused send or a failed call
// picks again).
bool oneAnswered(Directory& directory) {
  const auto deadline = Clock::now() + 10s;
  while (Clock::now() < deadline) {
    if (auto client = directory.pick()) {
      auto ok = std::make_shared<std::promise<bool>>();
      auto answer = ok->get_future();
      const auto sent = client->channel().request(
          "ping", 2s, [ok](const CallResult& r) { ok->set_value(r.status == CallStatus::Ok); });
      // Queued: the callback comes exactly once (OK, timeout after 2 s, or closed).
      if (sent.sent == SendResult::Queued && answer.get()) return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// One more heartbeat RTT recorded in the process's channel metrics, within 10 s.
bool oneHeartbeatAnswered(Directory& directory) {
  const auto before = processChannelMetrics()->heartbeatRtt.snapshot().count;
  const auto recorded = [&] {
    return processChannelMetrics()->heartbeatRtt.snapshot().count > before;
  };
  const auto deadline = Clock::now() + 10s;
  while (Clock::now() < deadline) {
    if (auto client = directory.pick()) client->channel().sendHeartbeat();
    if (waitFor(recorded, 1s)) return true;
  }
  return recorded();
}

// The scrape of a live provider and consumer (see the file comment); `check` runs while
// everything is up, with the text and the writer it came from.
void withLiveScrape(const std::function<void(const std::string&, const MetricsWriter&)>& check) {
  Env env;
  RegistryServer registryServer(env.loop, env.timer, serverOptions());
  const auto registryPort = registryServer.start();
  auto tasks = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  ServerOptions providerOptions = serverOptions();
  providerOptions.taskMetrics = tasks;
  TcpServer provider(env.loop, env.timer, providerOptions,
                     ChannelHandler{.onFrame = [](Channel& ch, const FrameView& f) {
                       if (f.isRequest() && f.isTwoWay()) (void)ch.reply(f, f.body);
                     }});
  const auto providerPort = provider.listen();
  auto providerReg = makeRegistry(env.loop, env.timer, setupAt(registryPort));
  providerReg->start();
  auto consumerReg = makeRegistry(env.loop, env.timer, setupAt(registryPort));
  consumerReg->start();
  DirectoryOptions options;
  options.client = clientOptions(1);
  options.client.heartbeat.interval = 1s;  // fewer reconnects on a slow (sanitized) run
  options.minHeartbeat = 50ms;
  options.client.taskMetrics = tasks;
  Directory directory(env.loop, env.timer, *consumerReg, kService, options);
  directory.start();
  providerReg->registerUrl(fmt::format("dubbo://127.0.0.1:{}/{}", providerPort, kService));
  // A request answered and a heartbeat's RTT recorded, each retried on a fresh pick when a
  // slow (sanitized) run saw the link reconnect meanwhile.
  REQUIRE(oneAnswered(directory));
  REQUIRE(oneHeartbeatAnswered(directory));
  // A cluster client over the same provider, one call answered through it.
  wheelbeat::cluster::ClusterOptions clusterOptions;
  clusterOptions.directory = options;
  wheelbeat::cluster::ServiceClient cluster(env.loop, env.timer, *consumerReg, kService,
                                            clusterOptions);
  cluster.start();
  REQUIRE(waitFor([&] { return cluster.available() == 1; }, 10s));
  std::atomic<bool> called{false};
  cluster.call("via the cluster", {}, [&](const wheelbeat::cluster::CallOutcome& o) {
    CHECK(o.ok);
    called = true;
  });
  REQUIRE(waitFor([&] { return called.load(); }, 10s));
  wheelbeat::tasks::RetryBudget budget({.ratio = 0, .minRetriesPerSecond = 2});
  const auto now = env.timer.now();
  CHECK(budget.tryWithdraw(now));
  CHECK(budget.tryWithdraw(now));
  CHECK_FALSE(budget.tryWithdraw(now));  // the reserve's two tokens are spent

  MetricsRegistry metrics;
  auto registration = metrics.add([&](MetricsWriter& out) {
    env.timer.writeMetrics(out);
    wheelbeat::tasks::writeMetrics(*tasks, out);
    writeMetrics(*processChannelMetrics(), out);
    providerReg->writeMetrics(out);
    consumerReg->writeMetrics(out);
    directory.writeMetrics(out);
    budget.writeMetrics(out, now);
    cluster.writeMetrics(out);
  });
  check(metrics.prometheusText(), metrics.collect());

  registration.reset();
  cluster.close();
  directory.close();
  provider.stop();
  providerReg->close();
  consumerReg->close();
  registryServer.stop();
}

bool hasSample(const std::string& text, std::string_view name) {
  for (const char* next : {" ", "{", "_bucket{"}) {
    if (text.find(fmt::format("\n{}{}", name, next)) != std::string::npos) return true;
  }
  return false;
}

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

TEST_SUITE("registry") {

TEST_CASE("metrics: a live provider and consumer expose every catalogue metric") {
  withLiveScrape([](const std::string& text, const MetricsWriter& out) {
    for (const auto& m : wheelbeat::core::metricCatalogue()) {
      CAPTURE(m.name);
      CHECK(hasSample(text, m.name));
    }
    CHECK(out.value("wheelbeat_registry_registered", {"embedded"}) == 1);
    // The consumer's registry holds two subscriptions: the directory's and the cluster client's.
    CHECK(out.value("wheelbeat_registry_subscribed", {"embedded"}) == 2);
    CHECK(out.value("wheelbeat_registry_failback_pending", {"embedded"}) == 0);
    CHECK(out.value("wheelbeat_registry_failback_given_up_total", {"embedded"}) == 0);
    CHECK(out.value("wheelbeat_directory_providers") == 1);
    CHECK(out.value("wheelbeat_directory_notifications_total") >= 1);
    CHECK(out.value("wheelbeat_directory_empty_protections_total") == 0);
    CHECK(out.value("wheelbeat_retry_budget_tokens") == 0);
    CHECK(out.value("wheelbeat_retry_budget_refusals_total") == 1);
    CHECK(out.value("wheelbeat_server_accepted_total") >= 3);    // 2 registry links + 1 client
    CHECK(out.value("wheelbeat_channels", {"connected"}) >= 5);  // both ends of each link
    CHECK(out.value("wheelbeat_cluster_calls_total", {"ok"}) == 1);
    CHECK(out.value("wheelbeat_cluster_attempts_total", {"first"}) == 1);
    CHECK(out.value("wheelbeat_cluster_providers") == 1);
  });
}

TEST_CASE("metrics: promtool check metrics accepts a live scrape") {
  if (std::system("command -v promtool > /dev/null 2>&1") != 0) {
    MESSAGE("SKIPPED: promtool not installed (Debian package prometheus)");
    return;
  }
  withLiveScrape([](const std::string& text, const MetricsWriter&) {
    char dir[] = "/tmp/wheelbeat-promtool-XXXXXX";
    REQUIRE(::mkdtemp(dir) != nullptr);
    const std::string input = std::string(dir) + "/scrape.prom";
    const std::string report = std::string(dir) + "/promtool.txt";
    std::ofstream(input) << text;
    const int rc = std::system(
        fmt::format("promtool check metrics < '{}' > '{}' 2>&1", input, report).c_str());
    const std::string said = readAll(report);
    INFO("promtool: ", said);
    CHECK(rc == 0);
    CHECK(said.empty());  // no lint problem either
    std::remove(input.c_str());
    std::remove(report.c_str());
    ::rmdir(dir);
  });
}

}  // TEST_SUITE("registry")
