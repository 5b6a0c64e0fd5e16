// Balancer and PeakEwma: P2C's two distinct picks, smooth weighted round robin's exact order,
// weighted draws, least-active, consistent hashing's stability, Dubbo's warm-up.
#include <wheelbeat/tasks/cluster/balancer.h>

#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using wheelbeat::tasks::cluster::Balancer;
using wheelbeat::tasks::cluster::BalancerKind;
using wheelbeat::tasks::cluster::Candidate;
using wheelbeat::tasks::cluster::PeakEwma;
using wheelbeat::tasks::cluster::warmedWeight;

namespace {

std::vector<int> counts(Balancer& b, const std::vector<Candidate>& c, int picks) {
  std::vector<int> out(c.size());
  for (int i = 0; i < picks; ++i) ++out[b.pick(c)];
  return out;
}

}  // namespace

TEST_SUITE("cluster") {
TEST_CASE("balancer: P2C compares two distinct candidates, so the worst of three never wins") {
  Balancer b(BalancerKind::P2C, 1);
  const std::vector<Candidate> c{{.id = 1, .latency = 2ms},
                                 {.id = 2, .latency = 50ms},  // the worst
                                 {.id = 3, .latency = 3ms}};
  const std::vector<int> n = counts(b, c, 30000);
  CHECK(n[1] == 0);
  CHECK(n[0] + n[2] == 30000);
  // Of two, the cheaper always: in-flight calls multiply the latency.
  const std::vector<Candidate> two{{.id = 1, .inflight = 4, .latency = 1ms},
                                   {.id = 2, .inflight = 0, .latency = 3ms}};
  CHECK(counts(b, two, 1000) == std::vector<int>{0, 1000});
}

TEST_CASE("balancer: P2C with equal costs spreads by weight") {
  Balancer b(BalancerKind::P2C, 2);
  const std::vector<Candidate> c{{.id = 1, .weight = 100},
                                 {.id = 2, .weight = 100},
                                 {.id = 3, .weight = 100},
                                 {.id = 4, .weight = 100}};
  for (const int n : counts(b, c, 40000)) CHECK((n > 9000 && n < 11000));
}

TEST_CASE("balancer: smooth weighted round robin, 5:1:1 gives a a b a c a a") {
  Balancer b(BalancerKind::RoundRobin, 3);
  const std::vector<Candidate> c{
      {.id = 10, .weight = 5}, {.id = 11, .weight = 1}, {.id = 12, .weight = 1}};
  std::string order;
  for (int i = 0; i < 14; ++i) order += static_cast<char>('a' + b.pick(c));
  CHECK(order == "aabacaaaabacaa");
  // Equal weights: each in turn.
  Balancer even(BalancerKind::RoundRobin, 3);
  const std::vector<Candidate> e{{.id = 1}, {.id = 2}, {.id = 3}};
  order.clear();
  for (int i = 0; i < 6; ++i) order += static_cast<char>('a' + even.pick(e));
  CHECK(order == "abcabc");
}

TEST_CASE("balancer: weighted random follows the weights") {
  Balancer b(BalancerKind::WeightedRandom, 4);
  const std::vector<Candidate> c{{.id = 1, .weight = 300},
                                 {.id = 2, .weight = 100},
                                 {.id = 3, .weight = 0}};  // <= 0 counts as 1
  const std::vector<int> n = counts(b, c, 40100);
  CHECK((n[0] > 29000 && n[0] < 31000));
  CHECK((n[1] > 9300 && n[1] < 10700));
  CHECK((n[2] > 40 && n[2] < 200));
}

TEST_CASE("balancer: least active takes the fewest in-flight calls, ties by weight") {
  Balancer b(BalancerKind::LeastActive, 5);
  const std::vector<Candidate> c{{.id = 1, .inflight = 3},
                                 {.id = 2, .inflight = 1},
                                 {.id = 3, .inflight = 1},
                                 {.id = 4, .inflight = 0}};
  CHECK(counts(b, c, 1000) == std::vector<int>{0, 0, 0, 1000});
  const std::vector<Candidate> tie{{.id = 1, .inflight = 1},
                                   {.id = 2, .weight = 300, .inflight = 0},
                                   {.id = 3, .weight = 100, .inflight = 0}};
  const std::vector<int> n = counts(b, tie, 20000);
  CHECK(n[0] == 0);
  CHECK((n[1] > 14000 && n[1] < 16000));
}

TEST_CASE("balancer: consistent hash keeps keys in place, and only a leaver's keys move") {
  Balancer b(BalancerKind::ConsistentHash, 6);
  std::vector<Candidate> c;
  for (std::uint64_t id = 1; id <= 5; ++id) c.push_back({.id = id});
  std::map<std::uint64_t, std::uint64_t> owner;
  std::array<int, 5> load{};
  for (std::uint64_t key = 0; key < 5000; ++key) {
    owner[key] = c[b.pick(c, key)].id;
    ++load[owner[key] - 1];
    CHECK(c[b.pick(c, key)].id == owner[key]);  // the same key, the same provider
  }
  for (const int n : load) CHECK((n > 600 && n < 1400));
  // Provider 3 leaves: its keys move, no other key does.
  std::vector<Candidate> without;
  for (const Candidate& x : c) {
    if (x.id != 3) without.push_back(x);
  }
  int moved = 0;
  for (std::uint64_t key = 0; key < 5000; ++key) {
    const std::uint64_t now = without[b.pick(without, key)].id;
    CHECK(now != 3);
    if (owner[key] != 3) {
      CHECK(now == owner[key]);
    } else {
      ++moved;
    }
  }
  CHECK(moved == load[2]);
  // It comes back: every key is where it was.
  for (std::uint64_t key = 0; key < 5000; ++key) CHECK(c[b.pick(c, key)].id == owner[key]);
}

TEST_CASE("balancer: one candidate is picked, none is an error") {
  for (const auto kind : {BalancerKind::P2C, BalancerKind::RoundRobin, BalancerKind::WeightedRandom,
                          BalancerKind::LeastActive, BalancerKind::ConsistentHash}) {
    Balancer b(kind, 7);
    const std::vector<Candidate> one{{.id = 9}};
    CHECK(b.pick(one, 42) == 0);
    CHECK_THROWS_AS((void)b.pick(std::vector<Candidate>{}), std::invalid_argument);
  }
}

TEST_CASE("balancer: Dubbo's warm-up grows the weight with uptime") {
  CHECK(warmedWeight(100, 0s, 10min) == 1);  // at least 1
  CHECK(warmedWeight(100, 1min, 10min) == doctest::Approx(10));
  CHECK(warmedWeight(100, 5min, 10min) == doctest::Approx(50));
  CHECK(warmedWeight(100, 10min, 10min) == 100);
  CHECK(warmedWeight(100, 1h, 10min) == 100);
  CHECK(warmedWeight(100, 1min, 0s) == 100);   // no warm-up
  CHECK(warmedWeight(0.5, 0s, 10min) == 0.5);  // never above the weight
}

TEST_CASE("balancer: peak EWMA jumps up at once and decays down with time") {
  PeakEwma e(10s);
  CHECK(e.value() == 0ns);
  e.observe(2ms, 0s);
  CHECK(e.value() == 2ms);
  e.observe(40ms, 1s);  // a peak replaces the estimate
  CHECK(e.value() == 40ms);
  e.observe(2ms, 11s);  // 10 s later: 40 x e^-1 + 2 x (1 - e^-1) = 16.0 ms
  CHECK(e.value().count() == doctest::Approx(15979.4e3).epsilon(0.001));
  e.observe(2ms, 11s);  // no time passed: unchanged
  CHECK(e.value().count() == doctest::Approx(15979.4e3).epsilon(0.001));
}

TEST_CASE("balancer: peak EWMA's cost decays towards 0 while nothing is observed") {
  PeakEwma e(1s);
  CHECK(e.cost(5s) == 0ns);  // nothing seen yet
  e.observe(40ms, 10s);
  CHECK(e.cost(10s) == 40ms);
  CHECK(e.cost(11s).count() == doctest::Approx(40e6 / 2.718281828).epsilon(0.001));
  CHECK(e.cost(30s) < 1ms);  // 20 decays later: a stale peak no longer starves the provider
  CHECK(e.value() == 40ms);  // the estimate itself moves only with observations
}
}  // TEST_SUITE("cluster")
