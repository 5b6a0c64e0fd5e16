// The consumer's Directory (directory.h) end to end on loopback: an in-process RegistryServer,
// providers as real TcpServers registered by their own Registry, the Directory on a consumer's
// Registry. One case (the registry link down while an empty list arrives) needs a notification
// the embedded registry never sends while it is unreachable: it runs on a scripted Engine the
// test drives (up, down, a list), everything else on the embedded registry.
//
// Counts are exact; waits are bounded (waitFor), and "nothing happens" is checked over a window
// long enough for the fast reconnect settings (50 .. 200 ms backoff) to try several times.
#include "../../net/support.h"
#include "dubbo_url.h"

#include <wheelbeat/registry/directory.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

using namespace wbnet;
using namespace wheelbeat::registry;
using TaskResult = wheelbeat::tasks::CallResult;
using wheelbeat::registry::NotifyListener;
using wheelbeat::tasks::Completion;
using wheelbeat::tasks::FailbackOptions;

namespace {

const std::string kService = "org.example.Echo";
constexpr auto kQuiet = 2s;  // "no connect attempt": many backoff periods (<= 200 ms each)

RegistrySetup setupAt(std::uint16_t port) {
  RegistrySetup setup;
  setup.registry.address = Endpoint{"127.0.0.1", port};
  setup.client = clientOptions(port);
  setup.failback = fastFailback();
  setup.requestTimeout = 500ms;
  return setup;
}

std::unique_ptr<Registry> embedded(Env& env, std::uint16_t port) {
  auto r = makeRegistry(env.loop, env.timer, setupAt(port));
  r->start();
  return r;
}

std::string providerUrl(std::uint16_t port, const std::string& params = "version=1.0.0") {
  return fmt::format("dubbo://127.0.0.1:{}/{}?{}", port, kService, params);
}

// Fast provider clients (support.h: heartbeat 100 ms, reconnect 50 .. 200 ms).
DirectoryOptions fastDirectory() {
  DirectoryOptions o;
  o.client = clientOptions(1);
  o.minHeartbeat = 50ms;
  return o;
}

// Everything the directory reported, thread-safe.
struct Seen {
  std::mutex mutex;
  std::vector<std::vector<std::string>> lists;
  std::vector<std::string> connected;
  std::vector<std::string> closed;
  std::vector<std::size_t> held;
  std::vector<ns> listAt;  // the wheel's clock at each onList

