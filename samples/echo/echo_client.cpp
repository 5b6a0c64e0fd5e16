// echo_client: a wheelbeat client on the command line.
//
//   build/bin/echo_client --host 127.0.0.1 --port 20880 [--config samples/configs/client.json]
//                         [--metrics 127.0.0.1:9465]
//   build/bin/echo_client --registry zookeeper://127.0.0.1:2181 --service org.example.Echo
//                         [--application NAME] [--service-version 1.0.0] [--group G]
//
// With --registry (echo_registry.h) the providers come from the registry: a registry::Directory
// keeps one connection per listed provider that matches this consumer as Dubbo matches them
// (registry::matches, Dubbo's rules: interface, version equal or "*", group equal, "*" or one of
// "a,b"), and each request goes to the next connected provider (round robin). Every change is one
// line:
//   providers: N: URL, URL            the list the directory follows now
//   connected: URL                    a provider's link is up
//   closed: URL (WHY)                 a provider's link is closed for good (it left the list)
//   empty list held: N kept           the registry said "none" while it was unreliable
// On ZooKeeper the client also registers its consumer url (/dubbo/INTERFACE/consumers), as
// Dubbo consumers do; the embedded and Redis registries keep providers only. On exit it prints,
// for each provider it closed, how many connect attempts were made to it after the close (0: a
// provider that left is never dialled again).
//
// The library keeps the connection alive: heartbeats when the link is idle, a reconnect with
// backoff and jitter when it drops or goes half-open (read idle beyond the idle timeout). The
// application sends one request a second and logs its response, and logs every state change.
// SIGINT / SIGTERM stop it cleanly: client, then loop, then timer; exit status 0.
//
// Requests are numbered once, by the client: "request #7", "response #7". Every 5 s one line:
// its state, heartbeats sent / answered, heartbeat RTT p50 / p99, reconnects, requests ok /
// failed. With --metrics HOST:PORT it serves every wheelbeat metric at http://HOST:PORT/metrics.
#include "../common/format.h"
#include "../common/metrics.h"
#include "../common/say.h"
#include "../common/shutdown_signal.h"
#include "echo_registry.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/registry/directory.h>

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

using namespace std::chrono_literals;
namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kRequestTimeout = 2s;

// The command line, as parsed (nullopt: not given).
struct Args {
  std::optional<std::string> config;
  std::optional<std::string> host;
  std::optional<int> port;
  std::optional<std::string> metrics;  // HOST:PORT
  samples::echo::RegistryArgs registry;
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

// What the stats line reports besides the library's counters. Any thread.
struct Stats {
  std::shared_ptr<wheelbeat::tasks::TaskMetrics> tasks =
      std::make_shared<wheelbeat::tasks::TaskMetrics>();
  std::shared_ptr<net::ChannelMetrics> channels = std::make_shared<net::ChannelMetrics>();
  std::atomic<std::uint64_t> ok{0};
  std::atomic<std::uint64_t> failed{0};  // timed out, closed first, or not sent

