// echo_server: a wheelbeat server on the command line.
//
//   build/bin/echo_server --port 20880 [--config samples/configs/server.json]
//                         [--metrics 127.0.0.1:9464] [--io-threads N]
//   build/bin/echo_server --port 0 --registry zookeeper://127.0.0.1:2181 --service org.example.Echo
//                         [--application NAME] [--service-version 1.0.0] [--group G]
//
// With --registry (echo_registry.h) it registers itself as a Dubbo provider once it listens:
//   dubbo://HOST:PORT/INTERFACE?anyhost=true&application=..&category=providers&default.timeout=..
//       &dubbo=2.0.2&heartbeat=..&interface=..&methods=echo&pid=..&side=provider&timestamp=..
//       &version=..   (group only when given)
// HOST is the listen host, 127.0.0.1 when it listens on every interface (a demo on one machine);
// heartbeat is its own interval in ms (consumers' Directory adopts it). On SIGTERM it
// unregisters (waiting at most 2 s for the registry's answer) before it stops serving, so
// consumers drop it at once instead of after the registry's liveness timeout.
//
// The library answers heartbeats by itself and closes channels idle beyond the close timeout
// (heartbeat.close_timeout, default the idle timeout = 3 x heartbeat.interval). The application
// part is one handler: every two-way request comes back as a response with the same id and the
// same body. SIGINT / SIGTERM stop it cleanly: server, then loop, then timer; exit status 0.
//
// With --io-threads N the server runs on an EventLoopGroup of N loops (0: one per core; the
// connections go round robin over them); without it, on the one loop the metrics endpoint and the
// registry share.
//
// Every 5 s it prints one line: connections open, accepted, idle closes, protocol errors. With
// --metrics HOST:PORT it serves every wheelbeat metric at http://HOST:PORT/metrics (Prometheus).
#include "../common/format.h"
#include "../common/metrics.h"
#include "../common/say.h"
#include "echo_registry.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/event_loop_group.h>
#include <wheelbeat/net/shutdown_signal.h>
#include <wheelbeat/net/tcp_server.h>

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>

using namespace std::chrono_literals;
namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;