  DirectoryEvents events(HashedWheelTimer& timer) {
    return DirectoryEvents{
        .onList =
            [this, &timer](const std::vector<std::string>& urls) {
              std::lock_guard lock(mutex);
              lists.push_back(urls);
              listAt.push_back(timer.now());
            },
        .onConnected =
            [this](const std::string& url, Channel&) {
              std::lock_guard lock(mutex);
              connected.push_back(url);
            },
        .onClosed =
            [this](const std::string& url, const CloseReason&) {
              std::lock_guard lock(mutex);
              closed.push_back(url);
            },
        .onEmptyHeld =
            [this](std::size_t kept) {
              std::lock_guard lock(mutex);
              held.push_back(kept);
            },
        .onDisconnected = {},
    };
  }
  std::size_t connects() {
    std::lock_guard lock(mutex);
    return connected.size();
  }
  std::vector<std::string> closes() {
    std::lock_guard lock(mutex);
    return closed;
  }
  std::vector<std::size_t> holds() {
    std::lock_guard lock(mutex);
    return held;
  }
  std::optional<std::vector<std::string>> lastList() {
    std::lock_guard lock(mutex);
    if (lists.empty()) return std::nullopt;
    return lists.back();
  }
};

std::size_t connectedCount(const Directory& d) {
  std::size_t n = 0;
  for (const auto& p : d.providers()) n += p.state == ClientState::Connected ? 1 : 0;
  return n;
}

std::optional<Directory::Provider> providerOf(const Directory& d, const std::string& url) {
  for (const auto& p : d.providers()) {
    if (p.url == url) return p;
  }
  return std::nullopt;
}

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

TEST_CASE("directory: a provider that appears is connected at once") {
  Env env;
  RegistryServer registry(env.loop, env.timer, serverOptions());
  const auto port = registry.start();
  TcpServer provider(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const auto providerPort = provider.listen();
  auto providerReg = embedded(env, port);
  auto consumerReg = embedded(env, port);

  Seen seen;
  Directory directory(env.loop, env.timer, *consumerReg, kService, fastDirectory(), {},
                      seen.events(env.timer));
  CHECK(directory.pick() == nullptr);
  directory.start();
  CHECK(directory.providers().empty());

  const std::string url = providerUrl(providerPort);
  providerReg->registerUrl(url);
  REQUIRE(waitFor([&] { return seen.connects() == 1; }, 5s));
  CHECK(seen.lastList() == std::vector<std::string>{url});
  const auto providers = directory.providers();
  REQUIRE(providers.size() == 1);
  CHECK(providers[0].url == url);
  CHECK(providers[0].endpoint == Endpoint{"127.0.0.1", providerPort});
  CHECK(providers[0].state == ClientState::Connected);
  CHECK(waitFor([&] { return provider.accepted() == 1; }, 2s));
  auto client = directory.pick();
  REQUIRE(client != nullptr);
  CHECK(client->channel().remote().port == providerPort);
  CHECK(client->connectAttempts() == 1);
  const auto stats = directory.stats();
  CHECK(stats.clientsOpened == 1);
  CHECK(stats.clientsClosed == 0);
  CHECK(stats.listsApplied == 1);
  CHECK(stats.rejected == 0);

  directory.close();
  provider.stop();
  providerReg->close();
  consumerReg->close();
  registry.stop();
}

TEST_CASE(
    "directory: a provider that unregisters is closed in that notification and never "
    "dialled again") {
  Env env;
  RegistryServer registry(env.loop, env.timer, serverOptions());
  const auto port = registry.start();
  TcpServer provider(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const auto providerPort = provider.listen();
  auto providerReg = embedded(env, port);
  auto consumerReg = embedded(env, port);

  Seen seen;
  DirectoryOptions options = fastDirectory();
  options.protectionWindow = 0s;  // the registry is healthy: an empty list is believed at once
  Directory directory(env.loop, env.timer, *consumerReg, kService, options, {},
                      seen.events(env.timer));
  directory.start();
  const std::string url = providerUrl(providerPort);
  providerReg->registerUrl(url);
  REQUIRE(waitFor([&] { return seen.connects() == 1; }, 5s));
  auto client = directory.pick();
  REQUIRE(client != nullptr);

  // The provider's server goes away first: its client reconnects, refused, again and again —
  // what a consumer does for ever in Dubbo's old complaint, had nobody told it to stop.
  provider.stop();
  REQUIRE(waitFor([&] { return client->connectAttempts() >= 3; }, 5s));

  providerReg->unregisterUrl(url);
  REQUIRE(waitFor([&] { return seen.closes().size() == 1; }, 5s));
  CHECK(seen.closes() == std::vector<std::string>{url});
  CHECK(seen.lastList() == std::vector<std::string>{});
  CHECK(client->state() == ClientState::Closed);
  CHECK(directory.providers().empty());
  CHECK(directory.pick() == nullptr);
  const auto attempts = client->connectAttempts();
  CHECK_FALSE(waitFor([&] { return client->connectAttempts() != attempts; }, kQuiet));
  CHECK(client->connectAttempts() == attempts);
  const auto stats = directory.stats();
  CHECK(stats.clientsOpened == 1);
  CHECK(stats.clientsClosed == 1);
  CHECK(stats.emptyListsHeld == 0);

  directory.close();
  CHECK(seen.closes().size() == 1);  // closed once: close() finds nothing left
  providerReg->close();
  consumerReg->close();
  registry.stop();
}

TEST_CASE("directory: pick() goes round robin over the connected providers") {
  Env env;
  RegistryServer registry(env.loop, env.timer, serverOptions());
  const auto port = registry.start();
  std::vector<std::unique_ptr<TcpServer>> servers;
  std::vector<std::uint16_t> ports;
  for (int i = 0; i < 3; ++i) {
    servers.push_back(
        std::make_unique<TcpServer>(env.loop, env.timer, serverOptions(), ChannelHandler{}));
    ports.push_back(servers.back()->listen());
  }
  auto providerReg = embedded(env, port);
  auto consumerReg = embedded(env, port);
  Seen seen;
  Directory directory(env.loop, env.timer, *consumerReg, kService, fastDirectory(), {},
                      seen.events(env.timer));
  directory.start();
  for (const auto p : ports) providerReg->registerUrl(providerUrl(p));
  REQUIRE(waitFor([&] { return connectedCount(directory) == 3; }, 5s));

  // The providers in url order (the directory's order).
  std::vector<std::uint16_t> order;
  for (const auto& p : directory.providers()) order.push_back(p.endpoint.port);
  REQUIRE(order.size() == 3);
  auto picks = [&](int n) {
    std::vector<std::uint16_t> out;
    for (int i = 0; i < n; ++i) {
      auto c = directory.pick();
      out.push_back(c ? c->channel().remote().port : std::uint16_t{0});
    }
    return out;
  };
  CHECK(picks(6) ==
        std::vector<std::uint16_t>{order[0], order[1], order[2], order[0], order[1], order[2]});

  // The middle one's server stops: its client is not Connected, the turn skips it.
  for (auto& s : servers) {
    if (s->port() == order[1]) s->stop();
  }
  const std::string middle = providerUrl(order[1]);
  REQUIRE(waitFor(
      [&] {
        const auto p = providerOf(directory, middle);
        return p && p->state != ClientState::Connected;
      },
      5s));
  CHECK(picks(4) == std::vector<std::uint16_t>{order[0], order[2], order[0], order[2]});
  CHECK(directory.providers().size() == 3);  // still listed: only the registry removes it

  directory.close();
  for (auto& s : servers) s->stop();
  providerReg->close();
  consumerReg->close();
  registry.stop();
}

TEST_CASE(
    "directory: every dropped connection is reported with its url and client(url) finds its "
    "client") {
  Env env;
  RegistryServer registry(env.loop, env.timer, serverOptions());
  const auto port = registry.start();
  // `stays` serves to the end; `goes` stops halfway.
  TcpServer stays(env.loop, env.timer, serverOptions(), ChannelHandler{});
  auto goes = std::make_unique<TcpServer>(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const std::string staysUrl = providerUrl(stays.listen());
  const std::string goesUrl = providerUrl(goes->listen());
  auto providerReg = embedded(env, port);
  auto consumerReg = embedded(env, port);

  std::mutex mutex;
  std::vector<std::pair<std::string, CloseKind>> drops;
  DirectoryEvents events;
  events.onDisconnected = [&](const std::string& url, Channel&, const CloseReason& why) {
    std::lock_guard lock(mutex);
    drops.emplace_back(url, why.kind);
  };
  auto dropsOf = [&](const std::string& url) {
    std::lock_guard lock(mutex);
    std::vector<CloseKind> kinds;
    for (const auto& [u, kind] : drops) {
      if (u == url) kinds.push_back(kind);
    }
    return kinds;
  };
  DirectoryOptions options = fastDirectory();
  options.client.taskMetrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  Directory directory(env.loop, env.timer, *consumerReg, kService, options, {}, events);
  directory.start();
  CHECK(directory.client(staysUrl) == nullptr);  // not followed yet
  providerReg->registerUrl(staysUrl);
  providerReg->registerUrl(goesUrl);
  REQUIRE(waitFor([&] { return connectedCount(directory) == 2; }, 5s));
  const auto staysClient = directory.client(staysUrl);
  const auto goesClient = directory.client(goesUrl);
  REQUIRE(staysClient != nullptr);
  REQUIRE(goesClient != nullptr);
  CHECK(staysClient != goesClient);
  CHECK(staysClient->state() == ClientState::Connected);
  CHECK(directory.client(providerUrl(1)) == nullptr);
  // The metrics given in the options observe the providers' clients: heartbeats (every 100 ms).
  CHECK(waitFor([&] { return options.client.taskMetrics->snapshot().heartbeatsSent >= 2; }, 5s));

  // One provider's server goes away: its connection drop is reported with its url (not an
  // owner's close), its client reconnects (counted by the same metrics) and stays its client.
  goes->stop();
  REQUIRE(waitFor([&] { return !dropsOf(goesUrl).empty(); }, 5s));
  CHECK(dropsOf(goesUrl).front() != CloseKind::ClosedByOwner);
  CHECK(waitFor([&] { return options.client.taskMetrics->snapshot().reconnectsStarted >= 1; }, 5s));
  CHECK(directory.client(goesUrl) == goesClient);
  CHECK(goesClient->state() != ClientState::Closed);
  CHECK(dropsOf(staysUrl).empty());

  // close(): the connected provider's last connection is reported too, once, as ClosedByOwner;
  // then client(url) is null.
  directory.close();
  CHECK(directory.client(staysUrl) == nullptr);
  CHECK(staysClient->state() == ClientState::Closed);
  CHECK(goesClient->state() == ClientState::Closed);
  CHECK(dropsOf(staysUrl) == std::vector<CloseKind>{CloseKind::ClosedByOwner});
  stays.stop();
  providerReg->close();
  consumerReg->close();
  registry.stop();
}

TEST_CASE("directory: a provider's heartbeat parameter sets its client's interval within bounds") {
  Env env;
  RegistryServer registry(env.loop, env.timer, serverOptions());
  const auto port = registry.start();
  TcpServer provider(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const auto pp = provider.listen();
  auto providerReg = embedded(env, port);
  auto consumerReg = embedded(env, port);
  DirectoryOptions options = fastDirectory();  // configured interval 100 ms
  options.minHeartbeat = 200ms;
  options.maxHeartbeat = 10s;
  Directory directory(env.loop, env.timer, *consumerReg, kService, options);
  directory.start();
  // Four urls to the same server, told apart by their parameters.
  const std::string advertised = providerUrl(pp, "heartbeat=2000&version=1");
  const std::string tooShort = providerUrl(pp, "heartbeat=10&version=2");
  const std::string tooLong = providerUrl(pp, "heartbeat=600000&version=3");
  const std::string none = providerUrl(pp, "version=4");
  const std::string garbage = providerUrl(pp, "heartbeat=soon&version=5");
  for (const auto& u : {advertised, tooShort, tooLong, none, garbage}) providerReg->registerUrl(u);
  REQUIRE(waitFor([&] { return connectedCount(directory) == 5; }, 5s));
  CHECK(providerOf(directory, advertised)->heartbeat == 2s);
  CHECK(providerOf(directory, tooShort)->heartbeat == 200ms);  // clamped up to minHeartbeat
  CHECK(providerOf(directory, tooLong)->heartbeat == 10s);     // clamped down to maxHeartbeat
  CHECK(providerOf(directory, none)->heartbeat == 100ms);      // the configured interval
  CHECK(providerOf(directory, garbage)->heartbeat == 100ms);
  CHECK(directory.stats().clientsOpened == 5);

  directory.close();
  provider.stop();
  providerReg->close();
  consumerReg->close();
  registry.stop();
}

TEST_CASE("directory: accept() keeps only matching providers") {
  Env env;
  RegistryServer registry(env.loop, env.timer, serverOptions());
  const auto port = registry.start();
  TcpServer v1(env.loop, env.timer, serverOptions(), ChannelHandler{});
  TcpServer v2(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const std::string url1 = providerUrl(v1.listen(), "version=1.0.0");
  const std::string url2 = providerUrl(v2.listen(), "version=2.0.0");
  auto providerReg = embedded(env, port);
  auto consumerReg = embedded(env, port);
  providerReg->registerUrl(url1);
  providerReg->registerUrl(url2);
  REQUIRE(waitFor([&] { return registry.providers(kService).size() == 2; }, 5s));

  dubbo::ConsumerOptions c;
  c.host = "127.0.0.1";
  c.interface = kService;
  c.version = "1.0.0";
  const dubbo::DubboUrl consumer = dubbo::consumerUrl(c);
  DirectoryOptions options = fastDirectory();
  options.accept = [consumer](std::string_view url) {
    const auto parsed = dubbo::parseUrl(url);
    return parsed.ok && dubbo::isMatch(consumer, parsed.url);
  };
  Seen seen;
  Directory directory(env.loop, env.timer, *consumerReg, kService, options, {},
                      seen.events(env.timer));
  directory.start();
  REQUIRE(waitFor([&] { return seen.connects() == 1; }, 5s));
  CHECK(seen.lastList() == std::vector<std::string>{url1});
  REQUIRE(directory.providers().size() == 1);
  CHECK(directory.providers()[0].url == url1);
  CHECK_FALSE(waitFor([&] { return v2.accepted() != 0; }, 500ms));
  const auto stats = directory.stats();
  CHECK(stats.notifications == 1);
  CHECK(stats.rejected == 1);
  CHECK(stats.clientsOpened == 1);

  directory.close();
  v1.stop();
  v2.stop();
  providerReg->close();
  consumerReg->close();
  registry.stop();
}

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
