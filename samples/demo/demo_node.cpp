// wheelbeat_demo_node --role registry|provider|consumer --name NAME --config FILE
//                     --registry-port PORT [--registry-kind embedded|redis|zookeeper]
//                     [--metrics HOST:PORT]
//
// One process of the cluster demo (see samples/demo/demo_main.cpp, which starts them). The
// intervals come from the cluster's JSON file; the driver chooses the registry's port. With
// --metrics it serves its wheelbeat metrics at http://HOST:PORT/metrics (Prometheus).
#include "common/cli.h"
#include "common/say.h"
#include "node.h"

#include <wheelbeat/net/channel_metrics.h>

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <stdexcept>

namespace config = wheelbeat::config;
namespace net = wheelbeat::net;

namespace {

config::Config configure(const samples::Cli& cli) {
  config::Config cfg = config::load(cli.get("--config").value_or("cluster.json"));
  if (const auto port = cli.number("--registry-port", 1, 65535)) {
    cfg.registry.address.port = static_cast<std::uint16_t>(*port);
  }
  if (const auto kind = cli.get("--registry-kind")) {
    using wheelbeat::registry::RegistryKind;
    if (*kind == "embedded") {
      cfg.registry.kind = RegistryKind::Embedded;
    } else if (*kind == "redis") {
      cfg.registry.kind = RegistryKind::Redis;
    } else if (*kind == "zookeeper") {
      cfg.registry.kind = RegistryKind::ZooKeeper;
    } else {
      throw std::invalid_argument(
          fmt::format("--registry-kind {} (expected: embedded, redis or zookeeper)", *kind));
    }
  }
  wheelbeat::config::applyLogging(cfg);
  return cfg;
}

int run(int argc, char** argv) {
  const samples::Cli cli(
      argc, argv,
      {"--role", "--name", "--config", "--registry-port", "--registry-kind", "--metrics"});
  samples::ShutdownSignal shutdown;
  const std::string role = cli.get("--role").value_or("");
  const wheelbeat::config::Config cfg = configure(cli);
  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop(role, cfg.loop);
  samples::SampleMetrics metrics;
  metrics.add([&timer](wheelbeat::core::MetricsWriter& out) {
    timer.writeMetrics(out);
    net::writeMetrics(*net::processChannelMetrics(), out);
  });
  metrics.serve(loop, cli.get("--metrics"),
                fmt::format("{} {}", role, cli.get("--name").value_or(role)));
  demo::NodeContext node{cli.get("--name").value_or(role), cfg, timer, loop, shutdown, metrics};
  int status = 2;
  if (role == "registry") {
    status = demo::runRegistry(node);
  } else if (role == "provider") {
    status = demo::runProvider(node);
  } else if (role == "consumer") {
    status = demo::runConsumer(node);
  } else {
    samples::error("unknown --role '{}' (expected: registry, provider or consumer)", role);
  }
  // The role stopped its servers and clients; now the loop (0: every handle closed), the wheel.
  metrics.close();
  const int loopResult = loop.stop();
  timer.stop();
  return loopResult == 0 ? status : 1;
}

}  // namespace

int main(int argc, char** argv) {
  samples::lineBufferedOutput();
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    samples::error("wheelbeat_demo_node: {}", e.what());
    return 2;
  }
}
