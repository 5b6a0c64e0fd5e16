// The consumer's Directory (directory.h) end to end on loopback: an in-process RegistryServer,
// providers as real TcpServers registered by their own Registry, the Directory on a consumer's
// Registry; the lists it follows, pick(), the drops it reports, the heartbeat it takes from a
// provider's url, accept(). The empty-list protection and close(): directory_protection_test.cpp.
//
// Counts are exact; waits are bounded (waitFor), and "nothing happens" is checked over a window
// long enough for the fast reconnect settings (50 .. 200 ms backoff) to try several times.
#include "directory_rig.h"
#include "dubbo_url.h"

#include <wheelbeat/registry/directory.h>

#include <memory>
#include <string>
#include <vector>

using namespace wbdir;

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

TEST_CASE("directory: heartbeats shorter than 2 ticks of its wheel fail at construction") {
  Env env;  // a 10 ms tick
  RegistryServer registry(env.loop, env.timer, serverOptions());
  auto consumerReg = embedded(env, registry.start());
  const auto failure = [&](const DirectoryOptions& options) -> std::string {
    try {
      Directory directory(env.loop, env.timer, *consumerReg, "org.example.Echo", options);
      return "constructed";
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  };
  DirectoryOptions options = fastDirectory();
  options.minHeartbeat = 15ms;
  CHECK(failure(options) ==
        "DirectoryOptions.minHeartbeat = 0.015s (expected: at least 2 wheel ticks = 0.02s; the "
        "wheel's tick is 0.01s)");
  options = fastDirectory();
  options.client.heartbeat.interval = 15ms;
  CHECK(failure(options) ==
        "DirectoryOptions.client.heartbeat.interval = 15ms (expected: at least 2 wheel ticks = "
        "20ms; the wheel's tick is 10ms)");
  options = fastDirectory();
  options.minHeartbeat = 20ms;
  CHECK(failure(options) == "constructed");
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
}  // TEST_SUITE("registry")
