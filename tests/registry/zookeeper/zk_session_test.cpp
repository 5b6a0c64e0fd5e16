// ZkSession against a real ZooKeeper (one server per test, see zk_server.h): exact paths and node
// types, parents and NODEEXISTS, one-shot watches re-armed by the caller, ephemeral nodes going
// with their session, forced and server-side expiry, server stop / restart. Every wait is on a
// condition with a deadline; every callback count is exact.
#include "zk_session.h"

#include "dubbo_url.h"
#include "zk_client.h"
#include "zk_server.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/net/event_loop.h>

#include <doctest/doctest.h>
#include <zookeeper/zookeeper.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using namespace wheelbeat::registry::zk;
using namespace wheelbeat::registry::dubbo;
using namespace wbzk;
using wheelbeat::net::EventLoop;
using Clock = std::chrono::steady_clock;

struct Env {
  Env() {
    if (std::getenv("WB_ZK_DEBUG") != nullptr) {
      wheelbeat::core::setLogLevel(wheelbeat::core::LogLevel::Debug);
    }
  }
  wbzk::ZkServer server;
  EventLoop loop{"wb-zk-test"};
  ~Env() { CHECK(loop.stop() == 0); }
};

ProviderOptions provider(std::uint16_t port) {
  ProviderOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.interface = "com.acme.Greeter";
  o.application = "greeter";
  o.version = "1.0.0";
  o.methods = {"sayHello"};
  o.pid = 1234;
  o.timestampMs = 1700000000000;
  return o;
}

const CreateOptions kEphemeral{.ephemeral = true, .createParents = true, .existingIsOk = false};

}  // namespace

