// The consumer's Directory (directory.h), its empty-list protection and close(): an empty list
// right after the registry came back, or while its link is down, is held until the registry is
// trusted again (a scripted Engine plays the link down: the embedded registry never sends a list
// while it is unreachable); without protection it is applied at once; close() closes every client
// before it returns. Counts are exact; waits are bounded (waitFor).
#include "directory_rig.h"

#include <wheelbeat/registry/directory.h>
#include <wheelbeat/registry/engine.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace wbdir;
using TaskResult = wheelbeat::tasks::CallResult;
using wheelbeat::registry::NotifyListener;
using wheelbeat::tasks::Completion;

namespace {

// An Engine the test scripts: connected or not as told, every call succeeds at once, and a
// subscriber hears exactly the lists publish() sends (on the loop thread, as engines do).
class ScriptedEngine final : public Engine {
public:
  explicit ScriptedEngine(EventLoop& loop) : loop_(loop) {}

  void start(std::shared_ptr<EngineEvents> events) override {
    std::lock_guard lock(mutex_);
    events_ = std::move(events);
    connected_ = true;
    events_->connected();
  }
  void close() override {
    std::lock_guard lock(mutex_);
    events_.reset();
    listeners_.clear();
  }
  bool isConnected() const noexcept override {
    std::lock_guard lock(mutex_);
    return connected_;
  }
  void doRegister(const std::string&, Completion done) override { done(TaskResult::success()); }
  void doUnregister(const std::string&, Completion done) override { done(TaskResult::success()); }
  void doSubscribe(const std::string&, std::shared_ptr<NotifyListener> listener,
                   Completion done) override {
    {
      // recover() after up() subscribes again: one entry per listener, as a real engine keeps.
      std::lock_guard lock(mutex_);
      if (std::find(listeners_.begin(), listeners_.end(), listener) == listeners_.end()) {
        listeners_.push_back(std::move(listener));
      }
    }
    done(TaskResult::success());
  }
  void doUnsubscribe(const std::string&, std::shared_ptr<NotifyListener> listener,
                     Completion done) override {
    {
      std::lock_guard lock(mutex_);
      std::erase(listeners_, listener);
    }
    done(TaskResult::success());
  }

  void up() {
    std::lock_guard lock(mutex_);
    connected_ = true;
    if (events_) events_->connected();
  }
  void down() {
    std::lock_guard lock(mutex_);
    connected_ = false;
    if (events_) events_->disconnected();
  }
  // Delivers `urls` to every subscriber on the loop thread; returns once they have it.
  void publish(const std::vector<std::string>& urls) {
    std::vector<std::shared_ptr<NotifyListener>> listeners;
    {
      std::lock_guard lock(mutex_);
      listeners = listeners_;
    }
    REQUIRE(loop_.call([&] {
      for (auto& l : listeners) l->notify(kService, urls);
    }));
  }

private:
  EventLoop& loop_;
  mutable std::mutex mutex_;
  std::shared_ptr<EngineEvents> events_;
  std::vector<std::shared_ptr<NotifyListener>> listeners_;
  bool connected_ = false;
};

}  // namespace

