// Graceful shutdown (TcpServer::shutdown, tcp_server.h) on loopback: Dubbo's READONLY event byte
// for byte, clients turning read-only, requests in flight answered before the close, requests of
// a client that ignores READONLY still answered, no new connection accepted, and a grace that
// runs out. Answers are delayed on the wheel to keep requests in flight; every wait is bounded.
#include "support.h"

#include <future>
#include <utility>

namespace {

using namespace wbnet;

// A 16-byte request header plus body, as a raw peer writes it.
std::string rawRequest(std::uint64_t id, std::string_view body) {
  std::string out;
  encodeFrame(out, flag::kRequest | flag::kTwoWay | kHessian2, 0, id, body);
  return out;
}

std::uint64_t idOf(std::string_view frame) {
  std::uint64_t id = 0;
  for (std::size_t i = 4; i < 12; ++i) id = (id << 8) | static_cast<unsigned char>(frame[i]);
  return id;
}

// A server whose handler answers every two-way request `delay` later (0: never), from the wheel
// thread (Channel::send is any-thread). The channel stays open while a request is unanswered:
// the shutdown waits for it, so the pointer is valid when the answer goes out.
struct DelayedServer {
  Env& env;
  std::atomic<int> received{0};
  TcpServer server;

  DelayedServer(Env& e, ns delay)
      : env(e),
        server(e.loop, e.timer, serverOptions(),
               ChannelHandler{.onConnected = {},
                              .onFrame =
                                  [this, delay](Channel& ch, const FrameView& f) {
                                    if (!f.isRequest() || !f.isTwoWay()) return;
                                    ++received;
                                    if (delay == ns(0)) return;
                                    Channel* channel = &ch;
                                    const std::uint64_t id = f.id;
                                    const std::string body = "re:" + std::string(f.body);
                                    env.timer.newTimeout(
                                        [channel, id, body] {
                                          (void)channel->send(kHessian2, kStatusOk, id, body);
                                        },
                                        delay);
                                  },
                              .onClosed = {}}) {}
};

}  // namespace

