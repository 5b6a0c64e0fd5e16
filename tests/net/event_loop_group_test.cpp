// EventLoopGroup (event_loop_group.h) and TcpServer / TcpClient over a group (tcp_server.h "Loop
// group"): sizes and names, the exact round robin, stop; a server on 2, 3 and 4 loops whose
// connections go round robin (connection k to loop k mod n), every callback of a channel on its
// own loop's thread; maxConnections, close-idle and heartbeats, a graceful drain across loops;
// clients taking loops round robin. Every wait is bounded; every group ends with stop() == 0.
#include "support.h"

#include <pthread.h>

#include <future>
#include <set>

namespace {

using namespace wbnet;

struct GroupEnv {
  HashedWheelTimer timer{WheelOptions{.tickDuration = 10ms, .ticksPerWheel = 512}};
  EventLoopGroup group;

  explicit GroupEnv(std::size_t loops) : group(loops) {}
  ~GroupEnv() { CHECK(group.stop() == 0); }
};

std::vector<std::thread::id> loopThreads(EventLoopGroup& group) {
  std::vector<std::thread::id> ids(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    REQUIRE(group.at(i).call([&ids, i] { ids[i] = std::this_thread::get_id(); }));
  }
  return ids;
}

std::string rawRequest(std::uint64_t id, std::string_view body) {
  std::string out;
  encodeFrame(out, flag::kRequest | flag::kTwoWay | kHessian2, 0, id, body);
  return out;
}

// Which thread ran each callback of each server channel (keyed by the channel's address, which
// stays valid until its onClosed).
struct ThreadLog {
  std::mutex mutex;
  std::map<const Channel*, std::thread::id> connectedOn;
  std::atomic<int> connected{0};
  int foreign = 0;  // frame or close callbacks on another thread than the channel's onConnected
  std::atomic<int> closed{0};

  void onConnected(const Channel& ch) {
    std::lock_guard lock(mutex);
    connectedOn[&ch] = std::this_thread::get_id();
    ++connected;
  }
  void check(const Channel& ch) {
    std::lock_guard lock(mutex);
    const auto it = connectedOn.find(&ch);
    if (it == connectedOn.end() || it->second != std::this_thread::get_id()) ++foreign;
  }
  void onClosed(const Channel& ch) {
    check(ch);
    std::lock_guard lock(mutex);
    connectedOn.erase(&ch);
    ++closed;
  }
  // Connections whose onConnected ran on each of `threads`.
  std::vector<int> perLoop(const std::vector<std::thread::id>& threads) {
    std::lock_guard lock(mutex);
    std::vector<int> out(threads.size(), 0);
    for (const auto& [ch, id] : connectedOn) {
      const auto at = std::find(threads.begin(), threads.end(), id);
      if (at != threads.end()) ++out[static_cast<std::size_t>(at - threads.begin())];
    }
    return out;
  }
  int foreignCount() {
    std::lock_guard lock(mutex);
    return foreign;
  }
};

ChannelHandler echoHandler(ThreadLog& log) {
  return ChannelHandler{
      .onConnected = [&log](Channel& ch) { log.onConnected(ch); },
      .onFrame =
          [&log](Channel& ch, const FrameView& f) {
            log.check(ch);
            if (f.isRequest() && f.isTwoWay()) {
              (void)ch.send(f.serialization(), kStatusOk, f.id, "re:" + std::string(f.body));
            }
          },
      .onClosed = [&log](Channel& ch, const CloseReason&) { log.onClosed(ch); },
  };
}

void serveRoundRobin(std::size_t loops) {
  constexpr int kClients = 64;
  GroupEnv env(loops);
  const auto threads = loopThreads(env.group);
  ThreadLog log;
  TcpServer server(env.group, env.timer, serverOptions(), echoHandler(log));
  const auto port = server.listen();

  std::vector<std::unique_ptr<RawSocket>> peers;
  for (int i = 0; i < kClients; ++i) {
    peers.push_back(std::make_unique<RawSocket>());
    REQUIRE(peers.back()->connect(port));
  }
  REQUIRE(waitFor([&] { return log.connected == kClients; }));
  CHECK(server.accepted() == kClients);
  CHECK(server.connections() == kClients);
  CHECK(server.rejected() == 0);
  // Connection k (in accept order) went to loop k mod n.
  const auto perLoop = log.perLoop(threads);
  for (std::size_t i = 0; i < loops; ++i) {
    CAPTURE(i);
    CHECK(perLoop[i] == static_cast<int>((kClients - i + loops - 1) / loops));
  }
  // Every connection is served: one request each, answered by its channel on its loop.
  for (int i = 0; i < kClients; ++i) {
    const std::string request = rawRequest(static_cast<std::uint64_t>(i), "hi");
    REQUIRE(peers[static_cast<std::size_t>(i)]->sendAll(request));
  }
  for (int i = 0; i < kClients; ++i) {
    const std::string answer = peers[static_cast<std::size_t>(i)]->recvExactly(16 + 5);
    REQUIRE(answer.size() == 21);
    CHECK(answer.substr(16) == "re:hi");
  }
  for (auto& p : peers) p->close();
  REQUIRE(waitFor([&] { return server.connections() == 0; }));
  REQUIRE(waitFor([&] { return log.closed == kClients; }));
  CHECK(log.foreignCount() == 0);
  server.stop();
}

}  // namespace

