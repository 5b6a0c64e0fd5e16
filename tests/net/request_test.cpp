// Channel::request() from the loop thread (the tracker's lock-free path, its map nodes reused)
// and from other threads (the inbox) at once: every request ends exactly once, with its own
// response, its timeout, or the close; a refused one leaves no entry and no timeout behind.
#include "support.h"

#include <fmt/format.h>

#include <map>
#include <thread>

namespace wbnet {

namespace {

// A connected client to an echo server, and what its requests became.
struct Rig {
  Env env;
  Recorder server;
  TcpServer srv{env.loop, env.timer, serverOptions(), echoHandler(server)};
  TcpClient cli{env.loop, env.timer, clientOptions(srv.listen())};
  Calls calls;
  std::mutex mutex;
  std::map<std::uint64_t, std::string> sentBodies;  // request id -> body sent

  Rig() {
    cli.start();
    REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  }

  // Any thread. Returns what request() returned; a queued request's body is remembered.
  RequestResult ask(const std::string& body, ns timeout = 5s) {
    const RequestResult r = cli.channel().request(body, timeout, calls.callback());
    if (r.sent == SendResult::Queued) {
      std::lock_guard lock(mutex);
      sentBodies.emplace(r.id, body);
    }
    return r;
  }

  // Every result is Ok, for a distinct request sent here, with that request's body echoed.
  void checkAllAnswered(std::size_t expected) {
    REQUIRE(calls.size() == expected);
    std::map<std::uint64_t, int> seen;
    std::lock_guard lock(mutex);
    for (std::size_t i = 0; i < expected; ++i) {
      const CallResult r = calls.at(i);
      CHECK(r.status == CallStatus::Ok);
      CHECK(++seen[r.id] == 1);
      const auto it = sentBodies.find(r.id);
      REQUIRE(it != sentBodies.end());
      CHECK(r.body == it->second + "!");
    }
    CHECK(seen.size() == expected);
  }
};

// Starts `total` requests from the loop thread, each from the previous one's callback, `depth`
// in flight; `finished` counts their callbacks.
struct Chain {
  Rig& rig;
  int total;
  std::atomic<int> started{0};
  std::atomic<int> finished{0};

