// echo_client: a wheelbeat client on the command line.
//
//   build/bin/echo_client --host 127.0.0.1 --port 20880 [--config samples/configs/client.json]
//                         [--metrics 127.0.0.1:9465] [--count N] [--interval-ms MS]
//   build/bin/echo_client --registry zookeeper://127.0.0.1:2181 --service org.example.Echo
//                         [--application NAME] [--service-version 1.0.0] [--group G]
//                         [--cluster-mode MODE] [--balancer KIND] [--retries N] [--hedge-ms MS]
//
// With --host / --port it talks to one server. The library keeps the connection alive:
// heartbeats when the link is idle, a reconnect with backoff and jitter when it drops or goes
// half-open (read idle beyond the idle timeout). It logs every state change.
//
// With --registry (echo_registry.h, echo_cluster.cpp) the providers come from the registry and
// every request goes through a cluster::ServiceClient: it follows each listed provider that
// matches this consumer as Dubbo matches them, and decides where each attempt goes (the cluster
// mode, the balancer, retries, hedging, outlier ejection).
//
// The application sends one request a second (--interval-ms; --count N: N requests, then it
// waits for their answers and stops) and logs each answer. Requests are numbered once, by the
// client: "request #7", "response #7". Every 5 requests one stats line: its state, heartbeats
// sent / answered, heartbeat RTT p50 / p99, reconnects, requests ok / failed. With --metrics
// HOST:PORT it serves every wheelbeat metric at http://HOST:PORT/metrics. SIGINT / SIGTERM stop
// it cleanly: client, then loop, then timer; exit status 0.
#include "echo_client.h"

#include "../common/format.h"
#include "../common/say.h"

#include <wheelbeat/net/tcp_client.h>

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>

using namespace std::chrono_literals;
namespace net = wheelbeat::net;
using Clock = std::chrono::steady_clock;

namespace samples::echo {

void ClientStats::print(std::string_view state) const {
  const auto rtt = channels->heartbeatRtt.snapshot();
  samples::info(
      "echo_client: stats: state={} heartbeats sent/answered={}/{} rtt p50={} p99={} "
      "reconnects={} requests ok/failed={}/{}",
      state, tasks->heartbeatsSent.load(), rtt.count, samples::human(rtt.quantile(0.50)),
      samples::human(rtt.quantile(0.99)), tasks->reconnectsStarted.load(), ok.load(),
      failed.load());
}

void Outstanding::begin() {
  const std::lock_guard lock(mutex_);
  ++open_;
}

void Outstanding::end() {
  const std::lock_guard lock(mutex_);
  if (--open_ == 0) idle_.notify_all();
}

bool Outstanding::waitIdle(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, limit, [this] { return open_ == 0; });
}

void sendLoop(const Pace& pace, wheelbeat::net::ShutdownSignal& shutdown, Outstanding& open,
              std::chrono::milliseconds answerWithin,
              const std::function<void(std::uint64_t)>& send, const std::function<void()>& report) {
  std::uint64_t n = 1;
  for (; (!pace.count || n <= *pace.count) && !shutdown.wait(pace.interval); ++n) {
    send(n);
    if (n % 5 == 0) report();
  }
  if (pace.count && n > *pace.count && !open.waitIdle(answerWithin)) {
    samples::warn("echo_client: answers still missing after {}", samples::human(answerWithin));
  }
}

void addClientCollectors(samples::SampleMetrics& metrics,
                         const wheelbeat::core::HashedWheelTimer& timer,
                         const std::shared_ptr<ClientStats>& stats) {
  metrics.add([&timer, stats](wheelbeat::core::MetricsWriter& out) {
    timer.writeMetrics(out);
    wheelbeat::tasks::writeMetrics(*stats->tasks, out);
    net::writeMetrics(*stats->channels, out);
    net::writeMetrics(*net::processChannelMetrics(), out);  // the registry's links, if any
  });
}

}  // namespace samples::echo

