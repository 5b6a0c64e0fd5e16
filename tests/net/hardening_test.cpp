// Hardening on loopback: a server beyond max_connections accepts and closes at once (counted);
// a client whose connection dies makes its first attempt after the policy's first backoff, not at
// its reconnect task's next check (60 s away here); an attempt in flight is not retried over.
#include "support.h"

namespace wbnet {

TEST_SUITE("net") {

TEST_CASE("beyond max_connections a connection is accepted and closed at once, and counted") {
  Env env;
  Recorder rec;
  ServerOptions options = serverOptions();
  options.maxConnections = 2;
  TcpServer srv(env.loop, env.timer, options, rec.handler());
  const std::uint16_t port = srv.listen();
  RawSocket a, b, c;
  REQUIRE(a.connect(port));
  REQUIRE(b.connect(port));
  REQUIRE(waitFor([&] { return srv.connections() == 2; }));
  REQUIRE(c.connect(port));  // the kernel completes the handshake; the server closes it
  CHECK(c.waitPeerClosed(5s));
  CHECK(srv.rejected() == 1);
  CHECK(srv.accepted() == 2);
  CHECK(srv.connections() == 2);
  CHECK(rec.connected.load() == 2);  // the rejected one never became a channel

  a.close();  // room again
  REQUIRE(waitFor([&] { return srv.connections() == 1; }));
  RawSocket d;
  REQUIRE(d.connect(port));
  REQUIRE(waitFor([&] { return srv.connections() == 2; }));
  d.sendAll(heartbeatRequest(5));
  CHECK(d.recvExactly(17) == heartbeatResponse(5));  // served
  CHECK(srv.rejected() == 1);
  CHECK(srv.accepted() == 3);
  srv.stop();
}

TEST_CASE(
    "a client whose server goes away tries again after the first backoff, not the next check") {
  Env env;
  ServerOptions so = serverOptions();
  auto srv = std::make_unique<TcpServer>(env.loop, env.timer, so, ChannelHandler{});
  const std::uint16_t port = srv->listen();
  ClientOptions co = clientOptions(port);
  co.heartbeat.interval = 60s;  // Dubbo's default: the reconnect task checks every 60 s
  co.heartbeat.reconnect.initialDelay = 300ms;
  co.heartbeat.reconnect.maxDelay = 1s;
  co.heartbeat.reconnect.jitter = wheelbeat::tasks::Jitter::None;
  std::atomic<std::int64_t> closedAt{0};
  ChannelHandler handler;
  handler.onClosed = [&](Channel&, const CloseReason&) {  // the first close: the server's EOF
    std::int64_t none = 0;
    closedAt.compare_exchange_strong(none, Clock::now().time_since_epoch().count());
  };
  TcpClient cli(env.loop, env.timer, co, std::move(handler));
  cli.start();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  REQUIRE(cli.connectAttempts() == 1);

  srv->stop();  // EOF at the client
  REQUIRE(waitFor([&] { return closedAt.load() != 0; }));
  REQUIRE(waitFor([&] { return cli.connectAttempts() == 2; }, 10s));
  const auto waited = Clock::now() - Clock::time_point(Clock::duration(closedAt.load()));
  CHECK(waited >= 300ms);  // the backoff is honoured...
  CHECK(waited < 5s);      // ...and nothing waits for the check 60 s away
  // The attempt was refused (nothing listens): the next waits the next delay (300 ms × 1.6).
  REQUIRE(waitFor([&] { return cli.connectAttempts() == 3; }, 10s));
  cli.close();
}

}  // TEST_SUITE("net")

}  // namespace wbnet