TEST_SUITE("net") {

TEST_CASE("shutdown: the READONLY event is Dubbo's 18 bytes") {
  std::string out;
  encodeReadOnlyEvent(out, 0x0102030405060708ULL);
  const std::string expected(
      "\xDA\xBB\xA2\x00\x01\x02\x03\x04\x05\x06\x07\x08\x00\x00\x00\x02\x01R", 18);
  CHECK(out == expected);
  CHECK(out.size() == kReadOnlyFrameBytes);
  const FrameView readOnly{0xA2, 0, 1, kReadOnlyBody};
  CHECK(readOnly.isReadOnlyEvent());
  CHECK_FALSE(readOnly.isHeartbeat());
  CHECK_FALSE((FrameView{0x22, kStatusOk, 1, kReadOnlyBody}.isReadOnlyEvent()));  // a response
  CHECK_FALSE((FrameView{0x82, 0, 1, kReadOnlyBody}.isReadOnlyEvent()));          // no event bit
  CHECK_FALSE((FrameView{0xA2, 0, 1, std::string_view("\x01S", 2)}.isReadOnlyEvent()));
}

TEST_CASE("shutdown: an idle server sends READONLY to every peer and closes at once") {
  Env env;
  DelayedServer s(env, 0ms);
  const auto port = s.server.listen();
  RawSocket a;
  RawSocket b;
  REQUIRE(a.connect(port));
  REQUIRE(b.connect(port));
  REQUIRE(waitFor([&] { return s.server.connections() == 2; }, 5s));

  const ShutdownReport report = s.server.shutdown(5s);
  CHECK(report.notified == 2);
  CHECK(report.inFlightAtStart == 0);
  CHECK(report.abandoned == 0);
  CHECK(report.elapsed >= 100ms);  // the quiet period: calls already on the wire may arrive
  CHECK(report.elapsed < 4s);      // nothing to wait for: far below the grace
  for (RawSocket* peer : {&a, &b}) {
    const std::string frame = peer->recvExactly(kReadOnlyFrameBytes);
    REQUIRE(frame.size() == kReadOnlyFrameBytes);
    CHECK(frame.substr(0, 4) == std::string("\xDA\xBB\xA2\x00", 4));
    CHECK(frame.substr(12) == std::string("\x00\x00\x00\x02\x01R", 6));
    CHECK(peer->waitPeerClosed(5s));
  }
  CHECK(s.server.connections() == 0);
  CHECK(s.server.shutdown(5s).notified == 0);  // a second call: nothing left
}

TEST_CASE("shutdown: a request in flight is answered first and the client turns read-only") {
  Env env;
  DelayedServer s(env, 300ms);
  const auto port = s.server.listen();
  Recorder rec;
  TcpClient client(env.loop, env.timer, clientOptions(port), rec.handler(), rec.stateCallback());
  client.start();
  REQUIRE(waitFor([&] { return client.state() == ClientState::Connected; }, 5s));

  std::promise<CallResult> answer;
  auto answered = answer.get_future();
  const auto sent = client.channel().request(
      "hello", 5s, [&answer](const CallResult& r) { answer.set_value(r); });
  REQUIRE(sent.sent == SendResult::Queued);
  REQUIRE(waitFor([&] { return s.received == 1; }, 5s));
  CHECK(s.server.unanswered() == 1);

  auto shutdown = std::async(std::launch::async, [&] { return s.server.shutdown(10s); });
  REQUIRE(waitFor([&] { return client.state() == ClientState::ReadOnly; }, 5s));
  CHECK(client.channel().isReadOnly());
  RawSocket late;
  CHECK_FALSE(late.connect(port));  // no longer accepting (refused)

  REQUIRE(answered.wait_for(5s) == std::future_status::ready);
  const CallResult r = answered.get();
  CHECK(r.status == CallStatus::Ok);
  CHECK(r.body == "re:hello");
  REQUIRE(shutdown.wait_for(5s) == std::future_status::ready);
  const ShutdownReport report = shutdown.get();
  CHECK(report.notified == 1);
  CHECK(report.inFlightAtStart == 1);
  CHECK(report.abandoned == 0);
  CHECK(report.elapsed < 8s);  // drained, not timed out
  CHECK(s.server.unanswered() == 0);

  // Then the server closed the connection: the client leaves ReadOnly (and reconnects, refused).
  REQUIRE(waitFor([&] { return client.state() != ClientState::ReadOnly; }, 5s));
  const auto states = rec.stateList();
  const auto ro = std::find(states.begin(), states.end(), ClientState::ReadOnly);
  REQUIRE(ro != states.end());
  CHECK(ro[-1] == ClientState::Connected);
  REQUIRE(ro + 1 != states.end());
  CHECK(ro[1] == ClientState::Disconnected);
  CHECK(std::count(states.begin(), states.end(), ClientState::ReadOnly) == 1);
  client.close();
}

TEST_CASE("shutdown: a client that ignores READONLY still gets answers to what it sends") {
  Env env;
  DelayedServer s(env, 300ms);
  const auto port = s.server.listen();
  RawSocket peer;
  REQUIRE(peer.connect(port));
  REQUIRE(peer.sendAll(rawRequest(1, "one")));
  REQUIRE(waitFor([&] { return s.received == 1; }, 5s));

  auto shutdown = std::async(std::launch::async, [&] { return s.server.shutdown(10s); });
  const std::string readOnly = peer.recvExactly(kReadOnlyFrameBytes);
  REQUIRE(readOnly.size() == kReadOnlyFrameBytes);
  CHECK(static_cast<unsigned char>(readOnly[2]) == 0xA2);
  REQUIRE(peer.sendAll(rawRequest(2, "two")));  // ignores it: a new call during the drain

  // Both answered (each 3 + 16 + 3 bytes: "re:one", "re:two"), then the server closes.
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 2; ++i) {
    const std::string frame = peer.recvExactly(kHeaderSize + 6);
    REQUIRE(frame.size() == kHeaderSize + 6);
    ids.push_back(idOf(frame));
    CHECK(frame.substr(kHeaderSize, 3) == "re:");
  }
  CHECK(ids == std::vector<std::uint64_t>{1, 2});
  CHECK(peer.waitPeerClosed(5s));
  REQUIRE(shutdown.wait_for(5s) == std::future_status::ready);
  const ShutdownReport report = shutdown.get();
  CHECK(report.inFlightAtStart == 1);
  CHECK(report.abandoned == 0);
  CHECK(s.received == 2);
}

TEST_CASE("shutdown: when the grace runs out the unanswered requests are abandoned") {
  Env env;
  DelayedServer s(env, 0ms);  // never answers
  const auto port = s.server.listen();
  Recorder rec;
  TcpClient client(env.loop, env.timer, clientOptions(port), rec.handler(), rec.stateCallback());
  client.start();
  REQUIRE(waitFor([&] { return client.state() == ClientState::Connected; }, 5s));
  std::promise<CallResult> answer;
  auto answered = answer.get_future();
  for (int i = 0; i < 2; ++i) {
    const auto sent = client.channel().request("x", 10s, [&answer, i](const CallResult& r) {
      if (i == 0) answer.set_value(r);
    });
    REQUIRE(sent.sent == SendResult::Queued);
  }
  REQUIRE(waitFor([&] { return s.received == 2; }, 5s));

  const auto t0 = Clock::now();
  const ShutdownReport report = s.server.shutdown(300ms);
  const auto took = Clock::now() - t0;
  CHECK(report.inFlightAtStart == 2);
  CHECK(report.abandoned == 2);
  CHECK(took >= 300ms);  // the wheel never fires early
  CHECK(s.server.unanswered() == 0);
  REQUIRE(answered.wait_for(5s) == std::future_status::ready);
  CHECK(answered.get().status == CallStatus::Closed);
  client.close();
}