namespace {

constexpr auto kRequestTimeout = 2s;

// The command line, as parsed (nullopt: not given).
struct Args {
  std::optional<std::string> config;
  std::optional<std::string> host;
  std::optional<int> port;
  std::optional<std::string> metrics;  // HOST:PORT
  std::optional<int> count;
  int intervalMs = 1000;
  samples::echo::RegistryArgs registry;
  samples::echo::ClusterArgs cluster;
};

// Reads --config (client and heartbeat sections), then lets --host / --port override the server.
wheelbeat::config::Config configure(const Args& args) {
  wheelbeat::config::Config cfg;
  if (args.config) cfg = wheelbeat::config::load(*args.config);
  if (args.host) cfg.client.server.host = *args.host;
  if (args.port) cfg.client.server.port = static_cast<std::uint16_t>(*args.port);
  cfg.metrics = samples::SampleMetrics::withFlag(cfg.metrics, args.metrics);
  wheelbeat::config::applyLogging(cfg);
  return cfg;
}

net::ChannelHandler logHandler() {
  net::ChannelHandler h;
  // Every connection and every failed attempt ends here, with why (refused, reset, reconnect...).
  h.onClosed = [](net::Channel&, const net::CloseReason& why) {
    samples::info("closed: {}", why);
    std::fflush(stdout);
  };
  return h;
}

void logStateChange(net::ClientState from, net::ClientState to) {
  samples::info("state: {} -> {}", net::clientStateName(from), net::clientStateName(to));
  std::fflush(stdout);
}

using Stats = samples::echo::ClientStats;

// Request #n (the one number the log uses for it); its response (or its timeout, or the close
// that beat it) is logged on the loop.
void sendOne(net::TcpClient& client, std::uint64_t n, const std::shared_ptr<Stats>& stats,
             samples::echo::Outstanding& open) {
  const auto sentAt = Clock::now();
  const std::string body = fmt::format("hello #{}", n);
  open.begin();
  const net::RequestResult r = client.channel().request(
      body, kRequestTimeout, [sentAt, n, stats, &open](const net::CallResult& result) {
        const auto rtt = Clock::now() - sentAt;
        if (result.status == net::CallStatus::Ok) {
          stats->ok.fetch_add(1);
          samples::info("response #{}: \"{}\" in {}", n, result.body, samples::human(rtt));
        } else {
          stats->failed.fetch_add(1);
          samples::warn("request #{} failed: {}: {}", n, net::callStatusName(result.status),
                        result.error);
        }
        std::fflush(stdout);
        open.end();
      });
  if (r.sent != net::SendResult::Queued) {
    stats->failed.fetch_add(1);
    samples::warn("request #{} not sent: {}", n, net::sendResultName(r.sent));
    open.end();
  }
}

// --host / --port: one server, one connection.
int runDirect(const wheelbeat::config::Config& cfg, const samples::echo::Pace& pace,
              wheelbeat::net::ShutdownSignal& shutdown) {
  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop("echo-client", cfg.loop);
  auto stats = std::make_shared<Stats>();
  net::ClientOptions options = cfg.client;
  options.metrics = stats->channels;
  options.taskMetrics = stats->tasks;
  net::TcpClient client(loop, timer, options, logHandler(), logStateChange);
  const auto hb = cfg.client.heartbeat.resolved();
  samples::info("echo_client: to {} (heartbeat {}, half-open after {} read idle)",
                samples::endpointText(cfg.client.server), samples::human(hb.interval),
                samples::human(hb.idleTimeout));
  client.start();
  samples::SampleMetrics metrics;
  samples::echo::addClientCollectors(metrics, timer, stats);
  metrics.serve(loop, cfg.metrics, "echo_client");
  samples::echo::Outstanding open;
  samples::echo::sendLoop(
      pace, shutdown, open, kRequestTimeout + 1s,
      [&](std::uint64_t n) { sendOne(client, n, stats, open); },
      [&] { stats->print(net::clientStateName(client.state())); });
  metrics.close();
  samples::info("echo_client: {}, stopping after {} connect attempt(s)",
                shutdown.requested() ? fmt::format("signal {}", shutdown.signal())
                                     : std::string("all requests answered"),
                client.connectAttempts());
  client.close("shutting down");
  const int loopResult = loop.stop();
  timer.stop();
  samples::info("echo_client: stopped{}", loopResult == 0 ? "" : " (loop did not close cleanly)");
  return loopResult == 0 ? 0 : 1;
}

int run(const Args& args) {
  const wheelbeat::config::Config cfg = configure(args);
  const auto flags = samples::echo::registryFlags(args.registry, "echo-client");
  samples::echo::checkClusterArgs(args.cluster, flags.has_value());
  samples::echo::Pace pace;
  if (args.count) pace.count = static_cast<std::uint64_t>(*args.count);
  pace.interval = std::chrono::milliseconds(args.intervalMs);
  wheelbeat::net::ShutdownSignal
      shutdown;  // any thread may take the signal: the handler only writes
  if (flags) {
    if (args.host || args.port) {
      throw std::invalid_argument("--host / --port and --registry exclude each other");
    }
    return samples::echo::runCluster(cfg, *flags, args.cluster, pace, shutdown);
  }
  return runDirect(cfg, pace, shutdown);
}

}  // namespace

