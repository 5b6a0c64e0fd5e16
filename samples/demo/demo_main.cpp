// wheelbeat_demo [--plain] [--registry embedded|redis|zookeeper] [--node PATH] [--config FILE]
//
// The cluster demo (`make demo`, `make demo REGISTRY=redis`, `make demo REGISTRY=zookeeper`):
// a registry (a wheelbeat registry node, a redis-server or a standalone ZooKeeper in a temporary
// directory removed on every exit), 3 providers and 2
// consumers as separate processes of wheelbeat_demo_node, a live table of their status, and a
// scripted fault scenario (see scenario.h). Ends with a summary of every expected recovery and
// exits 1 if one was not seen (or a node did not stop cleanly), 130 on Ctrl-C. Every child is
// reaped on every path. --plain (or stdout not a terminal): no live table, events line by line.
#include "cluster.h"
#include "common/cli.h"
#include "common/say.h"
#include "common/shutdown_signal.h"
#include "scenario.h"

#include <wheelbeat/config/config.h>

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace {

// The detection bounds follow from the configuration the nodes run with.
demo::DemoOptions configure(const samples::Cli& cli, const char* argv0) {
  demo::DemoOptions o;
  o.plain = cli.has("--plain") || ::isatty(STDOUT_FILENO) == 0;
  o.registry = cli.get("--registry").value_or("embedded");
  if (o.registry != "embedded" && o.registry != "redis" && o.registry != "zookeeper") {
    throw std::invalid_argument(
        fmt::format("--registry {} (expected: embedded, redis or zookeeper)", o.registry));
  }
  o.configPath = cli.get("--config").value_or(WHEELBEAT_DEMO_CONFIG);
  const auto self = std::filesystem::absolute(argv0).parent_path();
  o.nodeBinary = cli.get("--node").value_or((self / "wheelbeat_demo_node").string());
  const wheelbeat::config::Config cfg = wheelbeat::config::load(o.configPath);
  const auto client = cfg.client.heartbeat.resolved();
  o.heartbeat = client.heartbeat;
  o.idleTimeout = client.idleTimeout;
  o.closeTimeout = cfg.server.heartbeat.resolved().closeTimeout;
  o.reconnectMax = client.reconnectBackoff.maxDelay;
  o.registryRetry = cfg.failback.registryRetry.maxDelay;
  o.session = cfg.registry.session;
  o.shutdownGrace = cfg.server.shutdownGrace;
  return o;
}

int summarize(const demo::Scenario& scenario, int uncleanExits) {
  fmt::print("\n");
  samples::info("summary (each expected recovery, from its fault):");
  bool all = true;
  for (const demo::Recovery& r : scenario.recoveries()) {
    samples::info(
        "  [{}] {:<18} {:<72} {}", r.seen ? "seen" : "NOT SEEN", r.step, r.what,
        r.seen ? fmt::format("{:.1f}s", r.seconds) : fmt::format("(waited {:.0f}s)", r.bound));
    all = all && r.seen;
  }
  samples::info("  [{}] every node stopped cleanly on SIGTERM (exit status 0){}",
                uncleanExits == 0 ? "seen" : "NOT SEEN",
                uncleanExits == 0 ? "" : fmt::format(": {} did not", uncleanExits));
  all = all && uncleanExits == 0;
  samples::info("{}", all ? "demo passed: every recovery was seen" : "demo FAILED");
  return all ? 0 : 1;
}

int run(int argc, char** argv) {
  const samples::Cli cli(argc, argv, {"--registry", "--node", "--config"}, {"--plain"});
  demo::DemoOptions options = configure(cli, argv[0]);
  samples::ShutdownSignal shutdown;
  std::string logDir = "/tmp/wheelbeat-demo-XXXXXX";
  if (::mkdtemp(logDir.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  // ZooKeeper's config and data: removed after the cluster (declared first: destroyed last, once
  // every child, the JVM included, is reaped), however run() ends.
  struct TempDir {
    std::string path;
    ~TempDir() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
  } zkDir;
  if (options.registry == "zookeeper") {
    zkDir.path = "/tmp/wheelbeat-demo-zk-XXXXXX";
    if (::mkdtemp(zkDir.path.data()) == nullptr) {
      zkDir.path.clear();
      throw std::runtime_error("mkdtemp failed");
    }
    options.zkDir = zkDir.path;
  }
  demo::Cluster cluster(logDir);
  demo::Scenario scenario(cluster, options, shutdown);
  try {
    scenario.run();
  } catch (const demo::Interrupted&) {
    samples::warn("interrupted: stopping every node");
    cluster.stopAll(std::chrono::seconds(5));
    return 130;
  } catch (const std::exception& e) {
    samples::error("demo error: {}: stopping every node", e.what());
    cluster.stopAll(std::chrono::seconds(5));
    return 2;
  }
  scenario.show(true);
  const int unclean = cluster.stopAll();
  for (const demo::Node& n : cluster.nodes()) {
    if (n.life == demo::Life::Exited && n.exitStatus != n.cleanExit) {
      samples::info("  {} exited with {} (see {}/{}.log)", n.name, n.exitStatus, logDir, n.name);
    }
  }
  return summarize(scenario, unclean);
}

}  // namespace

int main(int argc, char** argv) {
  samples::lineBufferedOutput();
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    samples::error("wheelbeat_demo: {}", e.what());
    return 2;
  }
}
