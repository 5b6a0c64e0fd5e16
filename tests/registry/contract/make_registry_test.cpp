// makeRegistry()'s own rules and the Registry over a plugged engine: registry urls (parse, format,
// every malformed form refused with the value and the expectation), the kind picking the engine
// (zookeeper included), validate(RegistrySetup), and what the Registry does for
// every engine (start()'s wait, recover() after a reconnect, close() once) over a fake Engine.
#include "engines.h"  // tests/registry/

#include <wheelbeat/registry/embedded_engine.h>

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

using namespace wbcontract;
using wheelbeat::tasks::Completion;

namespace {

std::string errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

// An engine whose connection the test drives: every do-call succeeds at once and is counted;
// connect() / lose() report through the Registry's EngineEvents.
class FakeEngine final : public Engine {
public:
  struct State {
    std::mutex mutex;
    std::shared_ptr<EngineEvents> events;
    std::vector<std::string> calls;
    int starts = 0;
    int closes = 0;
    std::atomic<bool> up{false};
  };

  explicit FakeEngine(std::shared_ptr<State> s, bool upAtStart)
      : s_(std::move(s)), upAtStart_(upAtStart) {}

  void doRegister(const std::string& url, Completion done) override {
    record("register " + url, done);
  }
  void doUnregister(const std::string& url, Completion done) override {
    record("unregister " + url, done);
  }
  void doSubscribe(const std::string& service, std::shared_ptr<NotifyListener>,
                   Completion done) override {
    record("subscribe " + service, done);
  }
  void doUnsubscribe(const std::string& service, std::shared_ptr<NotifyListener>,
                     Completion done) override {
    record("unsubscribe " + service, done);
  }
  void start(std::shared_ptr<EngineEvents> events) override {
    {
      std::lock_guard lock(s_->mutex);
      ++s_->starts;
      s_->events = events;
    }
    s_->up = upAtStart_;
    if (upAtStart_) events->connected();
  }
  void close() override {
    std::lock_guard lock(s_->mutex);
    ++s_->closes;
    s_->events.reset();
  }
  bool isConnected() const noexcept override { return s_->up; }

private:
  void record(std::string call, const Completion& done) {
    {
      std::lock_guard lock(s_->mutex);
      s_->calls.push_back(std::move(call));
    }
    done(TaskResult::success());
  }

  std::shared_ptr<State> s_;
  bool upAtStart_;
};

std::size_t countOf(FakeEngine::State& s, const std::string& call) {
  std::lock_guard lock(s.mutex);
  return static_cast<std::size_t>(std::count(s.calls.begin(), s.calls.end(), call));
}

RegistrySetup fakeSetup() {
  RegistrySetup setup;
  setup.client.connectTimeout = 5s;
  setup.failback.registryRetry.initialDelay = 50ms;
  setup.failback.registryRetry.maxDelay = 50ms;
  return setup;
}

}  // namespace

