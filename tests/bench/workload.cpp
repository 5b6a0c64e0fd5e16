#include "workload.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace wheelbeat::bench {

std::vector<nanoseconds> makeDelays(std::size_t n, nanoseconds lo, nanoseconds hi,
                                    std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(lo.count(), hi.count());
  std::vector<nanoseconds> delays(n);
  for (auto& d : delays) d = nanoseconds(dist(rng));
  return delays;
}

void FireCounter::onFire() noexcept {
  const std::uint64_t k = count_.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (k == 1) firstNs_.store(nowNs());
  if (k != expected_) return;
  lastNs_.store(nowNs());
  // Notify under the lock: once the waiter sees done_ it may destroy *this.
  std::lock_guard lock(mutex_);
  done_ = true;
  cv_.notify_one();
}

bool FireCounter::waitAll(nanoseconds timeout) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout, [this] { return done_; });
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double percentileSorted(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace wheelbeat::bench
