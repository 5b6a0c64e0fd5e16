// The runtime's stop: its order (servers gracefully first, then clients, endpoint, loops, wheel),
// from another thread, from a handler and a wheel task, twice, and on SIGTERM.
#include "support.h"

#include <wheelbeat/runtime/runtime.h>

#include <doctest/doctest.h>

#include <csignal>
#include <thread>

using namespace std::chrono_literals;
using runtime_test::sample;
using runtime_test::waitUntil;
using wheelbeat::Runtime;
namespace net = wheelbeat::net;

namespace {

constexpr const char* kDocument = R"({ "loop": { "io_threads": 2 }, "wheel": { "tick": "5ms" },
  "server": { "listen": "127.0.0.1:0", "shutdown_grace": "2s" },
  "metrics": { "listen": "127.0.0.1:0" } })";

// Counts every callback of the handler it makes.
struct Callbacks {
  std::atomic<int> count{0};
  std::atomic<int> frames{0};
  net::ChannelHandler handler(std::function<void()> onFrame = {}) {
    return {.onConnected = [this](net::Channel&) { ++count; },
            .onFrame =
                [this, onFrame](net::Channel&, const net::FrameView&) {
                  ++count;
                  ++frames;
                  if (onFrame) onFrame();
                },
            .onClosed = [this](net::Channel&, const net::CloseReason&) { ++count; }};
  }
};

// A server of `rt` and a client of `rt` connected to it.
struct Pair {
  std::shared_ptr<net::TcpServer> server;
  std::shared_ptr<net::TcpClient> client;
  Pair(Runtime& rt, Callbacks& serverSide, Callbacks& clientSide,
       std::function<void()> onServerFrame = {}) {
    server = rt.server(serverSide.handler(std::move(onServerFrame)));
    client = rt.client("127.0.0.1", server->listen(), clientSide.handler());
    client->start();
    REQUIRE(waitUntil([&] { return client->state() == net::ClientState::Connected; }));
    REQUIRE(waitUntil([&] { return server->connections() == 1; }));
  }
};

}  // namespace

TEST_SUITE("runtime") {
TEST_CASE(
    "stop order: READONLY from the server first - then every side closed - no late callback") {
  Runtime rt = Runtime::fromJson(kDocument);
  Callbacks serverSide, clientSide;
  Pair pair(rt, serverSide, clientSide);
  const std::uint16_t metricsPort = rt.metricsPort();
  rt.stop();
  CHECK(rt.isStopped());
  CHECK(pair.client->state() == net::ClientState::Closed);
  CHECK(pair.server->connections() == 0);
  CHECK(rt.loops().isStopped());
  CHECK(rt.timer().isStopped());
  CHECK(runtime_test::scrape(metricsPort).empty());
  // The server's graceful shutdown came before the client's close: the client read READONLY.
  const std::string t = rt.metrics().prometheusText();
  CHECK(sample(t, "wheelbeat_channel_readonly_received_total") == 1.0);
  CHECK(sample(t, "wheelbeat_channels{state=\"connected\"}") == 0.0);
  // Connected and closed, each side once (the client's close after the server's is its last).
  const int serverCallbacks = serverSide.count.load();
  const int clientCallbacks = clientSide.count.load();
  CHECK(serverCallbacks == 2);
  CHECK(clientCallbacks >= 2);
  pair.client->close();  // after stop: nothing runs any more
  pair.server->stop();
  pair.client.reset();
  pair.server.reset();
  CHECK(serverSide.count == serverCallbacks);
  CHECK(clientSide.count == clientCallbacks);
}

TEST_CASE("stop from another thread: run() returns once everything has stopped") {
  Runtime rt = Runtime::fromJson(kDocument);
  Callbacks serverSide, clientSide;
  Pair pair(rt, serverSide, clientSide);
  std::thread stopper([&] { rt.stop(); });
  rt.run();
  CHECK(pair.client->state() == net::ClientState::Closed);
  CHECK(rt.timer().isStopped());
  stopper.join();
  rt.run();  // already stopped: returns at once
}

TEST_CASE("stop from a handler and from a wheel task: begins there - run() waits for the end") {
  Runtime rt = Runtime::fromJson(kDocument);
  Callbacks serverSide, clientSide;
  Pair pair(rt, serverSide, clientSide, [&rt] { rt.stop(); });  // on a loop thread
  CHECK_FALSE(rt.isStopped());
  (void)pair.client->channel().send(net::kHessian2 | net::flag::kRequest, 0, 1, "stop");
  rt.run();
  CHECK(serverSide.frames == 1);
  CHECK(pair.client->state() == net::ClientState::Closed);
  CHECK(rt.loops().isStopped());

  Runtime second = Runtime::fromJson(kDocument);
  (void)second.timer().newTimeout([&second] { second.stop(); }, 1ms);  // on the wheel thread
  second.run();
  CHECK(second.timer().isStopped());
}

TEST_CASE("double and concurrent stop: one stop - every caller returns after it") {
  Runtime rt = Runtime::fromJson(kDocument);
  Callbacks serverSide, clientSide;
  Pair pair(rt, serverSide, clientSide);
  std::thread a([&] { rt.stop(); });
  std::thread b([&] { rt.stop(); });
  rt.stop();
  CHECK(pair.client->state() == net::ClientState::Closed);
  a.join();
  b.join();
  rt.stop();
  CHECK(serverSide.count == 2);
  CHECK_THROWS_WITH_AS((void)rt.server({}),
                       "wheelbeat::Runtime::server: the runtime is stopped "
                       "(expected: objects made before stop())",
                       std::logic_error);
  CHECK_THROWS_AS((void)rt.client(), std::logic_error);
  CHECK_THROWS_AS((void)rt.retry("x"), std::logic_error);
  CHECK_THROWS_AS((void)rt.registry(), std::logic_error);
  CHECK_THROWS_AS((void)rt.serviceClient("org.example.Echo"), std::logic_error);
}

TEST_CASE("stopOnSignals: SIGTERM stops the runtime - one runtime at a time - handlers restored") {
  struct sigaction before {};
  ::sigaction(SIGTERM, nullptr, &before);
  {
    Runtime rt = Runtime::fromJson(kDocument);
    rt.stopOnSignals();
    rt.stopOnSignals();  // idempotent
    Runtime other = Runtime::fromJson(kDocument);
    CHECK_THROWS_WITH_AS(other.stopOnSignals(), doctest::Contains("another runtime"),
                         std::logic_error);
    Callbacks serverSide, clientSide;
    Pair pair(rt, serverSide, clientSide);
    std::raise(SIGTERM);
    rt.run();
    CHECK(pair.client->state() == net::ClientState::Closed);
    CHECK_FALSE(other.isStopped());
  }
  struct sigaction after {};
  ::sigaction(SIGTERM, nullptr, &after);
  const bool restored = after.sa_handler == before.sa_handler;
  CHECK(restored);
  Runtime again = Runtime::fromJson(kDocument);
  again.stopOnSignals();  // free again
}
}  // TEST_SUITE("runtime")
