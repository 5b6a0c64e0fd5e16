// Balancer: which provider a call (or its next attempt) goes to, chosen among the candidates the
// caller passes (those available now, minus the ones this call already tried).
//
//   Balancer balancer(BalancerKind::P2C, seed);
//   std::vector<Candidate> candidates = ...;   // id, weight, in-flight calls, latency estimate
//   const std::size_t i = balancer.pick(candidates);   // or pick(candidates, hashKey)
//
// Kinds (Dubbo's load balances, with Finagle's P2C as the default):
// - P2C: two *distinct* candidates drawn at random by weight; the one with the lower cost
//   (latency estimate + 1 us) x (in-flight + 1) / weight wins. One candidate: that one.
// - RoundRobin: smooth weighted round robin (each pick adds every weight to its candidate's
//   credit, takes the largest credit and subtracts the total), so weights 5:1:1 give
//   a a b a c a a, never five in a row. State per id; ids that disappear are forgotten.
// - WeightedRandom: one draw by weight.
// - LeastActive: the fewest in-flight calls; a tie is drawn by weight.
// - ConsistentHash: the same `key` goes to the same provider while it is a candidate; when it is
//   not, the key moves to the next provider on a ring of 160 points per provider, and only the
//   keys of a provider that left move.
//
// Weights: > 0 and finite (a candidate with a weight <= 0 counts as 1). warmedWeight() applies
// Dubbo's warm-up to a provider's configured weight.
//
// Thread: not thread-safe; one owner (the cluster client, on its loop). Deterministic for a seed.
#pragma once

#include <wheelbeat/core/cxx20.h>
#include <wheelbeat/tasks/small_rng.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wheelbeat::tasks::cluster {

// What a balancer knows of one provider at the moment of a pick.
struct Candidate {
  std::uint64_t id = 0;
  double weight = 100;                  // after warm-up (warmedWeight())
  std::uint32_t inflight = 0;           // calls sent to it, not answered yet
  std::chrono::nanoseconds latency{0};  // its estimate (PeakEwma::value()); 0 = none yet
};

enum class BalancerKind : std::uint8_t {
  P2C,
  RoundRobin,
  WeightedRandom,
  LeastActive,
  ConsistentHash
};
// "p2c", "round_robin", "random", "least_active", "consistent_hash" (config's words).
[[nodiscard]] std::string_view balancerKindName(BalancerKind kind) noexcept;

// Dubbo's warm-up: a provider up for `uptime` of a `warmup` period gets weight x uptime / warmup,
// at least 1 and at most `weight`; after the period (or with warmup <= 0), `weight`.
[[nodiscard]] double warmedWeight(double weight, std::chrono::nanoseconds uptime,
                                  std::chrono::nanoseconds warmup) noexcept;

// A latency estimate that jumps up at once and decays down slowly (Finagle's peak EWMA): an
// observation above the estimate replaces it; one below moves it by 1 - exp(-elapsed / decay).
class PeakEwma {
public:
  explicit PeakEwma(std::chrono::nanoseconds decay = std::chrono::seconds(10)) noexcept
      : decay_(decay) {}
  void observe(std::chrono::nanoseconds latency, std::chrono::nanoseconds now) noexcept;
  // The estimate as of the last observation (0 before the first).
  [[nodiscard]] std::chrono::nanoseconds value() const noexcept { return value_; }
  // The estimate at `now`, decayed towards 0 over the time since the last observation (by
  // exp(-elapsed / decay)), as Finagle and Linkerd read it: a provider that one slow answer made
  // expensive, and that therefore no longer gets calls to learn from, regains its chance instead
  // of starving. What the balancer compares.
  [[nodiscard]] std::chrono::nanoseconds cost(std::chrono::nanoseconds now) const noexcept;

private:
  std::chrono::nanoseconds decay_;
  std::chrono::nanoseconds value_{0};
  std::chrono::nanoseconds last_{0};
  bool seen_ = false;
};

class Balancer {
public:
  Balancer(BalancerKind kind, std::uint64_t seed) noexcept : kind_(kind), rng_(seed) {}

  // The index in `candidates` of the chosen one. `candidates` must not be empty (throws
  // std::invalid_argument). `key` only matters to ConsistentHash.
  [[nodiscard]] std::size_t pick(std::span<const Candidate> candidates, std::uint64_t key = 0);

  [[nodiscard]] BalancerKind kind() const noexcept { return kind_; }

private:
  std::size_t byWeight(std::span<const Candidate> candidates, std::size_t skip);
  std::size_t p2c(std::span<const Candidate> candidates);
  std::size_t roundRobin(std::span<const Candidate> candidates);
  std::size_t leastActive(std::span<const Candidate> candidates);
  std::size_t consistentHash(std::span<const Candidate> candidates, std::uint64_t key);

  BalancerKind kind_;
  SmallRng rng_;
  std::unordered_map<std::uint64_t, double> credit_;           // RoundRobin
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ring_;  // ConsistentHash: (point, id)
  std::vector<std::uint64_t> ringIds_;  // the ids ring_ was built over, sorted
};

}  // namespace wheelbeat::tasks::cluster
