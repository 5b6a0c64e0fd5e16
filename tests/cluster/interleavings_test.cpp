// ServiceClient under random interleavings on loopback: providers that answer at random (echo,
// busy, an application's error, late, silent, or closing the connection), providers leaving and
// joining the registry, a provider going READONLY and draining, a new one starting, and the
// client closed while calls are in flight — in every mode, with and without hedging. Whatever
// happens, every accepted call ends exactly once, and the client's figures add up to the calls.
#include "support.h"

#include <doctest/doctest.h>

using namespace wbcluster;

namespace {

struct Tally {
  std::mutex mutex;
  std::vector<int> ends;  // per call: how many times its done ran
  std::uint64_t ok = 0;

  wheelbeat::cluster::CallDone done(std::size_t index) {
    return [this, index](const CallOutcome& o) {
      std::lock_guard lock(mutex);
      ++ends[index];
      ok += o.ok ? 1 : 0;
    };
  }
  std::size_t ended() {
    std::lock_guard lock(mutex);
    return static_cast<std::size_t>(
        std::count_if(ends.begin(), ends.end(), [](int n) { return n > 0; }));
  }
};

// Every mode in turn (`round`), the rest drawn.
ClusterOptions randomOptions(int round, wheelbeat::tasks::SmallRng& rng) {
  const Mode modes[] = {Mode::Failover, Mode::Failfast, Mode::Failsafe,
                        Mode::Failback, Mode::Forking,  Mode::Broadcast};
  ClusterOptions o = fastCluster(modes[round % 6]);
  o.balancer = static_cast<BalancerKind>(rng() % 5);
  o.deadline = std::chrono::milliseconds(60 + rng() % 200);
  o.hedge = (o.mode == Mode::Failover || o.mode == Mode::Failfast) && rng() % 2 == 0;
  o.hedgeDelay.fixed = std::chrono::milliseconds(5 + rng() % 20);
  o.failback.invocationRetry.initialDelay = 20ms;
  o.failback.invocationRetry.maxDelay = 20ms;
  o.seed = rng();
  return o;
}

}  // namespace

TEST_SUITE("cluster") {
TEST_CASE("service client: random interleavings end every call exactly once") {
  wheelbeat::tasks::SmallRng rng(77);
  for (int round = 0; round < 12; ++round) {
    CAPTURE(round);
    Env env;
    const ClusterOptions options = randomOptions(round, rng);
    CAPTURE(std::string(modeName(options.mode)));
    Cluster c(env, {Behaviour::Random, Behaviour::Random, Behaviour::Random, Behaviour::Echo},
              options);
    for (std::size_t i = 0; i < c.providers.size(); ++i)
      c.providers[i]->rng = wheelbeat::tasks::SmallRng(rng() + i);
    constexpr std::size_t kCalls = 240;
    Tally tally;
    tally.ends.assign(kCalls, 0);
    // The calls start from the wheel, one every 2 ms; the test thread changes the providers as
    // the calls pass given marks.
    std::atomic<std::size_t> issued{0};
    std::vector<char> refused(kCalls, 0);  // wheel thread, read after `issued` reached kCalls
    for (std::size_t i = 0; i < kCalls; ++i) {
      (void)env.timer.newTimeout(
          [&, i] {
            try {
              c.client->call(fmt::format("call {}", i), {}, tally.done(i));
            } catch (const std::logic_error&) {  // after close(): refused, nothing started
              refused[i] = 1;
            }
            ++issued;
          },
          std::chrono::milliseconds(2 * i));
    }
    const auto reach = [&](std::size_t mark) {
      REQUIRE(waitFor([&] { return issued.load() >= mark; }, 5s));
    };
    reach(40);
    c.providerRegistry->unregisterUrl(c.providers[0]->url());
    reach(80);
    c.providerRegistry->registerUrl(c.providers[0]->url());
    reach(120);
    (void)c.providers[1]->server->shutdown(50ms);  // READONLY, then a drain of at most 50 ms
    reach(150);
    auto joiner = std::make_unique<Provider>(env, Behaviour::Echo);
    c.providerRegistry->registerUrl(joiner->url());
    reach(kCalls - 20);
    // Closed with calls in flight (and 20 still to start: refused, they never count): each
    // accepted call ends now or has ended — none twice, none never.
    const auto held = c.client->close();
    reach(kCalls);
    const auto accepted =
        kCalls - static_cast<std::size_t>(std::count(refused.begin(), refused.end(), 1));
    CHECK(accepted >= kCalls - 20);
    CHECK(accepted < kCalls);  // the close came first for the last few
    REQUIRE(waitFor([&] { return tally.ended() == accepted; }, 5s));
    std::lock_guard lock(tally.mutex);
    for (std::size_t i = 0; i < kCalls; ++i) {
      CAPTURE(i);
      CHECK(tally.ends[i] == (refused[i] != 0 ? 0 : 1));
    }
    const auto s = c.client->stats();
    CHECK(s.calls == accepted);
    CHECK(s.ok + s.failed + s.failsafe + s.failback == accepted);
    CHECK(s.ok + s.failsafe + s.failback == tally.ok);
    CHECK(held.size() <= s.failback);
    joiner->server->stop();
  }
}
}  // TEST_SUITE("cluster")
