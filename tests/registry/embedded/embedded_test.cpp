// The embedded registry end to end on loopback: a RegistryServer, providers and consumers as
// Registries on the embedded engine, on one loop and one wheel. Registration and notification, a
// provider whose connection ends, a registry restarted on the same port (failback + recover bring
// everything back, no retry entry left), bad input refused at once.
#include "../../net/support.h"
#include "../watcher.h"

#include <wheelbeat/registry/embedded_engine.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>

#include <map>
#include <optional>

using namespace wbnet;
using namespace wheelbeat::registry;
using wheelbeat::registry::NotifyListener;
using wheelbeat::tasks::FailbackOptions;

namespace {

RegistryOptions registryAt(std::uint16_t port) {
  RegistryOptions o;
  o.address = Endpoint{"127.0.0.1", port};
  return o;
}

// A Registry on the embedded engine, as makeRegistry() builds it for the default kind.
std::unique_ptr<Registry> embedded(Env& env, std::uint16_t port, FailbackOptions failback = {}) {
  RegistrySetup setup;
  setup.registry = registryAt(port);
  setup.client = clientOptions(port);
  setup.failback = std::move(failback);
  auto r = makeRegistry(env.loop, env.timer, std::move(setup));
  REQUIRE(dynamic_cast<EmbeddedEngine*>(&r->engine()) != nullptr);
  return r;
}

ClientState stateOf(Registry& r) { return dynamic_cast<EmbeddedEngine&>(r.engine()).state(); }

const std::string kUrl = "wheelbeat://127.0.0.1:20880/greeter";

}  // namespace

TEST_SUITE("registry") {

TEST_CASE("embedded registry: a subscriber sees a provider register and leave") {
  Env env;
  RegistryServer server(env.loop, env.timer, serverOptions());
  const auto port = server.start();
  auto provider = embedded(env, port, fastFailback());
  auto consumer = embedded(env, port, fastFailback());
  provider->start();
  consumer->start();
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  CHECK(watcher->sees("greeter", {}));
  provider->registerUrl(kUrl);
  CHECK(watcher->sees("greeter", {kUrl}));
  CHECK(server.providers("greeter") == std::vector<std::string>{kUrl});
  provider->unregisterUrl(kUrl);
  CHECK(watcher->sees("greeter", {}));
  CHECK(provider->failback().pendingRetryCount() == 0);
  provider->close();
  consumer->close();
  server.stop();
}

TEST_CASE("embedded registry: a provider whose connection ends is removed") {
  Env env;
  RegistryServer server(env.loop, env.timer, serverOptions());
  const auto port = server.start();
  auto consumer = embedded(env, port);
  consumer->start();
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  {
    auto provider = embedded(env, port);
    provider->start();
    provider->registerUrl(kUrl);
    REQUIRE(watcher->sees("greeter", {kUrl}));
  }  // destroyed without unregistering: the connection ends
  CHECK(watcher->sees("greeter", {}));
  CHECK(waitFor([&] { return server.sessions() == 1; }));
  consumer->close();
  server.stop();
}

TEST_CASE("embedded registry: a restarted registry gets every registration back") {
  Env env;
  std::optional<RegistryServer> server(std::in_place, env.loop, env.timer, serverOptions());
  const auto port = server->start();
  auto provider = embedded(env, port, fastFailback());
  auto consumer = embedded(env, port, fastFailback());
  provider->start();
  consumer->start();
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  provider->registerUrl(kUrl);
  REQUIRE(watcher->sees("greeter", {kUrl}));
  server->stop();
  server.reset();
  server.emplace(env.loop, env.timer, serverOptions(port));
  REQUIRE(server->start() == port);
  // Both clients reconnect (backoff <= 200 ms) and recover(): the provider re-registers and the
  // consumer re-subscribes and is told the list again.
  CHECK(waitFor([&] { return server->providers("greeter") == std::vector<std::string>{kUrl}; }));
  CHECK(waitFor([&] { return server->sessions() == 2; }));
  CHECK(watcher->sees("greeter", {kUrl}));
  CHECK(waitFor([&] {
    return provider->failback().pendingRetryCount() == 0 &&
           consumer->failback().pendingRetryCount() == 0;
  }));
  provider->close();
  consumer->close();
  server->stop();
}

TEST_CASE("embedded registry: calls while the registry is down are retried until it is up") {
  Env env;
  std::uint16_t port = 0;
  {
    RegistryServer probe(env.loop, env.timer, serverOptions());
    port = probe.start();  // a free port, released again
  }
  auto provider = embedded(env, port, fastFailback());
  provider->start();
  CHECK(stateOf(*provider) != ClientState::Connected);
  provider->registerUrl(kUrl);
  CHECK(provider->failback().pendingRetryCount() == 1);
  RegistryServer server(env.loop, env.timer, serverOptions(port));
  REQUIRE(server.start() == port);
  CHECK(waitFor([&] { return server.providers("greeter") == std::vector<std::string>{kUrl}; }));
  CHECK(waitFor([&] { return provider->failback().pendingRetryCount() == 0; }));
  provider->close();
  server.stop();
}

TEST_CASE("embedded registry: check=true reports an unreachable registry at once") {
  Env env;
  RegistryServer probe(env.loop, env.timer, serverOptions());
  const auto port = probe.start();
  probe.stop();
  auto provider = embedded(env, port);
  provider->start();
  std::atomic<int> failures{0};
  provider->registerUrl(kUrl, [&](const wheelbeat::tasks::CallResult& r) {
    if (!r.ok && !r.retrying && r.error == "disconnected") ++failures;
  });
  CHECK(waitFor([&] { return failures.load() == 1; }));
  CHECK(provider->failback().registered().empty());
  CHECK(provider->failback().pendingRetryCount() == 0);
  provider->close();
}

TEST_CASE("embedded registry: malformed urls and services are refused before any call") {
  Env env;
  auto client = embedded(env, 9);
  CHECK_THROWS_AS(client->registerUrl("greeter"), std::invalid_argument);
  CHECK_THROWS_AS(client->subscribe("a b", std::make_shared<Watcher>()), std::invalid_argument);
  CHECK(client->failback().registered().empty());
  RegistrySetup redis;
  redis.registry = registryAt(9);
  redis.registry.kind = RegistryKind::Redis;
  CHECK_THROWS_AS((void)makeEmbeddedEngine(env.loop, env.timer, redis), std::invalid_argument);
  client->close();
}

}  // TEST_SUITE("registry")
