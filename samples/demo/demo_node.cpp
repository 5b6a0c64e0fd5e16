// wheelbeat_demo_node --role registry|provider|consumer --name NAME --config FILE
//                     --registry-port PORT [--registry-kind embedded|redis|zookeeper]
//                     [--metrics HOST:PORT]
//
// One process of the cluster demo (see samples/demo/demo_main.cpp, which starts them). The
// intervals come from the cluster's JSON file; the driver chooses the registry's port. With
// --metrics it serves its wheelbeat metrics at http://HOST:PORT/metrics (Prometheus).
#include "command_line.h"
#include "common/say.h"
#include "node.h"

#include <wheelbeat/net/channel_metrics.h>

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

namespace config = wheelbeat::config;
namespace net = wheelbeat::net;

namespace {

// The command line, as parsed (the driver gives every flag).
struct Args {
  std::string role;
  std::optional<std::string> name;
  std::string config = "cluster.json";
  std::optional<int> registryPort;
  std::optional<std::string> registryKind;
  std::optional<std::string> metrics;  // HOST:PORT
};

config::Config configure(const Args& args) {
  config::Config cfg = config::load(args.config);
  if (args.registryPort) {
    cfg.registry.address.port = static_cast<std::uint16_t>(*args.registryPort);
  }
  if (args.registryKind) {
    using wheelbeat::registry::RegistryKind;
    // The values oneOf() let through.
    cfg.registry.kind = *args.registryKind == "redis"       ? RegistryKind::Redis
                        : *args.registryKind == "zookeeper" ? RegistryKind::ZooKeeper
                                                            : RegistryKind::Embedded;
  }
  cfg.metrics = samples::SampleMetrics::withFlag(cfg.metrics, args.metrics);
  wheelbeat::config::applyLogging(cfg);
  return cfg;
}

int run(const Args& args) {
  wheelbeat::net::ShutdownSignal shutdown;
  const std::string& role = args.role;
  const wheelbeat::config::Config cfg = configure(args);
  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop(role, cfg.loop);
  samples::SampleMetrics metrics;
  metrics.add([&timer](wheelbeat::core::MetricsWriter& out) {
    timer.writeMetrics(out);
    net::writeMetrics(*net::processChannelMetrics(), out);
  });
  metrics.serve(loop, cfg.metrics, fmt::format("{} {}", role, args.name.value_or(role)));
  demo::NodeContext node{args.name.value_or(role), cfg, timer, loop, shutdown, metrics};
  int status = 2;
  if (role == "registry") {
    status = demo::runRegistry(node);
  } else if (role == "provider") {
    status = demo::runProvider(node);
  } else {  // "consumer": oneOf() let nothing else through
    status = demo::runConsumer(node);
  }
  // The role stopped its servers and clients; now the loop (0: every handle closed), the wheel.
  metrics.close();
  const int loopResult = loop.stop();
  timer.stop();
  return loopResult == 0 ? status : 1;
}

constexpr const char* kSynopsis =
    "usage: wheelbeat_demo_node --role registry|provider|consumer --name NAME --config FILE\n"
    "                           --registry-port PORT [--registry-kind embedded|redis|zookeeper]\n"
    "                           [--metrics HOST:PORT]\n"
    "       wheelbeat_demo_node --help | --version";

constexpr const char* kDescription =
    "One process of the cluster demo, started by wheelbeat_demo. The intervals come from the\n"
    "cluster's JSON file; the driver chooses the registry's port.";

constexpr const char* kExamples =
    "  wheelbeat_demo_node --role registry --name registry --config samples/demo/cluster.json "
    "--registry-port 23456\n"
    "  wheelbeat_demo_node --role=provider --name provider-1 --config samples/demo/cluster.json "
    "--registry-port=23456 --registry-kind redis\n";

void addOptions(wheelbeat::cli::App& app, Args& args) {
  app.add_option("--role", args.role, "what this node is")
      ->type_name("ROLE")
      ->check(wheelbeat::cli::oneOf({"registry", "provider", "consumer"}));
  app.add_option("--name", args.name, "its name in the demo's table and logs")
      ->type_name("NAME")
      ->default_str("the role");
  app.add_option("--config", args.config, "the cluster's configuration (JSON)")
      ->type_name("FILE")
      ->capture_default_str();
  app.add_option("--registry-port", args.registryPort, "the registry's port")
      ->type_name("PORT")
      ->check(wheelbeat::cli::range(1, 65535).description(""))
      ->default_str("the --config file's");
  app.add_option("--registry-kind", args.registryKind, "the registry's kind")
      ->type_name("KIND")
      ->check(wheelbeat::cli::oneOf({"embedded", "redis", "zookeeper"}))
      ->default_str("the --config file's");
  app.add_option("--metrics", args.metrics,
                 "serve its wheelbeat metrics at http://HOST:PORT/metrics (Prometheus)")
      ->type_name("HOST:PORT")
      ->default_str("the --config file's metrics section, else none");
}

}  // namespace

int main(int argc, char** argv) {
  samples::lineBufferedOutput();
  wheelbeat::cli::CommandLine cmd("wheelbeat_demo_node", kSynopsis, kDescription, kExamples);
  Args args;
  addOptions(cmd.app(), args);
  if (const auto status = cmd.parse(argc, argv)) return *status;
  // Checked here, not by CLI11's required(): CLI11 would report it before an unknown flag.
  if (args.role.empty()) {
    return cmd.fail("--role is required (expected: registry, provider or consumer)");
  }
  try {
    return run(args);
  } catch (const std::exception& e) {
    samples::error("wheelbeat_demo_node: {}", e.what());
    return 2;
  }
}
