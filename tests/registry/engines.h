// The registry engines' servers behind one face (Fixture), so every contract test runs against
// each:
//   embedded  a RegistryServer in-process (down = destroyed, up = recreated on the same port)
//   redis     a redis-server child (down = SIGKILL, up = restarted on the same port, empty)
//   zookeeper a ZooKeeper child (down = SIGTERM, up = restarted on the same port, wiped: every
//             session is gone and must be replaced)
// plus the helpers the contract and redis suites share (a recording NotifyListener, fast
// options: session 1 s, heartbeat 100 ms, retries every 50 ms).
#pragma once

#include "../net/support.h"
#include "dubbo_url.h"
#include "redis/redis_server.h"
#include "watcher.h"
#include "zookeeper/zk_client.h"
#include "zookeeper/zk_server.h"

#include <wheelbeat/registry/redis_engine.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>
#include <wheelbeat/registry/zookeeper_engine.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

namespace wbcontract {

using namespace wbnet;
using namespace wheelbeat::registry;
using TaskResult = wheelbeat::tasks::CallResult;
using wheelbeat::registry::NotifyListener;

enum class EngineKind { Embedded, Redis, ZooKeeper };

inline const std::string kUrl = "wheelbeat://127.0.0.1:20880/greeter";
inline const std::string kUrl2 = "wheelbeat://127.0.0.1:20881/greeter";

class Fixture {
public:
  virtual ~Fixture() = default;
  [[nodiscard]] virtual EngineKind kind() const = 0;
  [[nodiscard]] virtual std::uint16_t port() const = 0;
  virtual void down() = 0;
  virtual void up() = 0;
  // The engine's own record of the providers of `service`, sorted.
  [[nodiscard]] virtual std::vector<std::string> stored(const std::string& service) = 0;
  // A provider whose client dies without unregistering is listed at least `minimumLife` and at
  // most `removalBound` after its death (the upper bound with a margin for loaded test machines).
  [[nodiscard]] virtual ns minimumLife() const = 0;
  [[nodiscard]] virtual ns removalBound() const = 0;
  // How soon start() returns when the engine's server is down: at once where a refused connect
  // is visible (embedded, Redis); ZooKeeper's client retries quietly, so after the connect timeout.
  [[nodiscard]] virtual ns unreachableSeenWithin() const { return 500ms; }

  // Session 1 s, fast heartbeat and reconnect (support.h), retries every 50 ms, check = false.
  [[nodiscard]] RegistrySetup setup() const {
    RegistrySetup s;
    s.registry.kind = kind() == EngineKind::Redis       ? RegistryKind::Redis
                      : kind() == EngineKind::ZooKeeper ? RegistryKind::ZooKeeper
                                                        : RegistryKind::Embedded;
    s.registry.address = Endpoint{"127.0.0.1", port()};
    s.registry.session = 1s;
    s.client = clientOptions(port());
    s.failback = fastFailback();
    s.requestTimeout = 500ms;
    return s;
  }
};

class EmbeddedFixture final : public Fixture {
public:
  explicit EmbeddedFixture(Env& env) : env_(env) { up(); }
  EngineKind kind() const override { return EngineKind::Embedded; }
  std::uint16_t port() const override { return port_; }
  void down() override {
    if (server_) server_->stop();
    server_.reset();
  }
  void up() override {
    server_.emplace(env_.loop, env_.timer, serverOptions(port_));
    port_ = server_->start();
    REQUIRE(port_ != 0);
  }
  std::vector<std::string> stored(const std::string& service) override {
    if (!server_) return {};
    auto v = server_->providers(service);
    std::sort(v.begin(), v.end());
    return v;
  }
  // The registry drops a session when its connection closes: at once, no lower bound.
  ns minimumLife() const override { return 0ns; }
  ns removalBound() const override { return 2s; }

private:
  Env& env_;
  std::uint16_t port_ = 0;
  std::optional<RegistryServer> server_;
};

class RedisFixture final : public Fixture {
public:
  EngineKind kind() const override { return EngineKind::Redis; }
  std::uint16_t port() const override { return server_.port(); }
  void down() override { server_.kill(); }
  void up() override { REQUIRE(server_.start()); }
  std::vector<std::string> stored(const std::string& service) override {
    auto r = server_.command({"HKEYS", RedisEngine::providersKey("dubbo", service)});
    std::sort(r.items.begin(), r.items.end());
    return r.items;
  }
  // Session 1 s (redis_engine.h): listed >= session / 2 (a 100 ms margin for the wheel tick
  // and the loop), gone by 1.5 × session (+ 1 s of margin).
  ns minimumLife() const override { return 400ms; }
  ns removalBound() const override { return 2500ms; }
  wbredis::RedisServer& server() { return server_; }

private:
  wbredis::RedisServer server_;
};

// The providers of a service as ZooKeeper holds them: a plain session of its own (a loop of its
// own too), reading /dubbo/{service}/providers and decoding each child's name.
class ZooKeeperFixture final : public Fixture {
public:
  EngineKind kind() const override { return EngineKind::ZooKeeper; }
  std::uint16_t port() const override { return server_.port(); }
  void down() override {
    inspector_.reset();
    server_.stop();
  }
  void up() override { REQUIRE(server_.restart(/*wipeData=*/true)); }
  std::vector<std::string> stored(const std::string& service) override {
    const auto listed = inspector().children("/dubbo/" + service + "/providers");
    std::vector<std::string> out;
    for (const auto& name : listed.names) {
      if (const auto parsed = wheelbeat::registry::dubbo::parseNodeName(name); parsed.ok) {
        out.push_back(parsed.url.toFullString());
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // A plain client of the server (a session of its own, on a loop of its own).
  wbzk::Client& inspector() {
    if (!inspector_) {
      inspector_ = std::make_unique<wbzk::Client>(loop_, server_.hosts());
      REQUIRE(inspector_->waitState(wbzk::SessionState::Connected));
    }
    return *inspector_;
  }
  // A registry closed by its owner closes its session: ZooKeeper deletes its nodes at once.
  ns minimumLife() const override { return 0ns; }
  ns removalBound() const override { return 2s; }
  ns unreachableSeenWithin() const override { return 1500ms; }  // connect timeout 1 s
  wbzk::ZkServer& server() { return server_; }

private:
  wbzk::ZkServer server_;
  EventLoop loop_{"wb-zk-fixture"};
  std::unique_ptr<wbzk::Client> inspector_;  // before the loop goes
};

inline std::unique_ptr<Fixture> makeFixture(EngineKind kind, Env& env) {
  if (kind == EngineKind::Embedded) return std::make_unique<EmbeddedFixture>(env);
  if (kind == EngineKind::ZooKeeper) return std::make_unique<ZooKeeperFixture>();
  return std::make_unique<RedisFixture>();
}

}  // namespace wbcontract