constexpr const char* kSynopsis =
    "usage: echo_client [--host HOST] [--port PORT] [--config FILE.json] [--metrics HOST:PORT]\n"
    "                   [--count N] [--interval-ms MS]\n"
    "                   [--registry embedded://H:P|redis://H:P|zookeeper://H:P --service "
    "INTERFACE\n"
    "                    [--application NAME] [--service-version V] [--group G]\n"
    "                    [--cluster-mode MODE] [--balancer KIND] [--retries N] [--hedge-ms MS]]\n"
    "       echo_client --help | --version";

constexpr const char* kDescription =
    "Sends one request a second and logs each response and every state change; the\n"
    "connection is kept by the library's heartbeat and reconnect tasks. With --registry it\n"
    "calls the providers the registry lists through the cluster client (failover and P2C\n"
    "unless told otherwise). Every 5 requests a stats line; --metrics\n"
    "serves Prometheus metrics on http://HOST:PORT/metrics. SIGINT / SIGTERM stop it (exit 0);\n"
    "a bad option exits 2.";

constexpr const char* kExamples =
    "  echo_client --host 127.0.0.1 --port 20880 --config samples/configs/client.json\n"
    "  echo_client --registry=zookeeper://127.0.0.1:2181 --service org.example.Echo "
    "--service-version 1.0.0\n"
    "  echo_client --registry embedded://127.0.0.1:9090 --service org.example.Echo "
    "--cluster-mode failover --balancer round_robin --retries 2 --hedge-ms 50\n";

int main(int argc, char** argv) {
  samples::lineBufferedOutput();
  wheelbeat::cli::CommandLine cmd("echo_client", kSynopsis, kDescription, kExamples);
  Args args;
  cmd.app()
      .add_option("--host", args.host, "the server's host (not with --registry)")
      ->type_name("HOST")
      ->default_str("the --config file's, else 127.0.0.1");
  cmd.app()
      .add_option("--port", args.port, "the server's port (not with --registry)")
      ->type_name("PORT")
      ->check(wheelbeat::cli::range(1, 65535).description(""))
      ->default_str("the --config file's, else 20880");
  cmd.app()
      .add_option("--config", args.config, "client and heartbeat sections from this file")
      ->type_name("FILE.json")
      ->default_str("none, the built-in defaults");
  cmd.app()
      .add_option("--metrics", args.metrics,
                  "serve every wheelbeat metric at http://HOST:PORT/metrics (Prometheus)")
      ->type_name("HOST:PORT")
      ->check(samples::hostPortCheck())
      ->default_str("the --config file's metrics section, else none");
  cmd.app()
      .add_option("--count", args.count, "send this many requests, wait for their answers, stop")
      ->type_name("N")
      ->check(wheelbeat::cli::range(1, 100000000).description(""))
      ->default_str("none, until SIGINT / SIGTERM");
  cmd.app()
      .add_option("--interval-ms", args.intervalMs, "the time between two requests")
      ->type_name("MS")
      ->check(wheelbeat::cli::range(1, 3600000).description(""))
      ->capture_default_str();
  samples::echo::addRegistryOptions(cmd.app(), args.registry, "echo-client");
  samples::echo::addClusterOptions(cmd.app(), args.cluster);
  if (const auto status = cmd.parse(argc, argv)) return *status;
  try {
    return run(args);
  } catch (const std::exception& e) {
    return cmd.fail(e.what());
  }
}