namespace {

// The call timeout this provider advises its consumers (default.timeout): echo_client's.
constexpr std::int64_t kAdvisedTimeoutMs = 2000;

// The command line, as parsed (nullopt: not given).
struct Args {
  std::optional<std::string> config;
  std::optional<int> port;
  std::optional<std::string> metrics;  // HOST:PORT
  std::optional<std::size_t> ioThreads;
  samples::echo::RegistryArgs registry;
};

// Reads --config (server and heartbeat sections), then lets --port override the listen port.
wheelbeat::config::Config configure(const Args& args) {
  wheelbeat::config::Config cfg;
  if (args.config) cfg = wheelbeat::config::load(*args.config);
  if (args.port) cfg.server.listen.port = static_cast<std::uint16_t>(*args.port);
  cfg.metrics = samples::SampleMetrics::withFlag(cfg.metrics, args.metrics);
  wheelbeat::config::applyLogging(cfg);
  return cfg;
}

net::ChannelHandler echoHandler() {
  net::ChannelHandler h;
  h.onConnected = [](net::Channel& ch) {
    samples::info("connected: channel {} from {}", ch.id(), samples::endpointText(ch.remote()));
  };
  h.onFrame = [](net::Channel& ch, const net::FrameView& f) {
    if (!f.isRequest() || !f.isTwoWay()) return;  // one-way frames and stray responses: dropped
    // A response: no request bit, the request's serialization, status OK, the same id and body.
    const net::SendResult r = ch.send(f.serialization(), net::kStatusOk, f.id, f.body);
    if (r != net::SendResult::Queued) {
      samples::warn("echo of request {} not sent: {}", f.id, net::sendResultName(r));
    }
  };
  h.onClosed = [](net::Channel& ch, const net::CloseReason& why) {
    samples::info("closed: channel {} ({} heartbeats answered): {}", ch.id(),
                  ch.heartbeatsAnswered(), why);
  };
  return h;
}

// This process as a Dubbo provider url (see the file comment).
std::string providerUrl(const wheelbeat::config::Config& cfg, const samples::echo::RegistryFlags& f,
                        std::uint16_t port) {
  const std::string& host = cfg.server.listen.host;
  const bool any = host == "0.0.0.0" || host == "::" || host.empty();
  wheelbeat::registry::ServiceOptions service = samples::echo::serviceOf(f);
  service.timeout = std::chrono::milliseconds(kAdvisedTimeoutMs);
  return wheelbeat::registry::providerUrl(service, {any ? "127.0.0.1" : host, port},
                                          cfg.server.heartbeat.interval);
}

// connections open, accepted, idle closes, protocol errors (every kind).
void printStats(const net::TcpServer& server, const wheelbeat::tasks::TaskMetrics& tasks,
                const net::ChannelMetrics& channels) {
  std::uint64_t protocolErrors = 0;
  for (const auto e : {net::DecodeError::BadMagic, net::DecodeError::BodyTooLarge,
                       net::DecodeError::TruncatedAtEof, net::DecodeError::BudgetExceeded,
                       net::DecodeError::OutOfMemory}) {
    protocolErrors += channels.decodeErrors(e);
  }
  samples::info("echo_server: stats: connections={} accepted={} idle-closes={} protocol-errors={}",
                server.connections(), server.accepted(), tasks.closes.load(), protocolErrors);
}

// Waits for one registry call's final answer (a failback retry is not one), at most `limit`.
bool await(const std::function<void(wheelbeat::tasks::Completion)>& call,
           std::chrono::milliseconds limit, std::string& error) {
  auto answered = std::make_shared<std::promise<wheelbeat::tasks::CallResult>>();
  auto result = answered->get_future();
  call([answered](const wheelbeat::tasks::CallResult& r) {
    if (r.retrying) return;  // failback keeps trying: not the end of it
    try {
      answered->set_value(r);
    } catch (const std::future_error&) {  // NOLINT(bugprone-empty-catch): answered already
    }
  });
  if (result.wait_for(limit) != std::future_status::ready) {
    error = "no answer";
    return false;
  }
  const auto r = result.get();
  error = r.ok ? "" : fmt::format("{}: {}", r.error, r.message);
  return r.ok;
}

int run(const Args& args) {
  const wheelbeat::config::Config cfg = configure(args);
  const auto flags = samples::echo::registryFlags(args.registry, "echo-server");
  wheelbeat::net::ShutdownSignal
      shutdown;  // any thread may take the signal: the handler only writes a byte

  // Declaration order is destruction order in reverse: the server goes before the loop, the
  // loop before the timer (both must outlive what uses them).
  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop("echo-server", cfg.loop);
  auto taskMetrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  const auto& channelMetrics = net::processChannelMetrics();
  net::ServerOptions serverOptions = cfg.server;
  serverOptions.taskMetrics = taskMetrics;
  std::optional<net::EventLoopGroup> group;
  if (args.ioThreads) group.emplace(*args.ioThreads, cfg.loop);
  net::TcpServer server = group ? net::TcpServer(*group, timer, serverOptions, echoHandler())
                                : net::TcpServer(loop, timer, serverOptions, echoHandler());
  const std::uint16_t port = server.listen();
  const auto hb = cfg.server.heartbeat.resolved();
  samples::info("echo_server: listening on {} (closes channels idle beyond {}; {} loop{})",
                samples::endpointText({cfg.server.listen.host, port}),
                samples::human(hb.closeTimeout), group ? group->size() : 1,
                group && group->size() > 1 ? "s" : "");
  std::fflush(stdout);
  samples::SampleMetrics metrics;
  metrics.add([&](wheelbeat::core::MetricsWriter& out) {
    timer.writeMetrics(out);
    wheelbeat::tasks::writeMetrics(*taskMetrics, out);
    net::writeMetrics(*channelMetrics, out);
  });
  metrics.serve(loop, cfg.metrics, "echo_server");

  std::unique_ptr<registry::Registry> reg;
  std::string url;
  if (flags) {
    reg = registry::makeRegistry(loop, timer, flags->url,
                                 samples::echo::registrySetup(cfg, *flags, "echo_server"));
    reg->start();
    url = providerUrl(cfg, *flags, port);
    // Registered in the background: failback retries until the registry takes it.
    reg->registerUrl(url, [url](const wheelbeat::tasks::CallResult& r) {
      if (r.ok) {
        samples::info("echo_server: registered {}", url);
      } else {
        samples::warn("echo_server: register failed ({}: {}){}", r.error, r.message,
                      r.retrying ? ", retrying" : "");
      }
      std::fflush(stdout);
    });
  }

  for (int second = 1; !shutdown.wait(1s); ++second) {
    if (second % 5 == 0) printStats(server, *taskMetrics, *channelMetrics);
    std::fflush(stdout);
  }
  samples::info("echo_server: signal {}, stopping ({} accepted, {} open)", shutdown.signal(),
                server.accepted(), server.connections());
  if (reg) {
    // Unregistered before the server stops: consumers close their links to it at once.
    std::string error;
    if (await([&](wheelbeat::tasks::Completion done) { reg->unregisterUrl(url, std::move(done)); },
              2000ms, error)) {
      samples::info("echo_server: unregistered {}", url);
    } else {
      samples::warn("echo_server: unregister failed ({}): the registry's liveness rule removes it",
                    error);
    }
    std::fflush(stdout);
  }
  metrics.close();
  server.stop();
  if (reg) reg->close();
  const int groupResult = group ? group->stop() : 0;
  const int loopResult = loop.stop() != 0 ? -1 : groupResult;
  timer.stop();
  samples::info("echo_server: stopped{}", loopResult == 0 ? "" : " (loop did not close cleanly)");
  return loopResult == 0 ? 0 : 1;
}

}  // namespace

