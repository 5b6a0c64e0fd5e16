// A provider's graceful shutdown (registry/shutdown.h) seen by a consumer's Directory, on
// loopback with an in-process RegistryServer: two providers answering each call 50 ms after it
// arrives, one consumer calling 200 times a second through Directory::pick(). One provider shuts
// down (unregister, READONLY, drain, close): not one call fails, every call after the shutdown
// goes to the other provider, and the shutdown ends well within its grace with nothing abandoned.
#include "../../net/support.h"

#include <wheelbeat/registry/directory.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>
#include <wheelbeat/registry/shutdown.h>

#include <fmt/format.h>

#include <map>

using namespace wbnet;
using namespace wheelbeat::registry;

namespace {

const std::string kService = "org.example.Slow";
constexpr auto kServiceTime = 50ms;

// A provider: a TcpServer answering each two-way request kServiceTime later (on the wheel; the
// channel stays open while a request is unanswered, see TcpServer::shutdown), registered by its
// own Registry.
struct SlowProvider {
  Env& env;
  std::atomic<int> received{0};
  std::atomic<int> receivedAfterShutdown{0};
  std::atomic<bool> shutDown{false};
  TcpServer server;
  std::unique_ptr<Registry> registry;
  std::string url;

  SlowProvider(Env& e, std::uint16_t registryPort)
      : env(e), server(e.loop, e.timer, options(), handler()) {
    const auto port = server.listen();
    RegistrySetup setup;
    setup.registry.address = Endpoint{"127.0.0.1", registryPort};
    setup.client = clientOptions(registryPort);
    setup.failback = fastFailback();
    setup.requestTimeout = 500ms;
    registry = makeRegistry(e.loop, e.timer, setup);
    registry->start();
    url = fmt::format("dubbo://127.0.0.1:{}/{}", port, kService);
    registry->registerUrl(url);
  }

  static ServerOptions options() {
    ServerOptions o = serverOptions();
    o.shutdownGrace = 10s;
    return o;
  }

  ChannelHandler handler() {
    ChannelHandler h;
    h.onFrame = [this](Channel& ch, const FrameView& f) {
      if (!f.isRequest() || !f.isTwoWay()) return;
      ++received;
      if (shutDown) ++receivedAfterShutdown;
      Channel* channel = &ch;
      const std::uint64_t id = f.id;
      env.timer.newTimeout([channel, id] { (void)channel->send(kHessian2, kStatusOk, id, "ok"); },
                           kServiceTime);
    };
    return h;
  }
};

// Calls through the directory every 5 ms from its own thread; counts outcomes per provider port.
struct Caller {
  Directory& directory;
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::atomic<int> notSent{0};  // no connected provider at that moment, or refused
  std::mutex mutex;
  std::map<std::uint16_t, int> okByPort;
  std::thread thread;

  explicit Caller(Directory& d) : directory(d) {
    thread = std::thread([this] {
      while (!stop) {
        call();
        std::this_thread::sleep_for(5ms);  // the call rate (200/s), not a synchronisation
      }
    });
  }
  ~Caller() { finish(); }
  void finish() {
    stop = true;
    if (thread.joinable()) thread.join();
  }

  void call() {
    auto client = directory.pick();
    if (!client) {
      ++notSent;
      return;
    }
    const std::uint16_t port = client->channel().remote().port;
    const auto r = client->channel().request("hi", 2s, [this, port](const CallResult& res) {
      if (res.status == CallStatus::Ok) {
        ++ok;
        std::lock_guard lock(mutex);
        ++okByPort[port];
      } else {
        ++failed;
      }
    });
    if (r.sent == SendResult::Queued) {
      ++sent;
    } else {
      ++notSent;
    }
  }
  int okAt(std::uint16_t port) {
    std::lock_guard lock(mutex);
    return okByPort[port];
  }
};

}  // namespace

TEST_SUITE("registry") {

TEST_CASE("graceful shutdown: a consumer at 200 calls/s loses no call while a provider leaves") {
  Env env;
  RegistryServer registry(env.loop, env.timer, serverOptions());
  const auto registryPort = registry.start();
  SlowProvider a(env, registryPort);
  SlowProvider b(env, registryPort);
  RegistrySetup setup;
  setup.registry.address = Endpoint{"127.0.0.1", registryPort};
  setup.client = clientOptions(registryPort);
  setup.failback = fastFailback();
  setup.requestTimeout = 500ms;
  auto consumerReg = makeRegistry(env.loop, env.timer, setup);
  consumerReg->start();
  DirectoryOptions options;
  options.client = clientOptions(1);
  options.minHeartbeat = 50ms;
  Directory directory(env.loop, env.timer, *consumerReg, kService, options);
  directory.start();
  REQUIRE(waitFor(
      [&] {
        std::size_t n = 0;
        for (const auto& p : directory.providers()) n += p.state == ClientState::Connected;
        return n == 2;
      },
      5s));

  Caller caller(directory);
  REQUIRE(waitFor([&] { return a.received >= 50 && b.received >= 50; }, 10s));

  a.shutDown = true;
  const ShutdownReport report = shutdownProvider(*a.registry, {a.url}, a.server, 10s);
  CHECK(report.abandoned == 0);
  CHECK(report.elapsed < 5s);  // drained well within the grace
  CHECK(a.server.connections() == 0);
  const int okBefore = caller.okAt(b.server.port());
  REQUIRE(waitFor([&] { return caller.okAt(b.server.port()) >= okBefore + 50; }, 10s));
  caller.finish();
  // Every call sent got its answer (bounded: the last ones are 50 ms away).
  REQUIRE(waitFor([&] { return caller.ok + caller.failed == caller.sent; }, 5s));
  CHECK(caller.failed == 0);
  CHECK(caller.ok == caller.sent);
  CHECK(caller.notSent == 0);
  // Calls that reached the leaving provider after its shutdown began were ones already on their
  // way (sent before the consumer learnt it left): a handful at most, each answered.
  CHECK(a.receivedAfterShutdown <= 5);
  CHECK(directory.providers().size() == 1);

  directory.close();
  b.server.stop();
  for (auto* r : {a.registry.get(), b.registry.get(), consumerReg.get()}) r->close();
  registry.stop();
}

}  // TEST_SUITE("registry")