TEST_SUITE("net") {

TEST_CASE("loop group: sizes and thread names and an exact round robin") {
  EventLoopGroup group(3);
  REQUIRE(group.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    std::string name;
    REQUIRE(group.at(i).call([&name] {
      char buf[16] = {};
      pthread_getname_np(pthread_self(), buf, sizeof buf);
      name = buf;
    }));
    CHECK(name == "wheelbeat-io-" + std::to_string(i));
    CHECK(group.contains(group.at(i)));
  }
  CHECK_THROWS_AS((void)group.at(3), std::out_of_range);
  std::vector<EventLoop*> order;
  for (int i = 0; i < 7; ++i) order.push_back(&group.next());
  const std::vector<EventLoop*> expected{&group.at(0), &group.at(1), &group.at(2), &group.at(0),
                                         &group.at(1), &group.at(2), &group.at(0)};
  CHECK(order == expected);
  EventLoop other;
  CHECK_FALSE(group.contains(other));
  CHECK(other.stop() == 0);
  CHECK(group.stop() == 0);
}

TEST_CASE("loop group: 0 loops means one per core and io threads beyond 1024 are refused") {
  EventLoopGroup group(0);
  CHECK(group.size() == std::max(1U, std::thread::hardware_concurrency()));
  CHECK(group.stop() == 0);
  EventLoopGroup fromOptions(LoopOptions{.ioThreads = 2});
  CHECK(fromOptions.size() == 2);
  CHECK(fromOptions.stop() == 0);
  CHECK_THROWS_WITH_AS(EventLoopGroup(LoopOptions{.ioThreads = 1025}),
                       "LoopOptions.ioThreads = 1025 (expected: 0 .. 1024)", std::invalid_argument);
}

TEST_CASE("loop group: stop stops every loop once and posts are refused after it") {
  EventLoopGroup group(3);
  std::atomic<int> ran{0};
  for (std::size_t i = 0; i < 3; ++i) REQUIRE(group.at(i).post([&ran] { ++ran; }));
  CHECK_FALSE(group.isStopped());
  CHECK(group.stop() == 0);
  CHECK(ran == 3);  // what was posted before stop() ran
  CHECK(group.isStopped());
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(group.at(i).isStopped());
    CHECK_FALSE(group.at(i).post([&ran] { ++ran; }));
    CHECK_FALSE(group.next().post([&ran] { ++ran; }));
  }
  CHECK(group.stop() == 0);  // idempotent
  CHECK(ran == 3);
}

TEST_CASE("loop group: stop from one of its loop threads is refused") {
  EventLoopGroup group(2);
  std::string error;
  REQUIRE(group.at(1).call([&] {
    try {
      (void)group.stop();
    } catch (const std::logic_error& e) {
      error = e.what();
    }
  }));
  CHECK(error == "wheelbeat: EventLoopGroup::stop() called on one of its loop threads");
  CHECK_FALSE(group.isStopped());
  CHECK(group.stop() == 0);
}

