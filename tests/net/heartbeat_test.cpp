// Heartbeats on loopback: client and server exchanging them, and the exact bytes a server answers
// to a hand-written peer.
#include "support.h"

namespace wbnet {

TEST_SUITE("net") {

TEST_CASE("heartbeat exchange between a wheelbeat client and server") {
  Env env;
  Recorder server;
  Recorder client;
  auto metrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  TcpServer srv(env.loop, env.timer, serverOptions(), server.handler());
  ClientOptions options = clientOptions(srv.listen());
  options.taskMetrics = metrics;
  TcpClient cli(env.loop, env.timer, options, client.handler());
  cli.start();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  // Idle traffic: the client's heartbeat task pings every ~100 ms; the server answers each.
  REQUIRE(waitFor([&] { return metrics->heartbeatsSent.load() >= 3; }, 5s));
  REQUIRE(waitFor([&] { return cli.channel().lastHeartbeatRtt() > 0ns; }));
  CHECK(cli.channel().lastHeartbeatRtt() < 1s);
  // Heartbeats are consumed by the channels: the application saw no frame.
  CHECK(server.frameCount() == 0);
  CHECK(client.frameCount() == 0);
  CHECK(cli.state() == ClientState::Connected);
  CHECK(metrics->reconnectsStarted.load() == 0);
  CHECK(cli.connectAttempts() == 1);
  // Read activity stays fresh on the client: lastRead within idle timeout of now.
  CHECK(env.timer.now() - cli.channel().lastRead() < 300ms);
  cli.close();
  srv.stop();
  CHECK(server.closed.load() == 1);
  CHECK(client.closeReasons().at(0).kind == CloseKind::ClosedByOwner);
}

// The answers of one read wait in the loop's read buffer and leave at its end, in order (id 0
// included: nothing treats it as "none"); the buffer is emptied for the next read.
TEST_CASE("server answers every heartbeat of one read, in order") {
  Env env;
  Recorder server;
  TcpServer srv(env.loop, env.timer, serverOptions(), server.handler());
  RawSocket raw;
  REQUIRE(raw.connect(srv.listen()));
  REQUIRE(raw.sendAll(heartbeatRequest(7) + heartbeatRequest(8) + heartbeatRequest(0)));
  CHECK(raw.recvExactly(3 * 17) ==
        heartbeatResponse(7) + heartbeatResponse(8) + heartbeatResponse(0));
  // Alone: nothing of the last read is written again.
  REQUIRE(raw.sendAll(heartbeatRequest(9)));
  CHECK(raw.recvExactly(17) == heartbeatResponse(9));
  CHECK(server.frameCount() == 0);
  srv.stop();
  CHECK(raw.waitPeerClosed());
}

TEST_CASE("server answers a raw client heartbeat with the exact 17 bytes") {
  Env env;
  Recorder server;
  TcpServer srv(env.loop, env.timer, serverOptions(), server.handler());
  RawSocket raw;
  REQUIRE(raw.connect(srv.listen()));
  const std::uint64_t id = 0x0102030405060708ULL;
  REQUIRE(raw.sendAll(heartbeatRequest(id)));
  const std::string answer = raw.recvExactly(17);
  const std::string expected("\xDA\xBB\x22\x14\x01\x02\x03\x04\x05\x06\x07\x08\x00\x00\x00\x01\x4E",
                             17);
  CHECK(answer == expected);
  CHECK(answer == heartbeatResponse(id));
  // Id 0 is an ordinary id.
  REQUIRE(raw.sendAll(heartbeatRequest(0)));
  CHECK(raw.recvExactly(17) == heartbeatResponse(0));
  CHECK(server.frameCount() == 0);
  REQUIRE(waitFor([&] { return srv.connections() == 1; }));
  srv.stop();
  CHECK(raw.waitPeerClosed());
  CHECK(srv.connections() == 0);
  CHECK(server.closed.load() == 1);
}

TEST_CASE("heartbeat responses from a raw server keep a client fresh and give an RTT") {
  Env env;
  RawListener peer;
  Recorder client;
  auto metrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  ClientOptions options = clientOptions(peer.port());
  options.taskMetrics = metrics;
  TcpClient cli(env.loop, env.timer, options, client.handler());
  cli.start();
  RawSocket conn(peer.accept());
  REQUIRE(conn.fd() >= 0);
  // Answer three heartbeats by hand, checking each request's exact bytes.
  for (int i = 0; i < 3; ++i) {
    const std::string req = conn.recvExactly(17);
    REQUIRE(req.size() == 17);
    CHECK(req.substr(0, 4) == std::string("\xDA\xBB\xE2\x00", 4));
    CHECK(req.substr(12) == std::string("\x00\x00\x00\x01\x4E", 5));
    REQUIRE(conn.sendAll(std::string("\xDA\xBB\x22\x14", 4) + req.substr(4)));
  }
  REQUIRE(waitFor([&] { return cli.channel().lastHeartbeatRtt() > 0ns; }));
  CHECK(cli.state() == ClientState::Connected);
  CHECK(metrics->reconnectsStarted.load() == 0);
  cli.close();
  CHECK(conn.waitPeerClosed());
}

// A heartbeat queued alone waits outside the outbox and is written from a fixed array (no buffer
// allocated on the wheel thread and freed on the loop's); frames queued before its flush go
// first, a second heartbeat joins them in the outbox. Every frame arrives once, in that order,
// and the send-queue count returns to 0.
namespace {
// A client that sends only the heartbeats its test sends, connected to a raw peer the test plays.
struct RawPeerSession {
  explicit RawPeerSession(Env& env, std::shared_ptr<ChannelMetrics> metrics = nullptr)
      : cli(env.loop, env.timer, options(peer.port(), std::move(metrics))),
        conn(startThenAccept()) {}
  static ClientOptions options(std::uint16_t port, std::shared_ptr<ChannelMetrics> metrics) {
    ClientOptions o = clientOptions(port);
    o.heartbeat.interval = 1min;
    o.metrics = std::move(metrics);
    return o;
  }
  int startThenAccept() {
    cli.start();
    return peer.accept();
  }
  RawListener peer;
  TcpClient cli;
  RawSocket conn;
};
}  // namespace

TEST_CASE("a heartbeat held aside and frames queued behind it arrive once each") {
  Env env;
  RawPeerSession s(env);
  REQUIRE(s.conn.fd() >= 0);
  REQUIRE(waitFor([&] { return s.cli.state() == ClientState::Connected; }));
  Channel& ch = s.cli.channel();
  RawSocket& conn = s.conn;
  LoopHold hold(env.loop);  // the loop flushes nothing until released
  ch.sendHeartbeat();       // id 1, alone: held aside
  CHECK(ch.queuedBytes() == 17);
  REQUIRE(ch.send(flag::kRequest | kHessian2, 0, 77, "data") == SendResult::Queued);
  ch.sendHeartbeat();  // id 2: into the outbox, behind the frame
  CHECK(ch.queuedBytes() == 17 + 20 + 17);
  hold.release();
  const std::string expected =
      frame(flag::kRequest | kHessian2, 0, 77, "data") + heartbeatRequest(2) + heartbeatRequest(1);
  CHECK(conn.recvExactly(expected.size()) == expected);
  REQUIRE(waitFor([&] { return ch.queuedBytes() == 0; }));
  ch.sendHeartbeat();  // alone again, on a loop that runs: written straight from the array
  CHECK(conn.recvExactly(17) == heartbeatRequest(3));
  REQUIRE(conn.sendAll(heartbeatResponse(3)));
  REQUIRE(waitFor([&] { return ch.lastHeartbeatRtt() > 0ns; }));
  CHECK(ch.queuedBytes() == 0);
  s.cli.close();
  CHECK(conn.waitPeerClosed());
}

// Only the last heartbeat written is timed, once: an answer to an older one, or the same answer
// again, adds no round trip (the loop matches answers without the send lock).
TEST_CASE("a heartbeat's answer is timed once - an older or repeated answer is not") {
  Env env;
  auto metrics = std::make_shared<ChannelMetrics>();
  RawPeerSession s(env, metrics);
  REQUIRE(s.conn.fd() >= 0);
  REQUIRE(waitFor([&] { return s.cli.state() == ClientState::Connected; }));
  Channel& ch = s.cli.channel();
  RawSocket& conn = s.conn;
  ch.sendHeartbeat();
  CHECK(conn.recvExactly(17) == heartbeatRequest(1));
  ch.sendHeartbeat();
  CHECK(conn.recvExactly(17) == heartbeatRequest(2));
  // One write: the client reads the three answers in one callback.
  REQUIRE(conn.sendAll(heartbeatResponse(1) + heartbeatResponse(2) + heartbeatResponse(2)));
  REQUIRE(waitFor([&] { return metrics->heartbeatRtt.snapshot().count >= 1; }));
  REQUIRE(env.loop.call([] {}));  // that read callback is over
  CHECK(metrics->heartbeatRtt.snapshot().count == 1);
  CHECK(ch.lastHeartbeatRtt() > 0ns);
  CHECK(metrics->framesIn.load() == 3);
  s.cli.close();
  CHECK(conn.waitPeerClosed());
}

TEST_CASE("listen on a port in use throws NetException with EADDRINUSE") {
  Env env;
  TcpServer first(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const std::uint16_t port = first.listen();
  TcpServer second(env.loop, env.timer, serverOptions(port), ChannelHandler{});
  try {
    second.listen();
    FAIL("listen succeeded on a port in use");
  } catch (const NetException& e) {
    CHECK(e.error().name() == "EADDRINUSE");
    CHECK(std::string(e.what()).rfind(fmt::format("listen on 127.0.0.1:{}: EADDRINUSE", port), 0) ==
          0);
  }
  CHECK_THROWS_AS(first.listen(), std::logic_error);
}

}  // TEST_SUITE("net")

}  // namespace wbnet
