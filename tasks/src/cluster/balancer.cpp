#include <wheelbeat/tasks/cluster/balancer.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace wheelbeat::tasks::cluster {
namespace {

using std::chrono::nanoseconds;

double weightOf(const Candidate& c) noexcept {
  return c.weight > 0 && std::isfinite(c.weight) ? c.weight : 1.0;
}

// splitmix64's finaliser: a well-spread 64-bit hash of a 64-bit value.
std::uint64_t mix(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr int kPointsPerProvider = 160;  // Dubbo's default replica count

double uniform(SmallRng& rng) noexcept {  // [0, 1)
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace

std::string_view balancerKindName(BalancerKind kind) noexcept {
  switch (kind) {
    case BalancerKind::P2C: return "p2c";
    case BalancerKind::RoundRobin: return "round_robin";
    case BalancerKind::WeightedRandom: return "random";
    case BalancerKind::LeastActive: return "least_active";
    case BalancerKind::ConsistentHash: return "consistent_hash";
  }
  return "unknown";
}

double warmedWeight(double weight, nanoseconds uptime, nanoseconds warmup) noexcept {
  if (warmup <= nanoseconds(0) || uptime >= warmup) return weight;
  const double share = static_cast<double>(std::max(uptime, nanoseconds(0)).count()) /
                       static_cast<double>(warmup.count());
  return std::clamp(weight * share, std::min(1.0, weight), weight);
}

void PeakEwma::observe(nanoseconds latency, nanoseconds now) noexcept {
  if (!seen_ || latency >= value_) {
    value_ = latency;
  } else {
    const double elapsed = static_cast<double>(std::max(now - last_, nanoseconds(0)).count());
    const double keep =
        decay_.count() > 0 ? std::exp(-elapsed / static_cast<double>(decay_.count())) : 0.0;
    value_ =
        nanoseconds(static_cast<std::int64_t>(static_cast<double>(value_.count()) * keep +
                                              static_cast<double>(latency.count()) * (1 - keep)));
  }
  seen_ = true;
  last_ = now;
}

nanoseconds PeakEwma::cost(nanoseconds now) const noexcept {
  if (!seen_ || decay_.count() <= 0) return value_;
  const double elapsed = static_cast<double>(std::max(now - last_, nanoseconds(0)).count());
  return nanoseconds(
      static_cast<std::int64_t>(static_cast<double>(value_.count()) *
                                std::exp(-elapsed / static_cast<double>(decay_.count()))));
}

std::size_t Balancer::pick(std::span<const Candidate> candidates, std::uint64_t key) {
  if (candidates.empty()) throw std::invalid_argument("Balancer::pick: no candidates");
  if (candidates.size() == 1) return 0;
  switch (kind_) {
    case BalancerKind::P2C: return p2c(candidates);
    case BalancerKind::RoundRobin: return roundRobin(candidates);
    case BalancerKind::WeightedRandom: return byWeight(candidates, candidates.size());
    case BalancerKind::LeastActive: return leastActive(candidates);
    case BalancerKind::ConsistentHash: return consistentHash(candidates, key);
  }
  return 0;
}

// A draw by weight among the candidates, leaving out index `skip` (none if out of range).
std::size_t Balancer::byWeight(std::span<const Candidate> candidates, std::size_t skip) {
  double total = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    total += i == skip ? 0 : weightOf(candidates[i]);
  double at = uniform(rng_) * total;
  std::size_t last = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (i == skip) continue;
    last = i;
    at -= weightOf(candidates[i]);
    if (at < 0) return i;
  }
  return last;  // rounding left `at` at 0
}

std::size_t Balancer::p2c(std::span<const Candidate> candidates) {
  const std::size_t a = byWeight(candidates, candidates.size());
  const std::size_t b = byWeight(candidates, a);  // distinct from a
  const auto cost = [](const Candidate& c) {
    return (static_cast<double>(c.latency.count()) + 1000.0) * (c.inflight + 1.0) / weightOf(c);
  };
  return cost(candidates[b]) < cost(candidates[a]) ? b : a;
}

std::size_t Balancer::roundRobin(std::span<const Candidate> candidates) {
  if (credit_.size() > candidates.size() * 2) {  // forget providers that left
    std::unordered_map<std::uint64_t, double> kept;
    for (const Candidate& c : candidates) kept[c.id] = credit_[c.id];
    credit_.swap(kept);
  }
  double total = 0;
  std::size_t best = 0;
  double bestCredit = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    double& credit = credit_[candidates[i].id];
    credit += weightOf(candidates[i]);
    total += weightOf(candidates[i]);
    if (i == 0 || credit > bestCredit) {
      best = i;
      bestCredit = credit;
    }
  }
  credit_[candidates[best].id] -= total;
  return best;
}

std::size_t Balancer::leastActive(std::span<const Candidate> candidates) {
  std::uint32_t least = candidates[0].inflight;
  for (const Candidate& c : candidates) least = std::min(least, c.inflight);
  std::vector<Candidate> tied;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].inflight == least) {
      tied.push_back(candidates[i]);
      index.push_back(i);
    }
  }
  return index[byWeight(tied, tied.size())];
}

std::size_t Balancer::consistentHash(std::span<const Candidate> candidates, std::uint64_t key) {
  const auto known = [this](std::uint64_t id) {
    return std::binary_search(ringIds_.begin(), ringIds_.end(), id);
  };
  if (!std::all_of(candidates.begin(), candidates.end(),
                   [&](const Candidate& c) { return known(c.id); })) {
    for (const Candidate& c : candidates) {
      if (!known(c.id))
        ringIds_.insert(std::upper_bound(ringIds_.begin(), ringIds_.end(), c.id), c.id);
    }
    ring_.clear();
    for (const std::uint64_t id : ringIds_) {
      for (int p = 0; p < kPointsPerProvider; ++p) {
        ring_.emplace_back(mix(mix(id) ^ static_cast<std::uint64_t>(p)), id);
      }
    }
    std::sort(ring_.begin(), ring_.end());
  }
  // Clockwise from the key's point to the first provider that is a candidate now.
  auto at = std::lower_bound(ring_.begin(), ring_.end(), std::pair{mix(key), std::uint64_t{0}});
  for (std::size_t step = 0; step < ring_.size(); ++step, ++at) {
    if (at == ring_.end()) at = ring_.begin();
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].id == at->second) return i;
    }
  }
  return 0;  // unreachable: every candidate is on the ring
}

}  // namespace wheelbeat::tasks::cluster