TEST_SUITE("registry") {

TEST_CASE("directory: an empty list right after the registry came back is held and then applied") {
  Env env;
  std::optional<RegistryServer> registry;
  registry.emplace(env.loop, env.timer, serverOptions());
  const auto port = registry->start();
  TcpServer provider(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const std::string url = providerUrl(provider.listen());
  auto providerReg = embedded(env, port);
  auto consumerReg = embedded(env, port);
  Seen seen;
  DirectoryOptions options = fastDirectory();
  options.protectionWindow = 1500ms;
  Directory directory(env.loop, env.timer, *consumerReg, kService, options, {},
                      seen.events(env.timer));
  directory.start();
  providerReg->registerUrl(url);
  REQUIRE(waitFor([&] { return seen.connects() == 1; }, 5s));

  // The registry restarts empty, and this provider never registers again (its Registry is
  // closed; its server keeps serving): the consumer's first list from the new registry is empty.
  registry->stop();
  registry.reset();
  REQUIRE(waitFor([&] { return !consumerReg->isConnected(); }, 5s));
  providerReg->close();
  registry.emplace(env.loop, env.timer, serverOptions(port));
  REQUIRE(registry->start() == port);

  REQUIRE(waitFor([&] { return seen.holds().size() == 1; }, 5s));
  CHECK(seen.holds() == std::vector<std::size_t>{1});
  const auto since = consumerReg->healthySince();
  REQUIRE(since.has_value());
  CHECK(directory.stats().emptyListsHeld == 1);
  CHECK(seen.closes().empty());
  REQUIRE(directory.providers().size() == 1);
  CHECK(directory.providers()[0].state == ClientState::Connected);
  CHECK(directory.pick() != nullptr);

  // Past the window (rechecked every second) the list is believed.
  REQUIRE(waitFor([&] { return seen.closes().size() == 1; }, 5s));
  CHECK(seen.lastList() == std::vector<std::string>{});
  {
    std::lock_guard lock(seen.mutex);
    CHECK(seen.listAt.back() - *since >= options.protectionWindow);
  }
  CHECK(directory.providers().empty());
  const auto stats = directory.stats();
  CHECK(stats.emptyListsHeld == 1);  // one list held, however many times it was rechecked
  CHECK(stats.clientsClosed == 1);
  CHECK(seen.holds().size() == 1);
  CHECK(waitFor([&] { return provider.connections() == 0; }, 2s));

  directory.close();
  provider.stop();
  consumerReg->close();
  registry->stop();
}

TEST_CASE("directory: an empty list while the registry link is down is held until it is healthy") {
  Env env;
  TcpServer provider(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const std::string url = providerUrl(provider.listen());
  auto owned = std::make_unique<ScriptedEngine>(env.loop);
  ScriptedEngine& engine = *owned;
  RegistrySetup setup = setupAt(1);
  Registry registry(env.timer, std::move(owned), setup);
  registry.start();
  Seen seen;
  DirectoryOptions options = fastDirectory();
  options.protectionWindow = 500ms;
  Directory directory(env.loop, env.timer, registry, kService, options, {}, seen.events(env.timer));
  directory.start();
  engine.publish({url});
  REQUIRE(waitFor([&] { return seen.connects() == 1; }, 5s));

  engine.down();
  CHECK_FALSE(registry.healthySince().has_value());
  engine.publish({});
  CHECK(seen.holds() == std::vector<std::size_t>{1});
  // Down for longer than the window and two rechecks: still held, counted once.
  CHECK_FALSE(waitFor([&] { return !seen.closes().empty(); }, 2500ms));
  CHECK(directory.stats().emptyListsHeld == 1);
  CHECK(seen.holds().size() == 1);
  CHECK(connectedCount(directory) == 1);

  engine.up();
  const auto since = registry.healthySince();
  REQUIRE(since.has_value());
  REQUIRE(waitFor([&] { return seen.closes().size() == 1; }, 5s));
  {
    std::lock_guard lock(seen.mutex);
    CHECK(seen.listAt.back() - *since >= options.protectionWindow);
  }
  CHECK(directory.providers().empty());
  CHECK(directory.stats().emptyListsHeld == 1);

  // A new provider list while healthy and past the window: applied as it comes.
  engine.publish({url});
  REQUIRE(waitFor([&] { return seen.connects() == 2; }, 5s));
  engine.publish({});
  CHECK(waitFor([&] { return seen.closes().size() == 2; }, 5s));
  CHECK(directory.stats().emptyListsHeld == 1);

  directory.close();
  registry.close();
  provider.stop();
}

TEST_CASE("directory: without empty protection an empty list is applied at once") {
  Env env;
  TcpServer provider(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const std::string url = providerUrl(provider.listen());
  auto owned = std::make_unique<ScriptedEngine>(env.loop);
  ScriptedEngine& engine = *owned;
  Registry registry(env.timer, std::move(owned), setupAt(1));
  registry.start();
  Seen seen;
  DirectoryOptions options = fastDirectory();
  options.emptyProtection = false;
  Directory directory(env.loop, env.timer, registry, kService, options, {}, seen.events(env.timer));
  directory.start();
  engine.publish({url});
  REQUIRE(waitFor([&] { return seen.connects() == 1; }, 5s));
  auto client = directory.pick();
  REQUIRE(client != nullptr);

  engine.down();
  engine.publish({});  // the link is down, and just the moment protection exists for
  CHECK(directory.providers().empty());  // applied within the notification
  CHECK(waitFor([&] { return seen.closes().size() == 1; }, 5s));
  CHECK(client->state() == ClientState::Closed);
  CHECK(seen.holds().empty());
  CHECK(directory.stats().emptyListsHeld == 0);
  CHECK(directory.stats().clientsClosed == 1);

  directory.close();
  registry.close();
  provider.stop();
}

TEST_CASE("directory: close() closes every client before it returns") {
  Env env;
  RegistryServer registry(env.loop, env.timer, serverOptions());
  const auto port = registry.start();
  TcpServer a(env.loop, env.timer, serverOptions(), ChannelHandler{});
  TcpServer b(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const std::string urlA = providerUrl(a.listen());
  const std::string urlB = providerUrl(b.listen());
  auto providerReg = embedded(env, port);
  auto consumerReg = embedded(env, port);
  Seen seen;
  Directory directory(env.loop, env.timer, *consumerReg, kService, fastDirectory(), {},
                      seen.events(env.timer));
  directory.start();
  providerReg->registerUrl(urlA);
  providerReg->registerUrl(urlB);
  REQUIRE(waitFor([&] { return connectedCount(directory) == 2; }, 5s));
  std::vector<std::shared_ptr<TcpClient>> clients{directory.pick(), directory.pick()};
  REQUIRE(clients[0] != nullptr);
  REQUIRE(clients[1] != nullptr);
  REQUIRE(clients[0] != clients[1]);

  directory.close();
  // Off the loop thread close() waited: every client closed, every event delivered.
  CHECK(clients[0]->state() == ClientState::Closed);
  CHECK(clients[1]->state() == ClientState::Closed);
  auto closes = seen.closes();
  std::sort(closes.begin(), closes.end());
  auto expected = std::vector<std::string>{urlA, urlB};
  std::sort(expected.begin(), expected.end());
  CHECK(closes == expected);
  CHECK(directory.providers().empty());
  CHECK(directory.pick() == nullptr);
  CHECK(directory.stats().clientsClosed == 2);
  CHECK(waitFor([&] { return a.connections() == 0 && b.connections() == 0; }, 2s));

  // Nothing follows: a provider that registers now is not dialled, no event is reported.
  TcpServer c(env.loop, env.timer, serverOptions(), ChannelHandler{});
  providerReg->registerUrl(providerUrl(c.listen()));
  CHECK_FALSE(waitFor([&] { return c.accepted() != 0 || seen.connects() != 2; }, 1s));
  CHECK(seen.closes().size() == 2);
  directory.close();  // idempotent

  a.stop();
  b.stop();
  c.stop();
  providerReg->close();
  consumerReg->close();
  registry.stop();
}

}  // TEST_SUITE("registry")
