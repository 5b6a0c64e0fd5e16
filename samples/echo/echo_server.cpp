// echo_server: a wheelbeat server on the command line.
//
//   build/bin/echo_server --port 20880 [--config samples/configs/server.json]
//
// The library answers heartbeats by itself and closes channels idle beyond the close timeout
// (heartbeat.close_timeout, default the idle timeout = 3 x heartbeat.interval). The application
// part is one handler: every two-way request comes back as a response with the same id and the
// same body. SIGINT / SIGTERM stop it cleanly: server, then loop, then timer; exit status 0.
#include "../common/cli.h"
#include "../common/format.h"
#include "../common/shutdown_signal.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/tcp_server.h>

#include <fmt/format.h>

#include <cstdio>
#include <exception>

using namespace std::chrono_literals;
namespace net = wheelbeat::net;

namespace {

// Reads --config (server and heartbeat sections), then lets --port override the listen port.
wheelbeat::config::Config configure(const samples::Cli& cli) {
  wheelbeat::config::Config cfg;
  if (const auto file = cli.get("--config")) cfg = wheelbeat::config::load(*file);
  if (const auto port = cli.number("--port", 0, 65535)) {
    cfg.server.listen.port = static_cast<std::uint16_t>(*port);
  }
  wheelbeat::core::setLogLevel(cfg.logLevel);
  return cfg;
}

net::ChannelHandler echoHandler() {
  net::ChannelHandler h;
  h.onConnected = [](net::Channel& ch) {
    fmt::print("connected: channel {} from {}\n", ch.id(), samples::endpointText(ch.remote()));
  };
  h.onFrame = [](net::Channel& ch, const net::FrameView& f) {
    if (!f.isRequest() || !f.isTwoWay()) return;  // one-way frames and stray responses: dropped
    // A response: no request bit, the request's serialization, status OK, the same id and body.
    const net::SendResult r = ch.send(f.serialization(), net::kStatusOk, f.id, f.body);
    if (r != net::SendResult::Queued) {
      fmt::print("echo of request {} not sent: {}\n", f.id, net::sendResultName(r));
    }
  };
  h.onClosed = [](net::Channel& ch, const net::CloseReason& why) {
    fmt::print("closed: channel {} ({} heartbeats answered): {}\n", ch.id(),
               ch.heartbeatsAnswered(), why);
  };
  return h;
}

int run(int argc, char** argv) {
  const samples::Cli cli(argc, argv, {"--port", "--config"});
  const wheelbeat::config::Config cfg = configure(cli);
  samples::ShutdownSignal
      shutdown;  // any thread may take the signal: the handler only writes a byte

  // Declaration order is destruction order in reverse: the server goes before the loop, the
  // loop before the timer (both must outlive what uses them).
  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop("echo-server", cfg.loop);
  net::TcpServer server(loop, timer, cfg.server, echoHandler());
  const std::uint16_t port = server.listen();
  const auto hb = cfg.server.heartbeat.resolved();
  fmt::print("echo_server: listening on {}:{} (closes channels idle beyond {})\n",
             cfg.server.listen.host, port, samples::human(hb.closeTimeout));
  std::fflush(stdout);

  while (!shutdown.wait(1s)) std::fflush(stdout);
  fmt::print("echo_server: signal {}, stopping ({} accepted, {} open)\n", shutdown.signal(),
             server.accepted(), server.connections());
  server.stop();
  const int loopResult = loop.stop();
  timer.stop();
  fmt::print("echo_server: stopped{}\n", loopResult == 0 ? "" : " (loop did not close cleanly)");
  return loopResult == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "echo_server: {}\n", e.what());
    return 2;
  }
}
