// echo_client: a wheelbeat client on the command line.
//
//   build/bin/echo_client --host 127.0.0.1 --port 20880 [--config samples/configs/client.json]
//
// The library keeps the connection alive: heartbeats when the link is idle, a reconnect with
// backoff and jitter when it drops or goes half-open (read idle beyond the idle timeout). The
// application sends one request a second and logs its response, and logs every state change.
// SIGINT / SIGTERM stop it cleanly: client, then loop, then timer; exit status 0.
#include "../common/cli.h"
#include "../common/format.h"
#include "../common/shutdown_signal.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/tcp_client.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <exception>

using namespace std::chrono_literals;
namespace net = wheelbeat::net;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kRequestTimeout = 2s;

// Reads --config (client and heartbeat sections), then lets --host / --port override the server.
wheelbeat::config::Config configure(const samples::Cli& cli) {
  wheelbeat::config::Config cfg;
  if (const auto file = cli.get("--config")) cfg = wheelbeat::config::load(*file);
  if (const auto host = cli.get("--host")) cfg.client.server.host = *host;
  if (const auto port = cli.number("--port", 1, 65535)) {
    cfg.client.server.port = static_cast<std::uint16_t>(*port);
  }
  wheelbeat::core::setLogLevel(cfg.logLevel);
  return cfg;
}

net::ChannelHandler logHandler() {
  net::ChannelHandler h;
  // Every connection and every failed attempt ends here, with why (refused, reset, reconnect...).
  h.onClosed = [](net::Channel&, const net::CloseReason& why) {
    fmt::print("closed: {}\n", why);
    std::fflush(stdout);
  };
  return h;
}

void logStateChange(net::ClientState from, net::ClientState to) {
  fmt::print("state: {} -> {}\n", net::clientStateName(from), net::clientStateName(to));
  std::fflush(stdout);
}

// One request; the response (or its timeout, or the close that beat it) is logged on the loop.
void sendOne(net::TcpClient& client, std::uint64_t n) {
  const auto sentAt = Clock::now();
  const std::string body = fmt::format("hello #{}", n);
  const net::RequestResult r =
      client.channel().request(body, kRequestTimeout, [sentAt](const net::CallResult& result) {
        const auto rtt = Clock::now() - sentAt;
        if (result.status == net::CallStatus::Ok) {
          fmt::print("response {}: \"{}\" in {}\n", result.id, result.body, samples::human(rtt));
        } else {
          fmt::print("request {} failed: {}: {}\n", result.id, net::callStatusName(result.status),
                     result.error);
        }
        std::fflush(stdout);
      });
  if (r.sent != net::SendResult::Queued) {
    fmt::print("request #{} not sent: {}\n", n, net::sendResultName(r.sent));
  }
}

int run(int argc, char** argv) {
  const samples::Cli cli(argc, argv, {"--host", "--port", "--config"});
  const wheelbeat::config::Config cfg = configure(cli);
  samples::ShutdownSignal shutdown;  // any thread may take the signal: the handler only writes

  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop("echo-client", cfg.loop);
  net::TcpClient client(loop, timer, cfg.client, logHandler(), logStateChange);
  const auto hb = cfg.client.heartbeat.resolved();
  fmt::print("echo_client: to {} (heartbeat {}, half-open after {} read idle)\n",
             samples::endpointText(cfg.client.server), samples::human(hb.heartbeat),
             samples::human(hb.idleTimeout));
  client.start();

  for (std::uint64_t n = 1; !shutdown.wait(1s); ++n) sendOne(client, n);
  fmt::print("echo_client: signal {}, stopping after {} connect attempt(s)\n", shutdown.signal(),
             client.connectAttempts());
  client.close("shutting down");
  const int loopResult = loop.stop();
  timer.stop();
  fmt::print("echo_client: stopped{}\n", loopResult == 0 ? "" : " (loop did not close cleanly)");
  return loopResult == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "echo_client: {}\n", e.what());
    return 2;
  }
}
