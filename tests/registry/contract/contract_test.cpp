// The Registry contract, run against both engines (engines.h): every scenario is a function of
// the engine kind, and CONTRACT() registers it twice, as "contract embedded: ..." and
// "contract redis: ...", so each engine has its own ctest test (names free of '[', ']', ';', ',').
// Registries are built through makeRegistry(), as an application would.
#include "engines.h"  // tests/registry/

using namespace wbcontract;

namespace {

std::unique_ptr<Registry> started(Env& env, RegistrySetup setup) {
  auto r = makeRegistry(env.loop, env.timer, std::move(setup));
  r->start();
  return r;
}

void registerAndUnregister(EngineKind kind) {
  Env env;
  auto engine = makeFixture(kind, env);
  auto provider = started(env, engine->setup());
  auto consumer = started(env, engine->setup());
  CHECK(provider->isConnected());
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  CHECK(watcher->sees("greeter", {}));
  provider->registerUrl(kUrl);
  CHECK(watcher->sees("greeter", {kUrl}));
  CHECK(engine->stored("greeter") == std::vector<std::string>{kUrl});
  provider->unregisterUrl(kUrl);
  CHECK(watcher->sees("greeter", {}));
  CHECK(waitFor([&] { return engine->stored("greeter").empty(); }));
  CHECK(provider->failback().pendingRetryCount() == 0);
  CHECK(consumer->failback().pendingRetryCount() == 0);
}

void twoProvidersOneLeaves(EngineKind kind) {
  Env env;
  auto engine = makeFixture(kind, env);
  auto first = started(env, engine->setup());
  auto second = started(env, engine->setup());
  auto consumer = started(env, engine->setup());
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  first->registerUrl(kUrl);
  second->registerUrl(kUrl2);
  CHECK(watcher->sees("greeter", {kUrl, kUrl2}));
  second->unregisterUrl(kUrl2);
  CHECK(watcher->sees("greeter", {kUrl}));
  CHECK(engine->stored("greeter") == std::vector<std::string>{kUrl});
}

void deadProviderDisappears(EngineKind kind) {
  Env env;
  auto engine = makeFixture(kind, env);
  auto consumer = started(env, engine->setup());
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  auto provider = started(env, engine->setup());
  provider->registerUrl(kUrl);
  REQUIRE(watcher->sees("greeter", {kUrl}));
  provider.reset();  // dies without unregistering
  const auto died = Clock::now();
  const bool gone =
      waitFor([&] { return watcher->providers("greeter")->empty(); }, engine->removalBound() + 1s);
  const auto lived = Clock::now() - died;
  CHECK(gone);
  CHECK(lived <= engine->removalBound());
  CHECK(lived >= engine->minimumLife());
  CHECK(waitFor([&] { return engine->stored("greeter").empty(); }));
}

void engineRestarted(EngineKind kind) {
  Env env;
  auto engine = makeFixture(kind, env);
  auto provider = started(env, engine->setup());
  auto consumer = started(env, engine->setup());
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  provider->registerUrl(kUrl);
  REQUIRE(watcher->sees("greeter", {kUrl}));
  const int before = watcher->notifications();
  engine->down();
  CHECK(waitFor([&] { return !provider->isConnected() && !consumer->isConnected(); }));
  engine->up();
  // Both reconnect (backoff <= 200 ms) and recover(): the provider registers again, the consumer
  // subscribes again and is told the list again.
  CHECK(waitFor([&] { return engine->stored("greeter") == std::vector<std::string>{kUrl}; }));
  CHECK(waitFor([&] { return watcher->notifications() > before; }));
  CHECK(watcher->sees("greeter", {kUrl}));
  CHECK(waitFor([&] {
    return provider->failback().pendingRetryCount() == 0 &&
           consumer->failback().pendingRetryCount() == 0;
  }));
  CHECK(provider->isConnected());
  CHECK(consumer->isConnected());
}

void callsRetriedUntilUp(EngineKind kind) {
  Env env;
  auto engine = makeFixture(kind, env);
  engine->down();
  auto provider = started(env, engine->setup());
  CHECK_FALSE(provider->isConnected());
  provider->registerUrl(kUrl);
  CHECK(waitFor([&] { return provider->failback().pendingRetryCount() == 1; }));
  engine->up();
  CHECK(waitFor([&] { return engine->stored("greeter") == std::vector<std::string>{kUrl}; }));
  CHECK(waitFor([&] { return provider->failback().pendingRetryCount() == 0; }));
}

void checkReportsUnreachable(EngineKind kind) {
  Env env;
  auto engine = makeFixture(kind, env);
  engine->down();
  RegistrySetup setup = engine->setup();
  setup.failback.check = true;
  const auto begin = Clock::now();
  auto provider = started(env, setup);
  // A refused connect is seen at once, not after the connect timeout (1 s here); ZooKeeper's
  // client gives no such signal: its engine gives up waiting at the connect timeout.
  CHECK(Clock::now() - begin < engine->unreachableSeenWithin());
  std::atomic<int> failures{0};
  provider->registerUrl(kUrl, [&](const TaskResult& r) {
    if (!r.ok && !r.retrying && r.error == "disconnected") ++failures;
  });
  CHECK(waitFor([&] { return failures.load() == 1; }, 2s));
  CHECK(provider->failback().registered().empty());
  CHECK(provider->failback().pendingRetryCount() == 0);
}

void malformedInputRefused(EngineKind kind) {
  Env env;
  auto engine = makeFixture(kind, env);
  auto client = makeRegistry(env.loop, env.timer, engine->setup());
  CHECK_THROWS_AS(client->registerUrl("greeter"), std::invalid_argument);
  CHECK_THROWS_AS(client->unregisterUrl("wheelbeat://h:1/a b"), std::invalid_argument);
  CHECK_THROWS_AS(client->subscribe("a b", std::make_shared<Watcher>()), std::invalid_argument);
  CHECK_THROWS_AS(client->subscribe("a/b", std::make_shared<Watcher>()), std::invalid_argument);
  CHECK(client->failback().registered().empty());
  CHECK(client->failback().subscribed().empty());
}

}  // namespace

#define CONTRACT(title, fn)                                              \
  TEST_CASE("contract embedded: " title) { fn(EngineKind::Embedded); }   \
  TEST_CASE("contract zookeeper: " title) { fn(EngineKind::ZooKeeper); } \
  TEST_CASE("contract redis: " title) { fn(EngineKind::Redis); }

TEST_SUITE("registry-contract") {
CONTRACT("a subscriber sees a provider register and unregister", registerAndUnregister)
CONTRACT("two providers and one leaves", twoProvidersOneLeaves)
CONTRACT("a provider that dies without unregistering disappears in bound", deadProviderDisappears)
CONTRACT("an engine restarted mid-test gets every registration back", engineRestarted)
CONTRACT("calls made while the engine is down are retried until it is up", callsRetriedUntilUp)
CONTRACT("check=true reports an unreachable engine at once", checkReportsUnreachable)
CONTRACT("malformed urls and services are refused before any call", malformedInputRefused)
}  // TEST_SUITE("registry-contract")