TEST_SUITE("registry") {

TEST_CASE("registry url: every kind parses and formats back") {
  const auto r = parseRegistryUrl("redis://10.0.0.2:6379");
  CHECK(r.kind == RegistryKind::Redis);
  CHECK(r.address == Endpoint{"10.0.0.2", 6379});
  CHECK(r.group == RegistryOptions{}.group);
  CHECK(r.session == RegistryOptions{}.session);
  CHECK(parseRegistryUrl("embedded://registry.local:9090").kind == RegistryKind::Embedded);
  const auto zk = parseRegistryUrl("zookeeper://[::1]:2181");
  CHECK(zk.kind == RegistryKind::ZooKeeper);
  CHECK(zk.address == Endpoint{"::1", 2181});
  for (const char* url : {"embedded://h:1", "redis://10.0.0.2:6379", "zookeeper://[::1]:65535"}) {
    CAPTURE(url);
    CHECK(registryUrl(parseRegistryUrl(url)) == url);
  }
  CHECK(registryKindName(RegistryKind::ZooKeeper) == "zookeeper");
}

TEST_CASE("registry url: malformed urls name the value and the expectation") {
  const auto err = [](const char* url) { return errorOf([&] { (void)parseRegistryUrl(url); }); };
  CHECK(err("etcd://h:1") ==
        R"(registry url "etcd://h:1": scheme "etcd" (expected: embedded, redis or zookeeper))");
  CHECK(err("Redis://h:1") ==
        R"(registry url "Redis://h:1": scheme "Redis" (expected: embedded, redis or zookeeper))");
  CHECK(err("h:6379") == R"(registry url "h:6379": no "://" (expected: kind://host:port))");
  // The address is read by net::parseEndpoint, with config's expectation (one parser, one text).
  CHECK(
      err("redis://h") ==
      R"(registry url "redis://h": address "h" (expected: "host:port" (IPv6: "[::1]:20880") with a port in 1..65535))");
  for (const auto& [url, address] :
       std::vector<std::pair<std::string, std::string>>{{"redis://h:0", "h:0"},
                                                        {"redis://h:65536", "h:65536"},
                                                        {"redis://h:x1", "h:x1"},
                                                        {"redis://h:", "h:"},
                                                        {"redis://:1", ":1"},
                                                        {"redis://::1:6379", "::1:6379"},
                                                        {"redis://[h]:1", "[h]:1"},
                                                        {"redis://[]:1", "[]:1"},
                                                        {"redis://[::1:1", "[::1:1"}}) {
    CAPTURE(url);
    CHECK(err(url.c_str()) ==
          fmt::format(R"(registry url "{}": address "{}" (expected: "host:port" (IPv6: )"
                      R"("[::1]:20880") with a port in 1..65535))",
                      url, address));
  }
  CHECK(
      err("redis://h:1/db") ==
      R"(registry url "redis://h:1/db": "/db" (expected: kind://host:port, no user, path or query))");
  CHECK(err("redis://u@h:1").find(R"("@h:1")") != std::string::npos);
  CHECK(err("redis://h:1?x=1").find(R"("?x=1")") != std::string::npos);
  CHECK(err("redis://h :1").find("whitespace") != std::string::npos);
  CHECK(err("").find("no \"://\"") != std::string::npos);
}

TEST_CASE("registry setup: validate names the first bad field under its path") {
  RegistrySetup s;
  CHECK_NOTHROW(validate(s));
  s.requestTimeout = 0ns;
  CHECK(errorOf([&] { validate(s); }) == "RegistrySetup.requestTimeout = 0ns (expected: > 0)");
  s = {};
  s.client.connectTimeout = 0ns;
  CHECK(errorOf([&] { validate(s); }) ==
        "RegistrySetup.client.connectTimeout = 0ns (expected: > 0)");
  s = {};
  s.client.server.port = 0;  // ignored: registry.address replaces it
  CHECK_NOTHROW(validate(s));
  s = {};
  s.failback.maxPendingRetries = 0;
  CHECK(errorOf([&] { validate(s); }) ==
        "RegistrySetup.failback.maxPendingRetries = 0 (expected: >= 1)");
  s = {};
  s.registry.session = 10ms;
  CHECK(errorOf([&] { validate(s); }) == "RegistryOptions.session = 10000000ns (expected: >= 1s)");
  s = {};
  s.registry.address.port = 0;
  CHECK(errorOf([&] { validate(s); }) == "RegistryOptions.address.port = 0 (expected: 1 .. 65535)");
}

TEST_CASE("registry setup: the client's heartbeat must span 2 ticks of the registry's wheel") {
  RegistrySetup s;
  s.client.heartbeat.interval = 150ms;
  CHECK_NOTHROW(validate(s));
  CHECK(errorOf([&] { validate(s, 100ms); }) ==
        "RegistrySetup.client.heartbeat.interval = 150ms (expected: at least 2 wheel ticks = "
        "200ms; the wheel's tick is 100ms)");
  CHECK_NOTHROW(validate(s, 75ms));
  // makeRegistry() checks it against its timer: nothing is made.
  wheelbeat::core::HashedWheelTimer coarse(wheelbeat::core::WheelOptions{.tickDuration = 100ms});
  Env env;
  CHECK(errorOf([&] { (void)makeRegistry(env.loop, coarse, "redis://127.0.0.1:1", s); }) ==
        "RegistrySetup.client.heartbeat.interval = 150ms (expected: at least 2 wheel ticks = "
        "200ms; the wheel's tick is 100ms)");
}

TEST_CASE("make registry: the kind or the url picks the engine") {
  Env env;
  RegistryServer server(env.loop, env.timer, serverOptions());
  const auto port = server.start();
  RegistrySetup setup;
  setup.client = clientOptions(port);
  auto byUrl =
      makeRegistry(env.loop, env.timer, fmt::format("embedded://127.0.0.1:{}", port), setup);
  CHECK(dynamic_cast<EmbeddedEngine*>(&byUrl->engine()) != nullptr);
  byUrl->start();
  CHECK(byUrl->isConnected());
  byUrl->close();
  CHECK_THROWS_AS((void)makeRegistry(env.loop, env.timer, "embedded://127.0.0.1", setup),
                  std::invalid_argument);
  setup.registry.kind = RegistryKind::ZooKeeper;
  CHECK(dynamic_cast<ZookeeperEngine*>(&makeRegistry(env.loop, env.timer, setup)->engine()) !=
        nullptr);
  CHECK(dynamic_cast<ZookeeperEngine*>(
            &makeRegistry(env.loop, env.timer, "zookeeper://127.0.0.1:2181", setup)->engine()) !=
        nullptr);
  setup.registry.kind = RegistryKind::Embedded;
  setup.requestTimeout = 0ns;
  CHECK_THROWS_AS((void)makeRegistry(env.loop, env.timer, setup), std::invalid_argument);
  server.stop();
}

TEST_CASE("plugged engine: start waits for the first connect and every reconnect recovers") {
  Env env;
  auto state = std::make_shared<FakeEngine::State>();
  Registry registry(env.timer, std::make_unique<FakeEngine>(state, true), fakeSetup());
  const auto begin = Clock::now();
  registry.start();
  CHECK(Clock::now() - begin < 2s);  // connected at once: no wait for the bound (6 s)
  CHECK(registry.isConnected());
  registry.registerUrl(kUrl);
  registry.subscribe("greeter", std::make_shared<Watcher>());
  CHECK(countOf(*state, "register " + kUrl) == 1);
  std::shared_ptr<EngineEvents> events;
  {
    std::lock_guard lock(state->mutex);
    events = state->events;
  }
  REQUIRE(events != nullptr);
  CHECK(events->registered() == std::vector<std::string>{kUrl});
  events->disconnected();
  events->connected();  // a reconnect: everything is sent again
  CHECK(waitFor([&] {
    return countOf(*state, "register " + kUrl) == 2 && countOf(*state, "subscribe greeter") == 2;
  }));
  registry.start();  // a second start() only waits
  CHECK(state->starts == 1);
  registry.close();
  registry.close();
  CHECK(state->closes == 1);
  // The engine may still report while closing: ignored.
  CHECK_NOTHROW(events->connected());
  CHECK(events->registered().empty());
  CHECK_THROWS_AS(registry.start(), std::logic_error);
  CHECK_THROWS_AS(registry.registerUrl(kUrl), std::logic_error);
}

TEST_CASE("plugged engine: a failed first attempt ends start's wait") {
  Env env;
  auto state = std::make_shared<FakeEngine::State>();
  Registry registry(env.timer, std::make_unique<FakeEngine>(state, false), fakeSetup());
  std::thread reporter([&] {
    std::shared_ptr<EngineEvents> events;
    REQUIRE(waitFor([&] {
      std::lock_guard lock(state->mutex);
      events = state->events;
      return events != nullptr;
    }));
    events->disconnected();
  });
  const auto begin = Clock::now();
  registry.start();
  reporter.join();
  CHECK(Clock::now() - begin < 2s);
  CHECK_FALSE(registry.isConnected());
  CHECK_THROWS_AS(registry.subscribe("a b", std::make_shared<Watcher>()), std::invalid_argument);
}

TEST_CASE("plugged engine: a null engine is refused") {
  Env env;
  CHECK(errorOf([&] { Registry r(env.timer, nullptr, RegistrySetup{}); }) ==
        "Registry: engine = null (expected: an engine)");
}

}  // TEST_SUITE("registry")
