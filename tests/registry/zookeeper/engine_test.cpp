// The ZooKeeper engine against a real server (one per test, zk_server.h), read back with a plain
// client (zk_client.h): Dubbo's exact znode paths, node types and encoded names; providers written
// by others (any parameter order, double-encoded values, malformed names, empty://); a provider
// registered after the subscription; a session the server expires (its node goes, subscribers are
// told, and the engine's next session puts every node and watch back); the time from a
// registration to the subscriber's notification.
#include "dubbo_url.h"
#include "engines.h"  // tests/registry/
#include "zk_client.h"

#include <wheelbeat/registry/zookeeper_engine.h>

#include <doctest/doctest.h>

using namespace wbcontract;
namespace dubbo = wheelbeat::registry::dubbo;

namespace {

constexpr std::string_view kInterface = "org.example.Greeter";

std::string dubboProvider(std::uint16_t port) {
  dubbo::ProviderOptions o;
  o.host = "10.0.0.5";
  o.port = port;
  o.interface = std::string(kInterface);
  o.application = "greeter";
  o.version = "1.0.0";
  o.methods = {"sayHello", "sayBye"};
  o.pid = 4242;
  o.timestampMs = 1700000000000;
  o.timeoutMs = 3000;
  o.heartbeatMs = 60000;
  return dubbo::providerUrl(o).toFullString();
}

std::string providersPath() { return fmt::format("/dubbo/{}/providers", kInterface); }

ZookeeperEngine& engineOf(Registry& r) { return dynamic_cast<ZookeeperEngine&>(r.engine()); }

std::unique_ptr<Registry> started(EventLoop& loop, HashedWheelTimer& timer,
                                  const RegistrySetup& setup) {
  auto r = makeRegistry(loop, timer, setup);
  r->start();
  return r;
}

}  // namespace