  // "echo_client: stats: state=connected heartbeats sent/answered=3/3 rtt p50=180us p99=410us
  // reconnects=0 requests ok/failed=5/0" (p50 / p99 estimated inside the histogram's buckets).
  void print(std::string_view state) const {
    const auto rtt = channels->heartbeatRtt.snapshot();
    samples::info(
        "echo_client: stats: state={} heartbeats sent/answered={}/{} rtt p50={} p99={} "
        "reconnects={} requests ok/failed={}/{}",
        state, tasks->heartbeatsSent.load(), rtt.count, samples::human(rtt.quantile(0.50)),
        samples::human(rtt.quantile(0.99)), tasks->reconnectsStarted.load(), ok.load(),
        failed.load());
  }
};

// Request #n (the one number the log uses for it); its response (or its timeout, or the close
// that beat it) is logged on the loop.
void sendOne(net::TcpClient& client, std::uint64_t n, const std::shared_ptr<Stats>& stats) {
  const auto sentAt = Clock::now();
  const std::string body = fmt::format("hello #{}", n);
  const net::RequestResult r = client.channel().request(
      body, kRequestTimeout, [sentAt, n, stats](const net::CallResult& result) {
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
      });
  if (r.sent != net::SendResult::Queued) {
    stats->failed.fetch_add(1);
    samples::warn("request #{} not sent: {}", n, net::sendResultName(r.sent));
  }
}

// The collectors of what a client run owns.
void addCollectors(samples::SampleMetrics& metrics, const wheelbeat::core::HashedWheelTimer& timer,
                   const std::shared_ptr<Stats>& stats) {
  metrics.add([&timer, stats](wheelbeat::core::MetricsWriter& out) {
    timer.writeMetrics(out);
    wheelbeat::tasks::writeMetrics(*stats->tasks, out);
    net::writeMetrics(*stats->channels, out);
    net::writeMetrics(*net::processChannelMetrics(), out);  // the registry's links, if any
  });
}

// Each provider client this process used, and the attempts it had made when the directory
// closed it: what the exit report compares with.
class Followed {
public:
  void used(const std::string& url, std::shared_ptr<net::TcpClient> client) {
    std::lock_guard lock(mutex_);
    clients_[url] = std::move(client);
  }
  void closed(const std::string& url) {
    std::lock_guard lock(mutex_);
    const auto it = clients_.find(url);
    if (it != clients_.end()) attemptsAtClose_[url] = it->second->connectAttempts();
  }
  void report() {
    std::lock_guard lock(mutex_);
    for (const auto& [url, at] : attemptsAtClose_) {
      const auto now = clients_.at(url)->connectAttempts();
      samples::info("after close: {} connect attempt(s) to {} since it was closed ({} in all)",
                    now - at, url, now);
    }
  }

private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<net::TcpClient>> clients_;
  std::map<std::string, std::uint64_t> attemptsAtClose_;
};

std::string joined(const std::vector<std::string>& urls) {
  std::string out;
  for (const auto& u : urls) out += (out.empty() ? "" : ", ") + u;
  return out;
}

// The url of the provider `client` talks to ("" if it left meanwhile).
std::string urlOf(const registry::Directory& directory, const net::TcpClient& client) {
  for (const auto& p : directory.providers()) {
    if (p.endpoint == client.channel().remote()) return p.url;
  }
  return {};
}

// --registry: the providers from the registry, through a Directory (see the file comment).
int runWithRegistry(const wheelbeat::config::Config& cfg, const samples::echo::RegistryFlags& f,
                    samples::ShutdownSignal& shutdown) {
  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop("echo-client", cfg.loop);
  auto reg = registry::makeRegistry(loop, timer, f.url,
                                    samples::echo::registrySetup(cfg, f, "echo_client"));
  reg->start();
  const registry::ServiceOptions service = samples::echo::serviceOf(f);
  const std::string consumer = registry::consumerUrl(service, "127.0.0.1");
  const bool registersConsumer = f.registry.kind == registry::RegistryKind::ZooKeeper;
  if (registersConsumer) reg->registerUrl(consumer);

  auto stats = std::make_shared<Stats>();
  registry::DirectoryOptions options;
  options.client = cfg.client;
  options.client.metrics = stats->channels;
  options.client.taskMetrics = stats->tasks;
  options.protectionWindow = cfg.registry.session;  // providers re-register within a session
  options.accept = [service](std::string_view url) { return registry::matches(service, url); };
  auto followed = std::make_shared<Followed>();
  registry::DirectoryEvents events;
  events.onList = [](const std::vector<std::string>& urls) {
    samples::info("providers: {}{}{}", urls.size(), urls.empty() ? "" : ": ", joined(urls));
    std::fflush(stdout);
  };
  events.onConnected = [](const std::string& url, net::Channel&) {
    samples::info("connected: {}", url);
    std::fflush(stdout);
  };
  events.onClosed = [followed](const std::string& url, const net::CloseReason& why) {
    followed->closed(url);
    samples::info("closed: {} ({})", url, why);
    std::fflush(stdout);
  };
  events.onEmptyHeld = [](std::size_t kept) {
    samples::info("empty list held: {} kept (the registry is not trusted yet)", kept);
    std::fflush(stdout);
  };
  net::ChannelHandler links;
  links.onClosed = [](net::Channel& ch, const net::CloseReason& why) {
    samples::info("link to {} closed: {}", samples::endpointText(ch.remote()), why);
    std::fflush(stdout);
  };
  registry::Directory directory(loop, timer, *reg, f.service, options, links, events);
  samples::info("echo_client: following {} (version {}, group {}) on {}{}", f.service,
                f.version.empty() ? "none" : f.version, f.group.empty() ? "none" : f.group, f.url,
                registersConsumer ? fmt::format(" as {}", consumer) : "");
  std::fflush(stdout);
  directory.start();
  samples::SampleMetrics metrics;
  addCollectors(metrics, timer, stats);
  metrics.add([&](wheelbeat::core::MetricsWriter& out) {
    reg->writeMetrics(out);
    directory.writeMetrics(out);
  });
  metrics.serve(loop, cfg.metrics, "echo_client");

  for (std::uint64_t n = 1; !shutdown.wait(1s); ++n) {
    if (auto client = directory.pick()) {
      followed->used(urlOf(directory, *client), client);
      sendOne(*client, n, stats);
    } else {
      stats->failed.fetch_add(1);
      samples::warn("request #{} not sent: no provider connected", n);
      std::fflush(stdout);
    }
    if (n % 5 == 0) {
      stats->print(fmt::format("{}-of-{}-connected",
                               stats->channels->channels(net::ClientState::Connected),
                               directory.providers().size()));
    }
  }
  metrics.close();
  samples::info("echo_client: signal {}, stopping ({} provider(s) followed)", shutdown.signal(),
                directory.providers().size());
  directory.close();
  followed->report();
  reg->close();
  const int loopResult = loop.stop();
  timer.stop();
  samples::info("echo_client: stopped{}", loopResult == 0 ? "" : " (loop did not close cleanly)");
  return loopResult == 0 ? 0 : 1;
}

int run(const Args& args) {
  const wheelbeat::config::Config cfg = configure(args);
  const auto flags = samples::echo::registryFlags(args.registry, "echo-client");
  samples::ShutdownSignal shutdown;  // any thread may take the signal: the handler only writes
  if (flags) {
    if (args.host || args.port) {
      throw std::invalid_argument("--host / --port and --registry exclude each other");
    }
    return runWithRegistry(cfg, *flags, shutdown);
  }

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
  addCollectors(metrics, timer, stats);
  metrics.serve(loop, cfg.metrics, "echo_client");

  for (std::uint64_t n = 1; !shutdown.wait(1s); ++n) {
    sendOne(client, n, stats);
    if (n % 5 == 0) stats->print(net::clientStateName(client.state()));
  }
  metrics.close();
  samples::info("echo_client: signal {}, stopping after {} connect attempt(s)", shutdown.signal(),
                client.connectAttempts());
  client.close("shutting down");
  const int loopResult = loop.stop();
  timer.stop();
  samples::info("echo_client: stopped{}", loopResult == 0 ? "" : " (loop did not close cleanly)");
  return loopResult == 0 ? 0 : 1;
}

}  // namespace

