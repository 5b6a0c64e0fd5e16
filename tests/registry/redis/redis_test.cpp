// What only the Redis engine has: the data model on the server (hash, wall-clock expiry), renewal
// across sessions, half-open detection of a frozen server, error replies, construction rules.
#include "engines.h"  // tests/registry/

#include <charconv>

using namespace wbcontract;

namespace {

std::int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t expiryOf(RedisFixture& engine, const std::string& url) {
  const auto r = engine.server().command({"HGET", "/dubbo/greeter/providers", url});
  std::int64_t v = -1;
  if (r.type == '$') std::from_chars(r.text.data(), r.text.data() + r.text.size(), v);
  return v;
}

std::unique_ptr<Registry> started(Env& env, RegistrySetup setup) {
  auto r = makeRegistry(env.loop, env.timer, std::move(setup));
  r->start();
  return r;
}

RedisEngine& redisOf(Registry& r) { return dynamic_cast<RedisEngine&>(r.engine()); }

}  // namespace

TEST_SUITE("redis") {

TEST_CASE("redis registry: a registration is a hash field whose value is now + session in ms") {
  Env env;
  RedisFixture engine;
  auto provider = started(env, engine.setup());
  const auto before = wallMs();
  std::atomic<bool> done{false};
  provider->registerUrl(kUrl, [&](const TaskResult& r) { done = r.ok; });
  REQUIRE(waitFor([&] { return done.load(); }));
  const auto after = wallMs();
  const auto expiry = expiryOf(engine, kUrl);
  CHECK(expiry >= before + 1000);
  CHECK(expiry <= after + 1000);
  CHECK(RedisEngine::providersKey("dubbo", "greeter") == "/dubbo/greeter/providers");
  CHECK(redisOf(*provider).removalBound() == 1500ms);
}

TEST_CASE("redis registry: renewal keeps a live registration beyond several sessions") {
  Env env;
  RedisFixture engine;
  auto provider = started(env, engine.setup());
  auto consumer = started(env, engine.setup());
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  provider->registerUrl(kUrl);
  REQUIRE(watcher->sees("greeter", {kUrl}));
  const int notified = watcher->notifications();
  const auto end = Clock::now() + 3500ms;  // 3.5 sessions
  bool alive = true;
  std::int64_t lastExpiry = expiryOf(engine, kUrl);
  while (Clock::now() < end && alive) {
    const auto expiry = expiryOf(engine, kUrl);
    alive = expiry > wallMs() && watcher->providers("greeter") == std::vector<std::string>{kUrl};
    lastExpiry = std::max(lastExpiry, expiry);
    std::this_thread::sleep_for(50ms);
  }
  CHECK(alive);
  CHECK(lastExpiry > wallMs());
  CHECK(watcher->notifications() == notified);  // the list never flapped
  CHECK(provider->failback().pendingRetryCount() == 0);
}

TEST_CASE("redis registry: a frozen server is detected within the idle timeout and recovered") {
  Env env;
  RedisFixture engine;
  auto provider = started(env, engine.setup());
  auto consumer = started(env, engine.setup());
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  provider->registerUrl(kUrl);
  REQUIRE(watcher->sees("greeter", {kUrl}));
  const auto disconnects = redisOf(*provider).stats().disconnects;
  engine.server().pause();  // SIGSTOP: TCP stays up, nothing answers
  const auto frozen = Clock::now();
  CHECK(waitFor([&] { return redisOf(*provider).stats().disconnects > disconnects; }, 3s));
  // idleTimeout 300 ms + one check (33 ms) + a tick; the margin is for loaded machines.
  CHECK(Clock::now() - frozen < 1s);
  CHECK_FALSE(provider->isConnected());
  engine.server().resume();
  CHECK(waitFor([&] { return provider->isConnected() && consumer->isConnected(); }));
  CHECK(waitFor([&] { return redisOf(*provider).stats().reconnects >= 1; }));
  CHECK(waitFor([&] { return engine.stored("greeter") == std::vector<std::string>{kUrl}; }));
  CHECK(watcher->sees("greeter", {kUrl}));
  CHECK(waitFor([&] {
    return provider->failback().pendingRetryCount() == 0 &&
           consumer->failback().pendingRetryCount() == 0;
  }));
}

TEST_CASE("redis registry: an error reply fails the call with rejected") {
  Env env;
  RedisFixture engine;
  REQUIRE(engine.server().command({"SET", "/dubbo/greeter/providers", "not a hash"}).type == '+');
  RegistrySetup setup = engine.setup();
  setup.failback.check = true;  // a first failure is reported, not retried
  auto provider = started(env, setup);
  std::mutex mutex;
  std::optional<TaskResult> result;
  provider->registerUrl(kUrl, [&](const TaskResult& r) {
    std::lock_guard lock(mutex);
    result = r;
  });
  REQUIRE(waitFor([&] {
    std::lock_guard lock(mutex);
    return result.has_value();
  }));
  std::lock_guard lock(mutex);
  CHECK_FALSE(result->ok);
  CHECK(result->error == "rejected");
  CHECK(result->message.find("WRONGTYPE") != std::string::npos);
  CHECK(provider->failback().pendingRetryCount() == 0);
  CHECK(provider->isConnected());  // an error reply is not a broken link
}

TEST_CASE("redis registry: unsubscribed listeners hear nothing more") {
  Env env;
  RedisFixture engine;
  auto provider = started(env, engine.setup());
  auto consumer = started(env, engine.setup());
  auto watcher = std::make_shared<Watcher>();
  consumer->subscribe("greeter", watcher);
  REQUIRE(watcher->sees("greeter", {}));
  std::atomic<bool> unsubscribed{false};
  consumer->unsubscribe("greeter", watcher, [&](const TaskResult& r) { unsubscribed = r.ok; });
  REQUIRE(waitFor([&] { return unsubscribed.load(); }));
  const int count = watcher->notifications();
  std::atomic<bool> registered{false};
  provider->registerUrl(kUrl, [&](const TaskResult& r) { registered = r.ok; });
  REQUIRE(waitFor([&] { return registered.load(); }));
  std::this_thread::sleep_for(700ms);  // longer than a sweep period: nothing may arrive
  CHECK(watcher->notifications() == count);
}

TEST_CASE("redis registry: construction checks the kind and the options") {
  Env env;
  RedisFixture engine;
  RegistrySetup setup = engine.setup();
  auto made = makeRegistry(env.loop, env.timer, setup);
  CHECK(dynamic_cast<RedisEngine*>(&made->engine()) != nullptr);
  made->close();
  setup.registry.kind = RegistryKind::Embedded;
  CHECK_THROWS_AS((void)makeRedisEngine(env.loop, env.timer, setup), std::invalid_argument);
  setup = engine.setup();
  setup.requestTimeout = 0ns;
  CHECK_THROWS_AS((void)makeRedisEngine(env.loop, env.timer, setup), std::invalid_argument);
  CHECK_THROWS_AS((void)makeRegistry(env.loop, env.timer, setup), std::invalid_argument);
  setup = engine.setup();
  setup.registry.session = 10ms;
  CHECK_THROWS_AS((void)makeRedisEngine(env.loop, env.timer, setup), std::invalid_argument);
  CHECK_THROWS_AS((void)makeRegistry(env.loop, env.timer, setup), std::invalid_argument);
}

}  // TEST_SUITE("redis")