TEST_SUITE("zookeeper") {

TEST_CASE("zookeeper engine: a provider's node is ephemeral at Dubbo's exact path") {
  Env env;
  ZooKeeperFixture zk;
  auto provider = started(env.loop, env.timer, zk.setup());
  REQUIRE(provider->isConnected());
  const std::string url = dubboProvider(20880);
  CHECK(url ==
        "dubbo://10.0.0.5:20880/org.example.Greeter?anyhost=true&application=greeter&"
        "category=providers&default.timeout=3000&dubbo=2.0.2&heartbeat=60000&"
        "interface=org.example.Greeter&methods=sayHello,sayBye&pid=4242&side=provider&"
        "timestamp=1700000000000&version=1.0.0");
  std::atomic<int> ok{0};
  provider->registerUrl(url, [&](const TaskResult& r) { ok += r.ok ? 1 : 0; });
  REQUIRE(waitFor([&] { return ok.load() == 1; }));

  auto& plain = zk.inspector();
  const auto children = plain.children(providersPath());
  REQUIRE(children.result.ok());
  REQUIRE(children.names.size() == 1);
  CHECK(children.names[0] == dubbo::encode(url));
  CHECK(children.names[0].starts_with("dubbo%3A%2F%2F10.0.0.5%3A20880%2Forg.example.Greeter%3F"));
  const auto node = plain.exists(providersPath() + "/" + children.names[0]);
  REQUIRE(node.stat.has_value());
  CHECK(node.stat->ephemeralOwner == engineOf(*provider).sessionId());
  CHECK(node.stat->ephemeralOwner != 0);
  for (const std::string& parent :
       std::vector<std::string>{"/dubbo", "/dubbo/org.example.Greeter", providersPath()}) {
    const auto p = plain.exists(parent);
    REQUIRE(p.stat.has_value());
    CHECK(p.stat->ephemeralOwner == 0);  // persistent
  }

  // A consumer's url goes under consumers.
  const std::string consumer =
      "consumer://10.0.0.6/org.example.Greeter?application=shop&category=consumers&check=false&"
      "dubbo=2.0.2&interface=org.example.Greeter&side=consumer&version=1.0.0";
  provider->registerUrl(consumer, [&](const TaskResult& r) { ok += r.ok ? 1 : 0; });
  REQUIRE(waitFor([&] { return ok.load() == 2; }));
  const auto consumers = plain.children("/dubbo/org.example.Greeter/consumers");
  CHECK(consumers.names == std::vector<std::string>{dubbo::encode(consumer)});

  provider->unregisterUrl(url, [&](const TaskResult& r) { ok += r.ok ? 1 : 0; });
  REQUIRE(waitFor([&] { return ok.load() == 3; }));
  CHECK(plain.children(providersPath()).names.empty());
  CHECK(provider->failback().pendingRetryCount() == 0);
}

TEST_CASE("zookeeper engine: check=true on an unreachable server names the address and the error") {
  Env env;
  ZooKeeperFixture zk;
  zk.down();
  RegistrySetup setup = zk.setup();
  setup.failback.check = true;
  auto provider = started(env.loop, env.timer, setup);
  CHECK_FALSE(provider->isConnected());
  std::mutex mutex;
  std::optional<TaskResult> result;
  provider->registerUrl(dubboProvider(20883), [&](const TaskResult& r) {
    std::lock_guard lock(mutex);
    result = r;
  });
  REQUIRE(waitFor([&] {
    std::lock_guard lock(mutex);
    return result.has_value();
  }));
  CHECK_FALSE(result->ok);
  CHECK_FALSE(result->retrying);
  CHECK(result->error == "disconnected");
  CHECK(result->message ==
        fmt::format("zookeeper 127.0.0.1:{}: connection loss (no session within 1s)", zk.port()));
  CHECK(provider->failback().registered().empty());
}

TEST_CASE("zookeeper engine: providers written by others are read as Dubbo writes them") {
  Env env;
  ZooKeeperFixture zk;
  auto& plain = zk.inspector();
  // A Java provider's node (parameters in its own order), one whose values were encoded before
  // the whole (dubbo-go), a malformed name and an empty:// marker.
  const std::string java =
      "dubbo://10.0.0.7:20880/org.example.Greeter?side=provider&version=1.0.0&methods=sayHello&"
      "interface=org.example.Greeter&application=java-greeter&dubbo=2.0.2&anyhost=true";
  const std::string goValues =
      "dubbo://10.0.0.8:20880/org.example.Greeter?application=go%2Dgreeter&"
      "interface=org.example.Greeter&methods=sayHello%2CsayBye&version=1.0.0";
  const wheelbeat::registry::zk::CreateOptions ephemeral{
      .ephemeral = true, .createParents = true, .existingIsOk = false};
  for (const std::string& name :
       {dubbo::encode(java), dubbo::encode(goValues), std::string("dubbo%3A%2F%2F%zz"),
        dubbo::encode("empty://10.0.0.9/org.example.Greeter")}) {
    REQUIRE(plain.create(providersPath() + "/" + name, ephemeral).result.ok());
  }
  auto consumer = started(env.loop, env.timer, zk.setup());
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe(std::string(kInterface), watcher);
  const std::vector<std::string> expected{
      "dubbo://10.0.0.7:20880/org.example.Greeter?anyhost=true&application=java-greeter&"
      "dubbo=2.0.2&interface=org.example.Greeter&methods=sayHello&side=provider&version=1.0.0",
      "dubbo://10.0.0.8:20880/org.example.Greeter?application=go-greeter&"
      "interface=org.example.Greeter&methods=sayHello,sayBye&version=1.0.0"};
  CHECK(watcher->sees(std::string(kInterface), expected));
  CHECK(engineOf(*consumer).stats().malformedChildren == 1);

  for (const auto& name : plain.children(providersPath()).names) {
    REQUIRE(plain.remove(providersPath() + "/" + name).ok());
  }
  CHECK(watcher->sees(std::string(kInterface), {}));  // no children: an empty list
}

TEST_CASE("zookeeper engine: a provider registered after the subscription is seen within 1 s") {
  Env env;
  ZooKeeperFixture zk;
  auto consumer = started(env.loop, env.timer, zk.setup());
  auto watcher = std::make_shared<Watcher>();
  // Nothing exists yet under /dubbo: the subscription must still find a later provider.
  REQUIRE_FALSE(zk.inspector().exists("/dubbo").stat.has_value());
  consumer->subscribe(std::string(kInterface), watcher);
  REQUIRE(watcher->sees(std::string(kInterface), {}));
  auto provider = started(env.loop, env.timer, zk.setup());
  const std::string url = dubboProvider(20881);
  const auto registered = Clock::now();
  provider->registerUrl(url);
  REQUIRE(watcher->sees(std::string(kInterface), {url}));
  const auto latency = Clock::now() - registered;
  MESSAGE("registration to notification: "
          << std::chrono::duration_cast<std::chrono::microseconds>(latency).count() << " us");
  CHECK(latency < 1s);
  provider->unregisterUrl(url);
  CHECK(watcher->sees(std::string(kInterface), {}));
}

TEST_CASE("zookeeper engine: an expired session's node goes and the next session puts it back") {
  Env env;  // the consumer's loop
  ZooKeeperFixture zk;
  EventLoop providerLoop{"wb-zk-provider"};
  auto consumer = started(env.loop, env.timer, zk.setup());
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe(std::string(kInterface), watcher);
  auto provider = started(providerLoop, env.timer, zk.setup());
  const std::string url = dubboProvider(20882);
  provider->registerUrl(url);
  REQUIRE(watcher->sees(std::string(kInterface), {url}));
  const std::int64_t firstSession = engineOf(*provider).sessionId();

  {
    // The provider's loop stops answering: the server expires its session (2 s here), deletes
    // its node, and the consumer is told.
    wbzk::LoopBlock frozen(providerLoop);
    const auto blocked = Clock::now();
    CHECK(watcher->sees(std::string(kInterface), {}));
    MESSAGE("provider node gone "
            << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - blocked).count()
            << " ms after its loop froze (session timeout 2000 ms)");
  }
  // Thawed: the engine learns of the expiry, opens a new session, and recover() re-creates the
  // node; the consumer's watch (its own session never lapsed) sees it come back.
  CHECK(watcher->sees(std::string(kInterface), {url}));
  CHECK(waitFor([&] { return provider->isConnected(); }));
  const auto stats = engineOf(*provider).stats();
  CHECK(stats.expirations >= 1);
  CHECK(stats.sessions == 2);
  CHECK(engineOf(*provider).sessionId() != firstSession);
  CHECK(waitFor([&] { return provider->failback().pendingRetryCount() == 0; }));
  provider->close();
  consumer->close();
  CHECK(providerLoop.stop() == 0);
}

}  // TEST_SUITE("zookeeper")