constexpr const char* kSynopsis =
    "usage: echo_client [--host HOST] [--port PORT] [--config FILE.json] [--metrics HOST:PORT]\n"
    "                   [--registry embedded://H:P|redis://H:P|zookeeper://H:P --service "
    "INTERFACE\n"
    "                    [--application NAME] [--service-version V] [--group G]]\n"
    "       echo_client --help | --version";

constexpr const char* kDescription =
    "Sends one request a second and logs each response and every state change; the\n"
    "connection is kept by the library's heartbeat and reconnect tasks. With --registry it\n"
    "keeps one connection per provider the registry lists. Every 5 s a stats line; --metrics\n"
    "serves Prometheus metrics on http://HOST:PORT/metrics. SIGINT / SIGTERM stop it (exit 0);\n"
    "a bad option exits 2.";

constexpr const char* kExamples =
    "  echo_client --host 127.0.0.1 --port 20880 --config samples/configs/client.json\n"
    "  echo_client --registry=zookeeper://127.0.0.1:2181 --service org.example.Echo "
    "--service-version 1.0.0\n";

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
      ->check(CLI::Range(1, 65535).description(""))
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
  samples::echo::addRegistryOptions(cmd.app(), args.registry, "echo-client");
  if (const auto status = cmd.parse(argc, argv)) return *status;
  try {
    return run(args);
  } catch (const std::exception& e) {
    return cmd.fail(e.what());
  }
}