TEST_CASE(
    "loop group server: 64 connections on 2 loops go round robin with callbacks on their loop") {
  serveRoundRobin(2);
}
TEST_CASE(
    "loop group server: 64 connections on 3 loops go round robin with callbacks on their loop") {
  serveRoundRobin(3);
}
TEST_CASE(
    "loop group server: 64 connections on 4 loops go round robin with callbacks on their loop") {
  serveRoundRobin(4);
}

TEST_CASE("loop group server: stop closes the channels of every loop before it returns") {
  GroupEnv env(4);
  Recorder rec;
  TcpServer server(env.group, env.timer, serverOptions(), rec.handler());
  const auto port = server.listen();
  CHECK_THROWS_AS(server.listen(), std::logic_error);
  std::vector<std::unique_ptr<RawSocket>> peers;
  for (int i = 0; i < 8; ++i) {
    peers.push_back(std::make_unique<RawSocket>());
    REQUIRE(peers.back()->connect(port));
  }
  REQUIRE(waitFor([&] { return rec.connected == 8; }));
  server.stop();
  CHECK(server.connections() == 0);
  CHECK(rec.closed == 8);
  for (const auto& reason : rec.closeReasons()) {
    CHECK(reason.kind == CloseKind::ClosedByOwner);
    CHECK(reason.text == "server stopped");
  }
  for (auto& p : peers) CHECK(p->waitPeerClosed());
  RawSocket late;
  CHECK_FALSE(late.connect(port));  // the listener is closed
  server.stop();                    // idempotent
}

TEST_CASE("loop group server: maxConnections bounds the connections of every loop together") {
  GroupEnv env(3);
  ThreadLog log;
  ServerOptions options = serverOptions();
  options.maxConnections = 5;
  TcpServer server(env.group, env.timer, options, echoHandler(log));
  const auto port = server.listen();
  std::vector<std::unique_ptr<RawSocket>> peers;
  for (int i = 0; i < 8; ++i) {
    peers.push_back(std::make_unique<RawSocket>());
    REQUIRE(peers.back()->connect(port));
  }
  REQUIRE(waitFor([&] { return server.accepted() == 5 && server.rejected() == 3; }));
  CHECK(server.connections() == 5);
  for (std::size_t i = 5; i < 8; ++i) CHECK(peers[i]->waitPeerClosed());
  peers[0]->close();  // a slot frees up (on loop 0) and is taken again
  REQUIRE(waitFor([&] { return server.connections() == 4; }));
  RawSocket late;
  REQUIRE(late.connect(port));
  REQUIRE(waitFor([&] { return server.accepted() == 6; }));
  CHECK(server.rejected() == 3);
  CHECK(server.connections() == 5);
  server.stop();
  CHECK(server.connections() == 0);
  CHECK(log.foreignCount() == 0);
}

TEST_CASE("loop group server: idle peers are closed and heartbeating clients kept on every loop") {
  GroupEnv env(4);
  Recorder rec;
  ServerOptions options = serverOptions();
  options.heartbeat.closeTimeout = 400ms;
  TcpServer server(env.group, env.timer, options, rec.handler());
  const auto port = server.listen();
  // Alternate so that each loop gets one heartbeating client and one silent peer.
  std::vector<std::unique_ptr<TcpClient>> clients;
  std::vector<std::unique_ptr<RawSocket>> silent;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<TcpClient>(env.group, env.timer, clientOptions(port)));
    clients.back()->start();
    REQUIRE(waitFor([&] { return server.accepted() == std::uint64_t(2 * i + 1); }));
    silent.push_back(std::make_unique<RawSocket>());
    REQUIRE(silent.back()->connect(port));
    REQUIRE(waitFor([&] { return server.accepted() == std::uint64_t(2 * i + 2); }));
  }
  for (auto& s : silent) CHECK(s->waitPeerClosed(5s));
  REQUIRE(waitFor([&] { return server.connections() == 4; }));
  for (const auto& reason : rec.closeReasons()) CHECK(reason.kind == CloseKind::Idle);
  CHECK(rec.closeReasons().size() == 4);
  for (auto& c : clients) {
    CHECK(c->state() == ClientState::Connected);
    CHECK(c->connectAttempts() == 1);  // never reconnected: heartbeats answered on every loop
  }
  for (auto& c : clients) c->close();
  server.stop();
}

