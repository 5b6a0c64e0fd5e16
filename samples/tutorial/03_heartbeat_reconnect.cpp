// Tutorial 03 — heartbeat and reconnect between a client and a server (in one process).
//
// A TcpClient keeps its connection alive by itself: its HeartbeatTimerTask sends a heartbeat
// when the link has been idle for `heartbeat`, the server's channel answers it (no application
// code), and its ReconnectTimerTask reconnects with backoff and jitter when the link is down or
// read-idle beyond the idle timeout (3 x heartbeat: half-open). Both tasks run on the shared
// wheel; every socket lives on the EventLoop's thread. Here the server goes away and comes back
// on the same port, and the client finds it again.
#include "common/format.h"
#include "common/program.h"
#include "common/say.h"
#include "common/wait.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <memory>

using namespace std::chrono_literals;
namespace net = wheelbeat::net;
namespace tasks = wheelbeat::tasks;
using samples::waitUntil;

namespace {

tasks::HeartbeatOptions quickHeartbeat() {
  tasks::HeartbeatOptions hb;
  hb.interval = 200ms;                // idle timeout: 3 x 200 ms (the default rule)
  hb.reconnect.initialDelay = 100ms;  // then x1.6 with +-20 % jitter, at most 400 ms
  hb.reconnect.maxDelay = 400ms;
  return hb;
}

std::unique_ptr<net::TcpServer> startServer(net::EventLoop& loop,
                                            wheelbeat::core::HashedWheelTimer& timer,
                                            std::uint16_t port) {
  net::ServerOptions options;
  options.listen = {"127.0.0.1", port};  // port 0: any free port
  options.heartbeat = quickHeartbeat();
  auto server = std::make_unique<net::TcpServer>(loop, timer, options, net::ChannelHandler{});
  server->listen();
  return server;
}

}  // namespace

int main(int argc, char** argv) {
  if (const auto status = samples::noOptions(
          argc, argv, "tutorial_03_heartbeat_reconnect",
          "Tutorial 03: heartbeat and reconnect between a client and a server in one process; the "
          "server goes away and comes back, and the client finds it again."))
    return *status;
  samples::lineBufferedOutput();
  // libuv writes with write(2): a write to a connection the peer reset raises SIGPIPE, which
  // kills a process by default. Every program using wheelbeat's net layer ignores it (the
  // channel then sees EPIPE and reports the close through onClosed).
  std::signal(SIGPIPE, SIG_IGN);
  // One wheel and one loop for everything: no thread or timer per connection.
  wheelbeat::core::HashedWheelTimer timer(wheelbeat::core::WheelOptions{.tickDuration = 10ms});
  net::EventLoop loop("tutorial-03");
  auto server = startServer(loop, timer, 0);
  const std::uint16_t port = server->port();

  net::ClientOptions options;
  options.server = {"127.0.0.1", port};
  options.heartbeat = quickHeartbeat();
  options.connectTimeout = 1s;
  std::atomic<int> connects{0};
  net::ChannelHandler handler;
  handler.onClosed = [](net::Channel&, const net::CloseReason& why) {
    samples::info("  closed: {}", why);
  };
  auto onState = [&](net::ClientState from, net::ClientState to) {
    samples::info("  state: {} -> {}", net::clientStateName(from), net::clientStateName(to));
    if (to == net::ClientState::Connected) ++connects;
  };
  auto metrics = std::make_shared<tasks::TaskMetrics>();
  options.taskMetrics = metrics;
  net::TcpClient client(loop, timer, options, handler, onState);
  client.start();

  // 1. Connected; the link is idle, so heartbeats go out and come back (their round trip).
  const bool beating = waitUntil([&] { return client.channel().lastHeartbeatRtt() > 0ns; }, 5s);
  samples::info("heartbeat answered, rtt {}", samples::human(client.channel().lastHeartbeatRtt()));

  // 2. The server goes away: the client sees the close and retries (refused, with backoff).
  server.reset();  // stops it: every channel closed
  const bool retrying = waitUntil([&] { return client.connectAttempts() >= 3; }, 5s);
  samples::info("server down: {} connect attempts so far", client.connectAttempts());

  // 3. It comes back on the same port: the next attempt connects.
  server = startServer(loop, timer, port);
  const bool back =
      waitUntil([&] { return connects >= 2 && client.state() == net::ClientState::Connected; }, 5s);
  samples::info("reconnected: {} (metrics: {})", back, metrics->snapshot().toString());

  // Graceful order: client and server, then the loop (0 = every handle closed), then the wheel.
  client.close();
  server->stop();
  const int loopResult = loop.stop();
  timer.stop();
  const bool ok =
      beating && retrying && back && loopResult == 0 && metrics->snapshot().heartbeatsSent > 0;
  samples::info("{}", ok ? "03 ok" : "03 FAILED");
  return ok ? 0 : 1;
}
