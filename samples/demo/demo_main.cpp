// wheelbeat_demo [--plain] [--registry embedded|redis|zookeeper] [--node PATH] [--config FILE]
//                [--keep-logs]
//
// The cluster demo (`make demo`, `make demo REGISTRY=redis`, `make demo REGISTRY=zookeeper`):
// a registry (a wheelbeat registry node, a redis-server or a standalone ZooKeeper in a temporary
// directory removed on every exit), 3 providers and 2
// consumers as separate processes of wheelbeat_demo_node, a live table of their status, and a
// scripted fault scenario (see scenario.h). Ends with a summary of every expected recovery and
// exits 1 if one was not seen (or a node did not stop cleanly), 130 on Ctrl-C. Every child is
// reaped on every path. --plain (or stdout not a terminal): no live table, events line by line.
// The nodes' logs go to a folder /tmp/wheelbeat-demo-XXXXXX ($TMPDIR when set), removed on every
// exit (success, failure, SIGINT / SIGTERM) unless --keep-logs, which names it on the way out.
#include "cluster.h"
#include "cluster_json.h"
#include "command_line.h"
#include "common/say.h"
#include "scenario.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/net/shutdown_signal.h>

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace {

// The command line, as parsed.
struct Args {
  bool plain = false;
  bool keepLogs = false;
  std::string registry = "embedded";
  std::optional<std::string> node;
  std::optional<std::string> config;  // none: the built-in cluster.json
};

// The detection bounds follow from the configuration the nodes run with.
// `configPath`: --config's file, or the built-in configuration written to the demo's folder.
demo::DemoOptions configure(const Args& args, const char* argv0, std::string configPath) {
  demo::DemoOptions o;
  o.plain = args.plain || ::isatty(STDOUT_FILENO) == 0;
  o.registry = args.registry;
  o.configPath = std::move(configPath);
  const auto self = std::filesystem::absolute(argv0).parent_path();
  o.nodeBinary = args.node.value_or((self / "wheelbeat_demo_node").string());
  const wheelbeat::config::Config cfg = wheelbeat::config::load(o.configPath);
  const auto client = cfg.client.heartbeat.resolved();
  o.heartbeat = client.interval;
  o.idleTimeout = client.idleTimeout;
  o.closeTimeout = cfg.server.heartbeat.resolved().closeTimeout;
  o.reconnectMax = client.reconnect.maxDelay;
  o.registryRetry = cfg.failback.registryRetry.maxDelay;
  o.session = cfg.registry.session;
  o.shutdownGrace = cfg.server.shutdownGrace;
  return o;
}

// A temporary folder, $TMPDIR (else /tmp) / <prefix>XXXXXX, removed with everything in it when
// this goes out of scope, however run() ends, unless kept: then its path is printed instead.
class TempDir {
public:
  TempDir(const std::string& prefix, bool keep)
      : path_((std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string()),
        keep_(keep) {
    if (::mkdtemp(path_.data()) == nullptr) {
      throw std::runtime_error(fmt::format("mkdtemp {} failed", path_));
    }
  }
  ~TempDir() {
    if (keep_) {
      std::fprintf(stdout, "logs kept in %s (--keep-logs)\n", path_.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

private:
  std::string path_;
  bool keep_;
};

// Each consumer's calls and its cluster client's figures, from its last status line.
void printConsumerFigures(const std::deque<demo::Node>& nodes) {
  samples::info("consumers (calls, and their cluster client's attempts):");
  for (const demo::Node& n : nodes) {
    if (n.role != "consumer") continue;
    samples::info(
        "  {:<11} {} ok, {} failed; attempts {} first, {} retries, {} hedges; {} ejection(s), "
        "{} half-open link(s)",
        n.name, n.status.number("ok"), n.status.number("fail"), n.status.number("first"),
        n.status.number("retries"), n.status.number("hedges"), n.status.number("ejections"),
        n.status.number("halfopens"));
  }
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

// The built-in configuration as a file in `dir`, for the nodes' --config.
std::string writeBuiltInConfig(const std::string& dir) {
  const std::string path = dir + "/cluster.json";
  std::ofstream out(path);
  out << demo::kBuiltInConfig;
  if (!out.flush()) throw std::runtime_error(fmt::format("cannot write {}", path));
  return path;
}

int run(const Args& args, const char* argv0) {
  // The nodes' logs, then ZooKeeper's config and data (both declared before the cluster:
  // destroyed after it, once every child, the JVM included, is reaped).
  const TempDir logs("wheelbeat-demo-", args.keepLogs);
  const std::string& logDir = logs.path();
  demo::DemoOptions options =
      configure(args, argv0, args.config ? *args.config : writeBuiltInConfig(logDir));
  wheelbeat::net::ShutdownSignal shutdown;
  std::optional<TempDir> zkDir;
  if (options.registry == "zookeeper") {
    zkDir.emplace("wheelbeat-demo-zk-", false);
    options.zkDir = zkDir->path();
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
  printConsumerFigures(cluster.nodes());
  const int unclean = cluster.stopAll();
  for (const demo::Node& n : cluster.nodes()) {
    if (n.life == demo::Life::Exited && n.exitStatus != n.cleanExit) {
      samples::info("  {} exited with {} ({})", n.name, n.exitStatus,
                    args.keepLogs ? fmt::format("see {}/{}.log", logDir, n.name)
                                  : std::string("run with --keep-logs to keep its log"));
    }
  }
  return summarize(scenario, unclean);
}

}  // namespace

constexpr const char* kSynopsis =
    "usage: wheelbeat_demo [--plain] [--registry embedded|redis|zookeeper] [--node PATH]\n"
    "                      [--config FILE] [--keep-logs]\n"
    "       wheelbeat_demo --help | --version";

constexpr const char* kDescription =
    "The cluster demo: a registry, 3 providers and 2 consumers as separate processes, a live\n"
    "table of their status and a scripted fault scenario, then a summary of every expected\n"
    "recovery. Exit status: 0 every recovery seen, 1 one was not, 2 bad usage or a demo error,\n"
    "130 interrupted (SIGINT / SIGTERM). The nodes' logs go to /tmp/wheelbeat-demo-XXXXXX,\n"
    "removed on every exit unless --keep-logs.";

constexpr const char* kExamples =
    "  wheelbeat_demo\n"
    "  wheelbeat_demo --plain --registry=redis --keep-logs\n";

int main(int argc, char** argv) {
  samples::lineBufferedOutput();
  wheelbeat::cli::CommandLine cmd("wheelbeat_demo", kSynopsis, kDescription, kExamples);
  Args args;
  cmd.app().add_flag("--plain", args.plain,
                     "no live table: events line by line (also when stdout is not a terminal)");
  cmd.app()
      .add_option("--registry", args.registry,
                  "the registry: a wheelbeat registry node, a local redis-server or a standalone "
                  "ZooKeeper")
      ->type_name("KIND")
      ->check(wheelbeat::cli::oneOf({"embedded", "redis", "zookeeper"}))
      ->capture_default_str();
  cmd.app()
      .add_option("--node", args.node, "the node program")
      ->type_name("PATH")
      ->default_str("wheelbeat_demo_node beside this program");
  cmd.app()
      .add_option("--config", args.config, "the cluster's configuration (JSON)")
      ->type_name("FILE")
      ->default_str("the built-in samples/demo/cluster.json");
  cmd.app().add_flag("--keep-logs", args.keepLogs,
                     "keep the nodes' log folder and print where it is (default: removed on exit)");
  if (const auto status = cmd.parse(argc, argv)) return *status;
  try {
    return run(args, argv[0]);
  } catch (const std::exception& e) {
    samples::error("wheelbeat_demo: {}", e.what());
    return 2;
  }
}