constexpr const char* kSynopsis =
    "usage: echo_server [--port PORT] [--config FILE.json] [--metrics HOST:PORT] [--io-threads N]\n"
    "                   [--registry embedded://H:P|redis://H:P|zookeeper://H:P --service "
    "INTERFACE\n"
    "                    [--application NAME] [--service-version V] [--group G]]\n"
    "       echo_server --help | --version";

constexpr const char* kDescription =
    "Answers every two-way request with its own body; heartbeats and idle closes are the\n"
    "library's. With --registry it registers itself as a Dubbo provider and unregisters on\n"
    "SIGTERM. Every 5 s: connections, accepted, idle closes, protocol errors. --metrics\n"
    "serves Prometheus metrics on http://HOST:PORT/metrics. SIGINT / SIGTERM stop it\n"
    "cleanly (exit 0); a bad option exits 2.";

constexpr const char* kExamples =
    "  echo_server --port 20880 --config samples/configs/server.json\n"
    "  echo_server --port=0 --registry zookeeper://127.0.0.1:2181 --service org.example.Echo "
    "--service-version 1.0.0\n";

int main(int argc, char** argv) {
  samples::lineBufferedOutput();
  wheelbeat::cli::CommandLine cmd("echo_server", kSynopsis, kDescription, kExamples);
  Args args;
  cmd.app()
      .add_option("--port", args.port, "the listen port, 0: any free one")
      ->type_name("PORT")
      ->check(wheelbeat::cli::range(0, 65535).description(""))
      ->default_str("the --config file's, else 20880");
  cmd.app()
      .add_option("--config", args.config, "server and heartbeat sections from this file")
      ->type_name("FILE.json")
      ->default_str("none, the built-in defaults");
  cmd.app()
      .add_option("--metrics", args.metrics,
                  "serve every wheelbeat metric at http://HOST:PORT/metrics (Prometheus)")
      ->type_name("HOST:PORT")
      ->check(samples::hostPortCheck())
      ->default_str("the --config file's metrics section, else none");
  cmd.app()
      .add_option("--io-threads", args.ioThreads,
                  "serve on N event loops, connections round robin (0: one per core)")
      ->type_name("N")
      ->check(wheelbeat::cli::range(std::size_t{0}, wheelbeat::net::kMaxIoThreads).description(""))
      ->default_str("one loop");
  samples::echo::addRegistryOptions(cmd.app(), args.registry, "echo-server");
  if (const auto status = cmd.parse(argc, argv)) return *status;
  try {
    return run(args);
  } catch (const std::exception& e) {
    return cmd.fail(e.what());
  }
}
