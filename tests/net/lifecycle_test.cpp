// Connection lifecycles on loopback: idle close by the server, half-open detection and forced
// reconnect, server restart on the same port, refused connects and retries, owner close.
#include "support.h"

#include <wheelbeat/core/option_error.h>

#include <condition_variable>
#include <memory>

namespace wbnet {

namespace {

// A socket bound to an ephemeral loopback port but not listening: connects to it are refused,
// and no one else can take the port while the test holds it.
struct RefusingPort {
  RefusingPort() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = RawSocket::loopback(0);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~RefusingPort() { ::close(fd); }
  int fd = -1;
  std::uint16_t port = 0;
};

}  // namespace

TEST_SUITE("net") {

TEST_CASE("a heartbeat period below 2 ticks of the timer is refused by client and server") {
  Env env;  // a 10ms tick
  const std::string least = " (expected: at least 2 wheel ticks = 20ms; the wheel's tick is 10ms)";
  ClientOptions client = clientOptions(1);
  client.heartbeat.interval = 15ms;
  CHECK_THROWS_WITH_AS(TcpClient(env.loop, env.timer, client),
                       ("ClientOptions.heartbeat.interval = 15ms" + least).c_str(),
                       wheelbeat::core::OptionError);
  ServerOptions server = serverOptions();
  server.heartbeat.closeTimeout = 19ms;
  CHECK_THROWS_WITH_AS(TcpServer(env.loop, env.timer, server, {}),
                       ("ServerOptions.heartbeat.closeTimeout = 19ms" + least).c_str(),
                       wheelbeat::core::OptionError);
  EventLoopGroup group(1);
  CHECK_THROWS_WITH_AS(TcpServer(group, env.timer, server, {}),
                       ("ServerOptions.heartbeat.closeTimeout = 19ms" + least).c_str(),
                       wheelbeat::core::OptionError);
  CHECK_THROWS_WITH_AS(TcpClient(group, env.timer, client),
                       ("ClientOptions.heartbeat.interval = 15ms" + least).c_str(),
                       wheelbeat::core::OptionError);
  client.heartbeat.interval = 20ms;  // exactly 2 ticks
  CHECK_NOTHROW(TcpClient(env.loop, env.timer, client));
  CHECK(group.stop() == 0);
}

TEST_CASE("server closes an idle channel but keeps a heartbeating one") {
  Env env;
  Recorder server;
  ServerOptions options = serverOptions();
  options.heartbeat.closeTimeout = 300ms;  // checked every 100 ms
  TcpServer srv(env.loop, env.timer, options, server.handler());
  const std::uint16_t port = srv.listen();
  TcpClient cli(env.loop, env.timer, clientOptions(port));
  cli.start();
  RawSocket silent;
  REQUIRE(silent.connect(port));
  const auto t0 = Clock::now();
  REQUIRE(waitFor([&] { return server.closed.load() == 1; }, 5s));
  const auto after = Clock::now() - t0;
  CHECK(after >= 250ms);  // 300 ms on the wheel's clock, measured from a slightly later accept
  CHECK(after < 2s);
  const CloseReason why = server.closeReasons().at(0);
  CHECK(why.kind == CloseKind::Idle);
  CHECK(why.text.find("> closeTimeout 300ms") != std::string::npos);
  CHECK(silent.waitPeerClosed());
  CHECK(cli.state() == ClientState::Connected);  // heartbeats kept it fresh: same age, alive
  CHECK(srv.connections() == 1);
  CHECK(server.closed.load() == 1);
}

// Holds the event loop inside a posted function until release() (or destruction): the loop of
// an overloaded process, which has not read what the kernel already holds for it. The state is
// shared with the posted function, which may still be waking up when the blocker is gone.
class LoopBlocker {
public:
  explicit LoopBlocker(EventLoop& loop) {
    REQUIRE(loop.post([state = state_] {
      state->blocked = true;
      std::unique_lock lock(state->mutex);
      state->cv.wait(lock, [&state] { return state->released; });
    }));
    REQUIRE(waitFor([this] { return state_->blocked.load(); }));
  }
  ~LoopBlocker() { release(); }
  LoopBlocker(const LoopBlocker&) = delete;
  LoopBlocker& operator=(const LoopBlocker&) = delete;
  void release() {
    {
      std::lock_guard lock(state_->mutex);
      state_->released = true;
    }
    state_->cv.notify_all();
  }

private:
  struct State {
    std::atomic<bool> blocked{false};
    std::mutex mutex;
    std::condition_variable cv;
    bool released = false;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

TEST_CASE("a server whose loop lags does not idle-close a peer whose bytes wait unread") {
  Env env;
  Recorder server;
  auto metrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  ServerOptions options = serverOptions();
  options.heartbeat.closeTimeout = 300ms;  // checked every 100 ms
  options.taskMetrics = metrics;
  TcpServer srv(env.loop, env.timer, options, server.handler());
  RawSocket peer;
  REQUIRE(peer.connect(srv.listen()));
  REQUIRE(waitFor([&] { return srv.connections() == 1; }));
  {
    LoopBlocker lag(env.loop);
    REQUIRE(peer.sendAll(heartbeatRequest(7)));  // reaches the kernel, not the server's loop
    // The wheel keeps checking: idle by the timestamps, yet the socket holds unread bytes.
    REQUIRE(waitFor([&] { return metrics->snapshot().idleDeferred >= 3; }, 5s));
    CHECK(metrics->snapshot().closes == 0);
  }
  CHECK(peer.recvExactly(17) == heartbeatResponse(7));  // the loop caught up and answered
  CHECK(server.closed.load() == 0);
  CHECK(srv.connections() == 1);
  // Silent from now on: an ordinary idle close follows.
  REQUIRE(waitFor([&] { return server.closed.load() == 1; }, 5s));
  CHECK(server.closeReasons().at(0).kind == CloseKind::Idle);
  CHECK(metrics->snapshot().closes == 1);
  CHECK(peer.waitPeerClosed());
}

// A TcpClient on env's loop, connected to a peer the test plays by hand (`server`); `adjust`
// changes clientOptions()'s heartbeat settings.
struct ClientOfRawPeer {
  ClientOfRawPeer(Env& env, const std::function<void(wheelbeat::tasks::HeartbeatOptions&)>& adjust)
      : cli(env.loop, env.timer, options(adjust), client.handler(), client.stateCallback()) {
    cli.start();
    server.emplace(peer.accept());
    REQUIRE(server->fd() >= 0);
    REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  }
  ClientOptions options(const std::function<void(wheelbeat::tasks::HeartbeatOptions&)>& adjust) {
    ClientOptions o = clientOptions(peer.port());
    adjust(o.heartbeat);
    o.taskMetrics = metrics;
    return o;
  }

  RawListener peer;
  Recorder client;
  std::shared_ptr<wheelbeat::tasks::TaskMetrics> metrics =
      std::make_shared<wheelbeat::tasks::TaskMetrics>();
  TcpClient cli;
  std::optional<RawSocket> server;
};

// The round trip runs from the write, as a ping measures it; the time the heartbeat waited in the
// client (here a loop held busy for 300 ms after the wheel's decision) is the send wait.
TEST_CASE("a heartbeat written late: its send wait holds the delay, its round trip does not") {
  Env env;
  // The check after a send comes 667 ms later: one heartbeat only while the loop is held.
  ClientOfRawPeer c(env, [](auto& heartbeat) {
    heartbeat.interval = 2s;
    heartbeat.idleTimeout = 10s;
  });
  constexpr auto kHeld = 300ms;
  {
    LoopBlocker lag(env.loop);
    REQUIRE(waitFor([&] { return c.metrics->snapshot().heartbeatsSent == 1; }, 5s));
    const auto decided = env.timer.now();  // at or after the decision
    REQUIRE(waitFor([&] { return env.timer.now() - decided >= kHeld; }, 5s));
  }
  const std::string request = c.server->recvExactly(17);
  REQUIRE(request.size() == 17);
  std::uint64_t id = 0;
  for (std::size_t i = 4; i < 12; ++i) id = (id << 8) | static_cast<unsigned char>(request[i]);
  CHECK(request == heartbeatRequest(id));
  REQUIRE(c.server->sendAll(heartbeatResponse(id)));
  REQUIRE(waitFor([&] { return c.cli.channel().lastHeartbeatRtt() > 0ns; }));
  CHECK(c.cli.channel().lastHeartbeatSendWait() >= kHeld);
  CHECK(c.cli.channel().lastHeartbeatRtt() < kHeld);
  CHECK(c.metrics->snapshot().heartbeatsSent == 1);
  CHECK(c.cli.state() == ClientState::Connected);
  c.cli.close();
}

TEST_CASE("a client whose loop lags does not force a reconnect while answers wait unread") {
  Env env;
  // Checks every 333 ms; after the loop catches up, a second of quiet before the next verdict.
  ClientOfRawPeer c(env, [](auto& heartbeat) { heartbeat.idleTimeout = 1s; });
  {
    LoopBlocker lag(env.loop);
    REQUIRE(c.server->sendAll(heartbeatResponse(1)));  // an answer the client's loop cannot read
    REQUIRE(waitFor([&] { return c.metrics->snapshot().idleDeferred >= 3; }, 5s));
    CHECK(c.metrics->snapshot().reconnectsStarted == 0);
  }
  // Caught up: the answer was read, the channel is fresh, nothing was torn down.
  REQUIRE(waitFor([&] { return env.timer.now() - c.cli.channel().lastRead() < 500ms; }));
  CHECK(c.cli.state() == ClientState::Connected);
  CHECK(c.cli.connectAttempts() == 1);
  CHECK(c.client.closed.load() == 0);
  CHECK(c.metrics->snapshot().reconnectsStarted == 0);
  c.cli.close();
}

TEST_CASE("half-open peer is detected within idle timeout plus one check and reconnect succeeds") {
  Env env;
  RawListener peer;
  Recorder client;
  std::atomic<std::int64_t> idleAtClose{-1};
  ChannelHandler handler = client.handler();
  auto recordClose = handler.onClosed;
  handler.onClosed = [&](Channel& ch, const CloseReason& r) {
    if (r.kind == CloseKind::Reconnect) idleAtClose = (env.timer.now() - ch.lastRead()).count();
    recordClose(ch, r);
  };
  TcpClient cli(env.loop, env.timer, clientOptions(peer.port()), handler, client.stateCallback());
  cli.start();
  RawSocket first(peer.accept());
  REQUIRE(first.fd() >= 0);
  // Answer one heartbeat, then play dead: keep the socket open but never answer again.
  const std::string req = first.recvExactly(17);
  REQUIRE(req.size() == 17);
  REQUIRE(first.sendAll(std::string("\xDA\xBB\x22\x14", 4) + req.substr(4)));
  REQUIRE(waitFor([&] { return client.closed.load() == 1; }, 5s));
  const CloseReason why = client.closeReasons().at(0);
  CHECK(why.kind == CloseKind::Reconnect);
  CHECK(why.text.rfind("read idle", 0) == 0);
  // idleTimeout 300 ms + one check interval 100 ms (+ 100 ms for 10 ms ticks and the loop hop).
  CHECK(ns(idleAtClose.load()) >= 300ms);
  CHECK(ns(idleAtClose.load()) <= 500ms);
  // The forced reconnect reaches the peer again; this time it answers.
  RawSocket second(peer.accept());
  REQUIRE(second.fd() >= 0);
  REQUIRE(
      waitFor([&] { return cli.state() == ClientState::Connected && cli.connectAttempts() == 2; }));
  const std::string req2 = second.recvExactly(17);
  REQUIRE(req2.size() == 17);
  REQUIRE(second.sendAll(std::string("\xDA\xBB\x22\x14", 4) + req2.substr(4)));
  REQUIRE(waitFor([&] { return cli.channel().lastHeartbeatRtt() > 0ns; }));
  CHECK(cli.state() == ClientState::Connected);
  CHECK(client.connected.load() == 2);
  const auto states = client.stateList();
  CHECK(states == std::vector<ClientState>{ClientState::Connecting, ClientState::Connected,
                                           ClientState::Disconnected, ClientState::Connecting,
                                           ClientState::Connected});
  cli.close();
}

TEST_CASE("client reconnects to a new server on the same port within its backoff bound") {
  Env env;
  Recorder client;
  auto first = std::make_unique<TcpServer>(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const std::uint16_t port = first->listen();
  TcpClient cli(env.loop, env.timer, clientOptions(port), client.handler());
  cli.start();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  first->stop();
  first.reset();
  REQUIRE(waitFor([&] { return client.closed.load() >= 1; }));
  CHECK(client.closeReasons().at(0).kind == CloseKind::Eof);
  // Let it fail at least once against the empty port, then bring a server back.
  REQUIRE(waitFor([&] { return client.closed.load() >= 2; }));
  CHECK(client.closeReasons().at(1).kind == CloseKind::Refused);
  TcpServer second(env.loop, env.timer, serverOptions(port), ChannelHandler{});
  CHECK(second.listen() == port);
  const auto t0 = Clock::now();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }, 5s));
  // maxDelay 200 ms + 20 % jitter, + one tick and the connect itself.
  CHECK(Clock::now() - t0 < 600ms);
  CHECK(client.connected.load() == 2);
  REQUIRE(waitFor([&] { return second.connections() == 1; }));
  cli.close();
}

TEST_CASE("connect refused leaves the client disconnected then it retries") {
  Env env;
  RefusingPort refusing;
  Recorder client;
  TcpClient cli(env.loop, env.timer, clientOptions(refusing.port), client.handler(),
                client.stateCallback());
  cli.start();
  REQUIRE(waitFor([&] { return cli.connectAttempts() >= 3 && client.closed.load() >= 3; }));
  const auto reasons = client.closeReasons();
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(reasons.at(i).kind == CloseKind::Refused);
    CHECK(reasons.at(i).error.name() == "ECONNREFUSED");
  }
  CHECK(fmt::format("{}", reasons.at(0).error) == "ECONNREFUSED (connection refused)");
  const auto states = client.stateList();
  REQUIRE(states.size() >= 4);
  CHECK(states.at(0) == ClientState::Connecting);
  CHECK(states.at(1) == ClientState::Disconnected);
  CHECK(states.at(2) == ClientState::Connecting);
  CHECK(states.at(3) == ClientState::Disconnected);
  CHECK(client.connected.load() == 0);
  cli.close();
  CHECK(cli.state() == ClientState::Closed);
}

TEST_CASE("a connect that never completes fails with connect-timeout") {
  Env env;
  // A listener whose accept queue is full (backlog 0, one unaccepted connection): Linux drops
  // further SYNs, so the client's connect hangs until its timeout.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = RawSocket::loopback(0);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(::listen(fd, 0) == 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  RawSocket filler;
  REQUIRE(filler.connect(ntohs(a.sin_port)));
  Recorder client;
  ClientOptions options = clientOptions(ntohs(a.sin_port));
  options.connectTimeout = 200ms;
  TcpClient cli(env.loop, env.timer, options, client.handler());
  cli.start();
  REQUIRE(waitFor([&] { return client.closed.load() >= 1; }, 5s));
  const CloseReason why = client.closeReasons().at(0);
  CHECK(why.kind == CloseKind::ConnectTimeout);
  CHECK(why.error.name() == "ETIMEDOUT");
  CHECK(fmt::format("{}", why) ==
        fmt::format("connect-timeout: no connection to 127.0.0.1:{} within 200ms",
                    ntohs(a.sin_port)));
  cli.close();
  ::close(fd);
}

TEST_CASE("start() on a stopped loop throws, as listen() does, and starts nothing") {
  Env env;
  HashedWheelTimer clientTimer{WheelOptions{.tickDuration = 10ms}};
  RefusingPort refusing;
  Recorder client;
  Recorder server;
  REQUIRE(env.loop.stop() == 0);
  TcpClient cli(env.loop, clientTimer, clientOptions(refusing.port), client.handler());
  CHECK_THROWS_WITH_AS(cli.start(), "wheelbeat: TcpClient::start(): the event loop is stopped",
                       std::runtime_error);
  CHECK(clientTimer.pendingTimeouts() == 0);  // no heartbeat or reconnect task armed
  CHECK(cli.connectAttempts() == 0);
  TcpServer srv(env.loop, env.timer, serverOptions(), server.handler());
  CHECK_THROWS_WITH_AS((void)srv.listen(),
                       "wheelbeat: TcpServer::listen(): the event loop is stopped",
                       std::runtime_error);
}

TEST_CASE("owner close cancels every task of the client and no reconnect follows") {
  Env env;
  HashedWheelTimer clientTimer{WheelOptions{.tickDuration = 10ms}};  // only this client's tasks
  RefusingPort refusing;
  Recorder client;
  auto metrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  ClientOptions options = clientOptions(refusing.port);
  options.taskMetrics = metrics;
  TcpClient cli(env.loop, clientTimer, options, client.handler(), client.stateCallback());
  cli.start();
  REQUIRE(waitFor([&] { return metrics->reconnectsStarted.load() >= 2; }));
  CHECK(clientTimer.pendingTimeouts() >= 2);  // heartbeat + reconnect (+ a connect timeout)
  cli.close("done");
  CHECK(cli.state() == ClientState::Closed);
  CHECK(waitFor([&] { return clientTimer.pendingTimeouts() == 0; }, 1s));
  const std::uint64_t attempts = cli.connectAttempts();
  const std::uint64_t reconnects = metrics->reconnectsStarted.load();
  // Several backoff periods (max 200 ms) pass: nothing may wake up for this client again.
  std::this_thread::sleep_for(600ms);
  CHECK(cli.connectAttempts() == attempts);
  CHECK(metrics->reconnectsStarted.load() == reconnects);
  CHECK(clientTimer.pendingTimeouts() == 0);
  CHECK(client.stateList().back() == ClientState::Closed);
  cli.close();  // idempotent
  // Closing a connected client: its socket closes with ClosedByOwner and the server sees EOF.
  Recorder server;
  TcpServer srv(env.loop, env.timer, serverOptions(), server.handler());
  Recorder second;
  TcpClient cli2(env.loop, clientTimer, clientOptions(srv.listen()), second.handler());
  cli2.start();
  REQUIRE(waitFor([&] { return cli2.state() == ClientState::Connected; }));
  cli2.close("bye");
  CHECK(second.closeReasons().at(0).kind == CloseKind::ClosedByOwner);
  CHECK(second.closeReasons().at(0).text == "bye");
  CHECK(waitFor([&] { return clientTimer.pendingTimeouts() == 0; }, 1s));
  REQUIRE(waitFor([&] { return server.closed.load() == 1; }));
  CHECK(server.closeReasons().at(0).kind == CloseKind::Eof);
}

}  // TEST_SUITE("net")

}  // namespace wbnet