  void next() {
    const int i = started.fetch_add(1);
    if (i >= total) return;
    const std::string body = fmt::format("chain-{}", i);
    const RequestResult r = rig.cli.channel().request(body, 5s, [this](const CallResult& res) {
      rig.calls.callback()(res);
      finished.fetch_add(1);
      next();
    });
    REQUIRE(r.sent == SendResult::Queued);
    std::lock_guard lock(rig.mutex);
    rig.sentBodies.emplace(r.id, body);
  }
  void begin(int depth) {
    rig.env.loop.post([this, depth] {
      for (int d = 0; d < depth; ++d) next();
    });
  }
};

}  // namespace

TEST_SUITE("net") {

TEST_CASE("requests started on the loop thread are each answered once with their own body") {
  Rig rig;
  const std::uint64_t baseline = rig.env.timer.pendingTimeouts();
  constexpr int kCount = 300;
  std::size_t pendingAfter = 0;
  REQUIRE(rig.env.loop.call([&] {
    for (int i = 0; i < kCount; ++i)
      REQUIRE(rig.ask(fmt::format("m{}", i)).sent == SendResult::Queued);
    pendingAfter = rig.cli.channel().pendingRequests();
  }));
  CHECK(pendingAfter == kCount);
  REQUIRE(waitFor([&] { return rig.calls.size() == kCount; }));
  rig.checkAllAnswered(kCount);
  CHECK(rig.cli.channel().pendingRequests() == 0);
  CHECK(rig.server.frameCount() == kCount);
  CHECK(waitFor([&] { return rig.env.timer.pendingTimeouts() == baseline; }, 2s));
}

TEST_CASE("a chain of requests from their own callbacks runs to the end with every answer") {
  Rig rig;
  Chain chain{rig, 3000};
  chain.begin(8);
  REQUIRE(waitFor([&] { return chain.finished.load() == 3000; }));
  rig.checkAllAnswered(3000);
  CHECK(rig.cli.channel().pendingRequests() == 0);
}

TEST_CASE(
    "requests from the loop thread and from two other threads at once are each answered "
    "once") {
  Rig rig;
  constexpr int kPerThread = 1500;
  Chain chain{rig, kPerThread};
  chain.begin(4);
  auto foreign = [&](char tag) {
    for (int i = 0; i < kPerThread; ++i) {
      REQUIRE(rig.ask(fmt::format("{}{}", tag, i)).sent == SendResult::Queued);
    }
  };
  std::thread a(foreign, 'a');
  std::thread b(foreign, 'b');
  a.join();
  b.join();
  REQUIRE(waitFor([&] { return rig.calls.size() == 3 * kPerThread; }));
  rig.checkAllAnswered(3 * kPerThread);
  CHECK(chain.finished.load() == kPerThread);
  CHECK(rig.cli.channel().pendingRequests() == 0);
}

TEST_CASE("a request from the loop thread times out once") {
  Rig rig;
  REQUIRE(rig.env.loop.call([&] { REQUIRE(rig.ask("silent", 100ms).sent == SendResult::Queued); }));
  REQUIRE(waitFor([&] { return rig.calls.size() == 1; }));
  CHECK(rig.calls.at(0).status == CallStatus::Timeout);
  CHECK(rig.calls.at(0).error == "no response within 100ms");
  CHECK(rig.cli.channel().pendingRequests() == 0);
  // A later request's answer comes after anything the first could still bring: one result more.
  REQUIRE(rig.ask("after").sent == SendResult::Queued);
  REQUIRE(waitFor([&] { return rig.calls.size() == 2; }));
  CHECK(rig.calls.at(1).status == CallStatus::Ok);
  CHECK(rig.calls.at(1).body == "after!");
}

TEST_CASE("a request refused on the loop thread leaves no entry and no timeout") {
  Env env;
  Recorder server;
  TcpServer srv(env.loop, env.timer, serverOptions(), echoHandler(server));
  TcpClient cli(env.loop, env.timer, queueBoundClientOptions(srv.listen()));
  cli.start();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  Channel& ch = cli.channel();
  Calls calls;
  const std::string body(16 << 10, 'q');
  std::uint64_t timeoutsBefore = 0;
  std::uint64_t timeoutsAfter = 0;
  std::uint64_t cancelledBefore = 0;
  std::uint64_t cancelledAfter = 0;
  RequestResult refused;
  // Inside one loop callback nothing is flushed: the queue fills exactly.
  REQUIRE(env.loop.call([&] {
    for (std::uint64_t i = 1; i <= 3; ++i)
      REQUIRE(ch.send(flag::kRequest, 0, i, body) == SendResult::Queued);
    timeoutsBefore = env.timer.pendingTimeouts();
    cancelledBefore = env.timer.metrics().cancelled;
    refused = ch.request(body, 5s, calls.callback());  // 4 frames of 16 400 B > 65 536
    timeoutsAfter = env.timer.pendingTimeouts();
    cancelledAfter = env.timer.metrics().cancelled;
  }));
  CHECK(refused.sent == SendResult::QueueFull);
  CHECK(timeoutsAfter == timeoutsBefore);
  CHECK(cancelledAfter == cancelledBefore + 1);  // its timeout was armed, then cancelled
  CHECK(ch.pendingRequests() == 0);
  REQUIRE(waitFor([&] { return server.frameCount() == 3; }));
  REQUIRE(ch.request("next", 5s, calls.callback()).sent == SendResult::Queued);
  REQUIRE(waitFor([&] { return calls.size() == 1; }));
  CHECK(calls.at(0).body == "next!");  // the refused request's callback never ran
}

TEST_CASE("a close fails requests from the loop thread and from another thread alike") {
  Rig rig;
  REQUIRE(rig.ask("silent").sent == SendResult::Queued);
  REQUIRE(rig.ask("silent").sent == SendResult::Queued);
  REQUIRE(rig.env.loop.call([&] {
    REQUIRE(rig.ask("silent").sent == SendResult::Queued);
    REQUIRE(rig.ask("silent").sent == SendResult::Queued);
  }));
  CHECK(rig.cli.channel().pendingRequests() == 4);
  REQUIRE(rig.env.loop.call([&] { REQUIRE(rig.ask("close-me").sent == SendResult::Queued); }));
  REQUIRE(waitFor([&] { return rig.calls.size() == 5; }));
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(rig.calls.at(i).status == CallStatus::Closed);
    CHECK(rig.calls.at(i).error.rfind("eof", 0) == 0);
  }
  CHECK(rig.cli.channel().pendingRequests() == 0);
}

}  // TEST_SUITE("net")

}  // namespace wbnet