TEST_CASE("connectivity: gRPC states with a reason for every transition") {
  Env env;
  DelayedServer s(env, 0ms);
  const auto port = s.server.listen();
  // Heartbeats far apart: one that crossed the server's close (100 ms after READONLY) would
  // reach a socket closed with unread input, which the kernel resets (ECONNRESET, not EOF).
  ClientOptions options = clientOptions(port);
  options.heartbeat.interval = 2s;
  TcpClient client(env.loop, env.timer, options);
  std::mutex mutex;
  std::vector<ConnectivityChange> changes;
  client.onConnectivity([&](const ConnectivityChange& c) {
    std::lock_guard lock(mutex);
    changes.push_back(c);
  });
  auto seen = [&] {
    std::lock_guard lock(mutex);
    return changes;
  };
  CHECK(client.connectivity() == Connectivity::Idle);
  client.start();
  CHECK_THROWS_AS(client.onConnectivity({}), std::logic_error);
  REQUIRE(waitFor([&] { return client.connectivity() == Connectivity::Ready; }, 5s));
  (void)s.server.shutdown(5s);  // READONLY, then the connection closes; nobody listens any more
  REQUIRE(waitFor([&] { return seen().size() >= 5; }, 5s));
  client.close();
  CHECK(client.connectivity() == Connectivity::Shutdown);

  const auto c = seen();
  REQUIRE(c.size() >= 6);
  CHECK(c[0].from == Connectivity::Idle);
  CHECK(c[0].to == Connectivity::Connecting);
  CHECK(c[0].reason == fmt::format("connect attempt 1 to 127.0.0.1:{}", port));
  CHECK(c[1].to == Connectivity::Ready);
  CHECK(c[1].reason == fmt::format("connected to 127.0.0.1:{}", port));
  CHECK(c[2].to == Connectivity::ReadOnly);
  CHECK(c[2].reason == "READONLY event: the server is shutting down");
  CHECK(c[3].from == Connectivity::ReadOnly);
  CHECK(c[3].to == Connectivity::TransientFailure);
  CHECK(c[3].reason.find("eof") != std::string::npos);
  CHECK(c[4].to == Connectivity::Connecting);  // the reconnect task tries again: refused
  CHECK(c.back().to == Connectivity::Shutdown);
  for (std::size_t i = 1; i < c.size(); ++i) CHECK(c[i].from == c[i - 1].to);
}

TEST_CASE("connectivity names are the client state names") {
  CHECK(connectivityName(Connectivity::Idle) == "idle");
  CHECK(connectivityName(Connectivity::Connecting) == "connecting");
  CHECK(connectivityName(Connectivity::Ready) == "connected");
  CHECK(connectivityName(Connectivity::TransientFailure) == "disconnected");
  CHECK(connectivityName(Connectivity::ReadOnly) == "read-only");
  CHECK(connectivityName(Connectivity::Shutdown) == "closed");
  const std::pair<Connectivity, ClientState> same[] = {
      {Connectivity::Connecting, ClientState::Connecting},
      {Connectivity::Ready, ClientState::Connected},
      {Connectivity::TransientFailure, ClientState::Disconnected},
      {Connectivity::ReadOnly, ClientState::ReadOnly},
      {Connectivity::Shutdown, ClientState::Closed}};
  for (const auto& [c, s] : same) CHECK(connectivityName(c) == clientStateName(s));
}

TEST_CASE("shutdown: a negative grace is rejected and changes nothing") {
  Env env;
  DelayedServer s(env, 0ms);
  const auto port = s.server.listen();
  CHECK_THROWS_WITH_AS(s.server.shutdown(-1ms),
                       "TcpServer::shutdown: grace = -1000000ns (expected: >= 0)",
                       std::invalid_argument);
  RawSocket peer;
  CHECK(peer.connect(port));  // still accepting
  REQUIRE(waitFor([&] { return s.server.connections() == 1; }, 5s));
  s.server.stop();
}

}  // TEST_SUITE("net")