TEST_CASE("loop group server: a graceful shutdown drains requests in flight on every loop") {
  GroupEnv env(3);
  std::atomic<int> received{0};
  TcpServer server(env.group, env.timer, serverOptions(),
                   ChannelHandler{.onFrame = [&](Channel& ch, const FrameView& f) {
                     if (!f.isRequest() || !f.isTwoWay()) return;
                     ++received;
                     Channel* channel = &ch;
                     const std::uint64_t id = f.id;
                     env.timer.newTimeout(
                         [channel, id] { (void)channel->send(kHessian2, kStatusOk, id, "done"); },
                         300ms);
                   }});
  const auto port = server.listen();
  std::vector<std::unique_ptr<TcpClient>> clients;
  for (int i = 0; i < 3; ++i) {  // one after the other: connection i is on server loop i
    clients.push_back(std::make_unique<TcpClient>(env.group, env.timer, clientOptions(port)));
    clients.back()->start();
    REQUIRE(waitFor([&] { return clients.back()->state() == ClientState::Connected; }));
  }
  std::vector<std::promise<CallResult>> answers(3);
  for (std::size_t i = 0; i < 3; ++i) {
    auto& answer = answers[i];
    REQUIRE(clients[i]
                ->channel()
                .request("x", 5s, [&answer](const CallResult& r) { answer.set_value(r); })
                .sent == SendResult::Queued);
  }
  REQUIRE(waitFor([&] { return received == 3; }));
  CHECK(server.unanswered() == 3);
  auto shutdown = std::async(std::launch::async, [&] { return server.shutdown(10s); });
  for (auto& c : clients) {
    REQUIRE(waitFor([&] { return c->state() == ClientState::ReadOnly; }));
  }
  for (auto& a : answers) {
    auto f = a.get_future();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    CHECK(f.get().status == CallStatus::Ok);
  }
  REQUIRE(shutdown.wait_for(5s) == std::future_status::ready);
  const ShutdownReport report = shutdown.get();
  CHECK(report.notified == 3);
  CHECK(report.inFlightAtStart == 3);
  CHECK(report.abandoned == 0);
  CHECK(server.connections() == 0);
  CHECK(server.unanswered() == 0);
  for (auto& c : clients) c->close();
}

TEST_CASE("loop group client: clients take the group's loops round robin") {
  GroupEnv env(2);
  const auto threads = loopThreads(env.group);
  ThreadLog log;
  TcpServer server(env.group, env.timer, serverOptions(), echoHandler(log));
  const auto port = server.listen();
  ClientOptions bad = clientOptions(port);
  bad.server.port = 0;
  std::vector<std::unique_ptr<TcpClient>> clients;
  std::mutex mutex;
  std::vector<std::thread::id> connectedOn(4);
  const auto seen = [&](std::size_t i) {
    std::lock_guard lock(mutex);
    return connectedOn[i] != std::thread::id{};
  };
  for (std::size_t i = 0; i < 4; ++i) {
    // A rejected client does not move the round robin.
    CHECK_THROWS_AS(TcpClient(env.group, env.timer, bad), std::invalid_argument);
    clients.push_back(std::make_unique<TcpClient>(
        env.group, env.timer, clientOptions(port),
        ChannelHandler{.onConnected = [&mutex, &connectedOn, i](Channel&) {
          std::lock_guard lock(mutex);
          connectedOn[i] = std::this_thread::get_id();
        }}));
    clients.back()->start();
    REQUIRE(waitFor([&] { return seen(i); }));
  }
  {
    std::lock_guard lock(mutex);
    for (std::size_t i = 0; i < 4; ++i) CHECK(connectedOn[i] == threads[i % 2]);
  }
  for (auto& c : clients) c->close();
  server.stop();
}

}  // TEST_SUITE("net")