TEST_SUITE("zookeeper") {

TEST_CASE("a session connects reports its id and closes") {
  Env env;
  Client c(env.loop, env.server.hosts());
  REQUIRE(c.waitState(SessionState::Connected));
  const auto s = c.states();
  REQUIRE(s.size() == 2);
  CHECK(s[0].state == SessionState::Connecting);
  CHECK(s[1].state == SessionState::Connected);
  CHECK(s[1].newSession);
  CHECK(s[1].sessionId != 0);
  CHECK(s[1].sessionId == c.id());
  CHECK(c.credentials().sessionId == c.id());
  c.close();
  CHECK(c.stateNames() ==
        std::vector{SessionState::Connecting, SessionState::Connected, SessionState::Closed});
  // After close every call fails at once with ZCLOSING.
  const ZkResult r = c.remove("/x");
  CHECK(r.code == ZCLOSING);
  CHECK(r.error == zerror(ZCLOSING));
}

TEST_CASE("the loop's stop closes a session still open") {
  wbzk::ZkServer server;
  auto loop = std::make_unique<EventLoop>("wb-zk-stop");
  std::unique_ptr<ZkSession> session;
  std::vector<SessionState> states;  // written on the loop thread, read after it stopped
  std::vector<int> codes;
  REQUIRE(loop->call([&] {
    ZkSession::Options o;
    o.hosts = server.hosts();
    o.sessionTimeout = 2000ms;
    session = std::make_unique<ZkSession>(*loop, o,
                                          [&](const StateEvent& e) { states.push_back(e.state); });
    REQUIRE(session->connect());
  }));
  REQUIRE(waitFor([&] {
    bool connected = false;
    (void)loop->call([&] { connected = session->state() == SessionState::Connected; });
    return connected;
  }));
  REQUIRE(loop->call([&] {
    session->exists("/x", {}, [&](const ZkResult& r, const auto&) { codes.push_back(r.code); });
  }));
  CHECK(loop->stop() == 0);  // every handle the session had is closed
  CHECK(codes.size() == 1);  // answered before the stop, or failed by it: exactly once
  CHECK(states.back() == SessionState::Closed);
  session.reset();  // off the loop thread, already closed: nothing to do
}

TEST_CASE("a provider node is created with its parents at Dubbo's exact path") {
  Env env;
  Client c(env.loop, env.server.hosts());
  REQUIRE(c.waitState(SessionState::Connected));
  const DubboUrl url = providerUrl(provider(20880));
  const std::string path = nodePath("", url, Category::Providers);
  REQUIRE(path == "/dubbo/com.acme.Greeter/providers/" + nodeName(url));

  const Created made = c.create(path, kEphemeral, "127.0.0.1");
  REQUIRE_MESSAGE(made.result.ok(), made.result.message);
  CHECK(made.path == path);

  for (const char* parent :
       {"/dubbo", "/dubbo/com.acme.Greeter", "/dubbo/com.acme.Greeter/providers"}) {
    CAPTURE(parent);
    const Existence e = c.exists(parent);
    REQUIRE(e.result.ok());
    REQUIRE(e.stat.has_value());
    CHECK(e.stat->ephemeralOwner == 0);  // persistent
    CHECK(e.stat->numChildren == 1);
  }
  const Existence node = c.exists(path);
  REQUIRE(node.stat.has_value());
  CHECK(node.stat->ephemeralOwner == c.id());  // ephemeral, owned by this session
  CHECK(node.stat->dataLength == 9);

  const Children kids = c.children("/dubbo/com.acme.Greeter/providers");
  REQUIRE(kids.result.ok());
  REQUIRE(kids.names == std::vector<std::string>{nodeName(url)});
  const ProviderList list = parseProviders(kids.names);
  REQUIRE(list.providers.size() == 1);
  CHECK(list.providers[0].params == url.params);
  CHECK(c.pending() == std::pair<std::size_t, std::size_t>{0, 0});
}

TEST_CASE("create reports NODEEXISTS and NONODE with the error name and the address") {
  Env env;
  Client c(env.loop, env.server.hosts());
  REQUIRE(c.waitState(SessionState::Connected));
  REQUIRE(c.create("/a/b").result.ok());
  const Created again = c.create("/a/b");
  CHECK(again.result.code == ZNODEEXISTS);
  CHECK(again.result.error == "node exists");
  CHECK(again.result.message == "create /a/b: node exists (zookeeper " + env.server.hosts() + ")");
  CHECK(again.path.empty());
  CHECK(c.create("/a/b", CreateOptions{.existingIsOk = true}).result.ok());

  const Created orphan = c.create("/x/y", CreateOptions{.createParents = false});
  CHECK(orphan.result.code == ZNONODE);
  CHECK(orphan.result.error == "no node");
  CHECK_FALSE(c.exists("/x").stat.has_value());

  CHECK(c.remove("/a/b").ok());
  const ZkResult gone = c.remove("/a/b");
  CHECK(gone.code == ZNONODE);
  CHECK(c.remove("/a").ok());
  const Existence missing = c.exists("/a");
  CHECK(missing.result.ok());  // a missing node is an answer, not an error
  CHECK_FALSE(missing.stat.has_value());
}

TEST_CASE("a child watch fires once per change and is re-armed by the caller") {
  Env env;
  Client c(env.loop, env.server.hosts());
  REQUIRE(c.waitState(SessionState::Connected));
  const std::string dir = "/dubbo/com.acme.Greeter/providers";
  REQUIRE(c.create(dir).result.ok());
  WatchLog log;
  REQUIRE(c.children(dir, log.callback()).names.empty());
  CHECK(c.pending().second == 1);

  REQUIRE(c.create(dir + "/p1", kEphemeral).result.ok());
  REQUIRE(waitFor([&] { return log.count() == 1; }));
  CHECK(log.at(0) == std::pair{WatchEvent::ChildrenChanged, dir});
  // Not re-armed: a second change fires nothing. ZooKeeper delivers a watch event before any
  // later answer, so once this read returns a fired watch would have been seen.
  REQUIRE(c.create(dir + "/p2", kEphemeral).result.ok());
  CHECK(c.children(dir).names.size() == 2);
  CHECK(log.count() == 1);
  CHECK(c.pending().second == 0);

  REQUIRE(c.children(dir, log.callback()).names.size() == 2);  // re-armed
  REQUIRE(c.remove(dir + "/p1").ok());
  REQUIRE(waitFor([&] { return log.count() == 2; }));
  CHECK(log.at(1) == std::pair{WatchEvent::ChildrenChanged, dir});
  CHECK(c.children(dir).names == std::vector<std::string>{"p2"});
  CHECK(log.count() == 2);
  CHECK(c.pending() == std::pair<std::size_t, std::size_t>{0, 0});
}

TEST_CASE("an exists watch on a missing node fires when another session creates it") {
  Env env;
  Client watcher(env.loop, env.server.hosts());
  Client writer(env.loop, env.server.hosts());
  REQUIRE(watcher.waitState(SessionState::Connected));
  REQUIRE(writer.waitState(SessionState::Connected));
  const std::string path = "/dubbo/com.acme.Greeter/providers";
  WatchLog log;
  const Existence e = watcher.exists(path, log.callback());
  REQUIRE(e.result.ok());
  CHECK_FALSE(e.stat.has_value());
  CHECK(watcher.pending().second == 1);  // armed although the node is missing

  REQUIRE(writer.create(path).result.ok());
  REQUIRE(waitFor([&] { return log.count() == 1; }));
  CHECK(log.at(0) == std::pair{WatchEvent::Created, path});
  REQUIRE(watcher.exists(path).stat.has_value());
  CHECK(log.count() == 1);
  CHECK(watcher.pending() == std::pair<std::size_t, std::size_t>{0, 0});
}

TEST_CASE("closing a session removes its ephemeral nodes and fails what is pending") {
  Env env;
  Client owner(env.loop, env.server.hosts());
  Client observer(env.loop, env.server.hosts());
  REQUIRE(owner.waitState(SessionState::Connected));
  REQUIRE(observer.waitState(SessionState::Connected));
  const std::string dir = "/dubbo/com.acme.Greeter/providers";
  REQUIRE(owner.create(dir + "/p1", kEphemeral).result.ok());
  REQUIRE(owner.create(dir + "/persistent").result.ok());
  WatchLog seen;
  REQUIRE(observer.children(dir, seen.callback()).names.size() == 2);

  // An operation and a watch still pending when the session closes: one final answer each.
  WatchLog ownerWatch;
  std::vector<int> codes;
  REQUIRE(env.loop.call([&] {
    owner.session().exists(dir + "/p1", ownerWatch.callback(),
                           [&](const ZkResult& r, const auto&) { codes.push_back(r.code); });
    owner.session().close();
  }));
  CHECK(codes == std::vector<int>{ZCLOSING});
  REQUIRE(ownerWatch.count() == 1);
  CHECK(ownerWatch.at(0).first == WatchEvent::Lost);
  CHECK(owner.stateNames().back() == SessionState::Closed);

  REQUIRE(waitFor([&] { return seen.count() == 1; }));
  CHECK(seen.at(0) == std::pair{WatchEvent::ChildrenChanged, dir});
  CHECK(observer.children(dir).names == std::vector<std::string>{"persistent"});
}

TEST_CASE("a session killed by a second handle expires and a new session opens") {
  Env env;
  EventLoop killerLoop{"wb-zk-killer"};
  {
    Client victim(env.loop, env.server.hosts());
    REQUIRE(victim.waitState(SessionState::Connected));
    const std::int64_t oldId = victim.id();
    const std::string node = "/dubbo/com.acme.Greeter/providers/p1";
    REQUIRE(victim.create(node, kEphemeral).result.ok());
    WatchLog watch;
    REQUIRE(victim.children("/dubbo/com.acme.Greeter/providers", watch.callback()).result.ok());
    const Credentials creds = victim.credentials();
    {
      // While the victim's loop hears nothing, a second handle takes the session over and closes
      // it (Curator's KillSession): the server ends the session for good.
      LoopBlock block(env.loop);
      Client killer(killerLoop, env.server.hosts(), 2000ms, creds);
      REQUIRE(killer.waitState(SessionState::Connected));
      CHECK(killer.id() == oldId);
      killer.close();
    }
    REQUIRE(victim.waitState(SessionState::Connected, 2));
    const auto s = victim.states();
    REQUIRE(s.size() == 6);
    CHECK(s[2].state == SessionState::Connecting);
    CHECK(s[3].state == SessionState::Expired);
    CHECK(s[3].sessionId == oldId);
    CHECK(s[4].state == SessionState::Connecting);
    CHECK(s[5].state == SessionState::Connected);
    CHECK(s[5].newSession);
    CHECK(s[5].sessionId != oldId);
    CHECK(s[5].sessionId == victim.id());
    // The expired session's watch was lost, its ephemeral node is gone: the owner re-creates.
    REQUIRE(watch.count() == 1);
    CHECK(watch.at(0).first == WatchEvent::Lost);
    CHECK_FALSE(victim.exists(node).stat.has_value());
    REQUIRE(victim.create(node, kEphemeral).result.ok());
    CHECK(victim.exists(node).stat->ephemeralOwner == victim.id());
    CHECK(victim.pending() == std::pair<std::size_t, std::size_t>{0, 0});
  }
  CHECK(killerLoop.stop() == 0);
}

TEST_CASE("a session the server expires is replaced by a new one") {
  Env env;
  EventLoop observerLoop{"wb-zk-observer"};
  {
    Client victim(env.loop, env.server.hosts(), wbzk::kMinSessionTimeout);
    Client observer(observerLoop, env.server.hosts());
    REQUIRE(victim.waitState(SessionState::Connected));
    REQUIRE(observer.waitState(SessionState::Connected));
    const std::int64_t oldId = victim.id();
    const std::string node = "/svc/providers/p1";
    REQUIRE(victim.create(node, kEphemeral).result.ok());
    const auto t0 = Clock::now();
    {
      // The victim falls silent; the server expires its session after the session timeout,
      // which the observer sees as the ephemeral node going away.
      LoopBlock block(env.loop);
      REQUIRE(waitFor([&] { return !observer.exists(node).stat.has_value(); }, 20s));
    }
    const auto expiredAfter =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
    MESSAGE("server-side expiry after " << expiredAfter.count() << " ms");
    CHECK(expiredAfter >= wbzk::kMinSessionTimeout - 200ms);
    REQUIRE(victim.waitState(SessionState::Connected, 2));
    const auto names = victim.stateNames();
    CHECK(names == std::vector{SessionState::Connecting, SessionState::Connected,
                               SessionState::Connecting, SessionState::Expired,
                               SessionState::Connecting, SessionState::Connected});
    CHECK(victim.states()[3].sessionId == oldId);
    CHECK(victim.id() != oldId);
  }
  CHECK(observerLoop.stop() == 0);
}

TEST_CASE("a server restart keeping its data keeps the session") {
  Env env;
  Client c(env.loop, env.server.hosts(), wbzk::kMaxSessionTimeout);
  REQUIRE(c.waitState(SessionState::Connected));
  const std::int64_t id = c.id();
  const std::string node = "/svc/providers/p1";
  REQUIRE(c.create(node, kEphemeral).result.ok());

  env.server.stop();
  REQUIRE(c.waitState(SessionState::Connecting, 2));
  // A request while no server answers fails with a connection loss.
  const ZkResult lost = c.remove("/nothing");
  CHECK(lost.code == ZCONNECTIONLOSS);
  CHECK(lost.error == "connection loss");

  REQUIRE(env.server.start());
  REQUIRE(c.waitState(SessionState::Connected, 2));
  const auto s = c.states();
  REQUIRE(s.size() == 4);
  CHECK(s[3].sessionId == id);
  CHECK_FALSE(s[3].newSession);
  const Existence e = c.exists(node);
  REQUIRE(e.stat.has_value());
  CHECK(e.stat->ephemeralOwner == id);
}

TEST_CASE("a server restart wiping its data expires the session") {
  Env env;
  Client c(env.loop, env.server.hosts());
  REQUIRE(c.waitState(SessionState::Connected));
  const std::int64_t id = c.id();
  REQUIRE(c.create("/svc/providers/p1", kEphemeral).result.ok());

  REQUIRE(env.server.restart(true));
  REQUIRE(c.waitState(SessionState::Connected, 2));
  CHECK(c.stateNames() == std::vector{SessionState::Connecting, SessionState::Connected,
                                      SessionState::Connecting, SessionState::Expired,
                                      SessionState::Connecting, SessionState::Connected});
  CHECK(c.states()[3].sessionId == id);
  CHECK(c.states()[5].newSession);
  CHECK(c.id() != id);
  CHECK_FALSE(c.exists("/svc").stat.has_value());  // the data went with the restart
}

}  // TEST_SUITE("zookeeper")
