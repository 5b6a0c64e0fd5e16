// S1-S3: the cost of newTimeout() (and cancel) on the caller's thread, tick 100 ms, delays
// uniform 1-60 s so nothing fires while the loop runs. Delays are generated before timing; the
// timer is constructed and started before timing; the task is a no-op lambda built in the call
// (inline in both TimerTask and std::function, so neither allocates for it).
#include "impls.h"
#include "workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <exception>
#include <thread>

namespace wheelbeat::bench {
namespace {

using namespace std::chrono_literals;

constexpr nanoseconds kTick = 100ms;
constexpr nanoseconds kMinDelay = 1s;
constexpr nanoseconds kMaxDelay = 60s;

double nsPerOp(std::int64_t wallNs, std::uint64_t n) {
  return static_cast<double>(wallNs) / static_cast<double>(n);
}

// Stops the timer and checks that every scheduled timeout was still pending — when no deadline
// can have passed yet (a very slow run, e.g. under a sanitizer, skips the check).
template <typename Impl>
void stopExpectingAllPending(Impl& timer, std::uint64_t n, std::int64_t startNs,
                             std::string_view label) {
  const std::uint64_t pending = timer.pending();
  const std::size_t unrun = timer.stop();
  if (nowNs() - startNs >= kMinDelay.count()) return;
  require(pending == n, fmt::format("{}: pending {} after scheduling {}", label, pending, n));
  require(unrun == n, fmt::format("{}: stop() returned {} of {} pending", label, unrun, n));
}

template <typename Impl>
Metrics s1(const RunParams& p) {
  const auto delays = makeDelays(p.n, kMinDelay, kMaxDelay, p.seed);
  Impl timer(kTick);
  const std::int64_t start = nowNs();
  for (const nanoseconds d : delays) timer.schedule([] {}, d);
  const std::int64_t wall = nowNs() - start;
  stopExpectingAllPending(timer, p.n, start, "S1");
  return {{"ns_per_op", nsPerOp(wall, p.n)}};
}

template <typename Impl>
Metrics s2(const RunParams& p) {
  const auto delays = makeDelays(p.n, kMinDelay, kMaxDelay, p.seed);
  Impl timer(kTick);
  std::uint64_t wins = 0;
  const std::int64_t start = nowNs();
  for (const nanoseconds d : delays) {
    const auto handle = timer.schedule([] {}, d);
    wins += Impl::cancel(handle) ? 1 : 0;
  }
  const std::int64_t wall = nowNs() - start;
  require(wins == p.n, fmt::format("S2: {} of {} cancels won", wins, p.n));
  require(timer.pending() == 0,
          fmt::format("S2: pending {} after cancelling all", timer.pending()));
  require(timer.stop() == 0, "S2: stop() returned timeouts that were all cancelled");
  return {{"ns_per_pair", nsPerOp(wall, p.n)}};
}

// One S3 scheduling thread: waits at the barrier, then schedules its share and times itself.
template <typename Impl>
struct S3Worker {
  Impl* timer = nullptr;
  std::barrier<>* sync = nullptr;
  std::vector<nanoseconds> delays;
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
  std::exception_ptr error;

  void operator()() {
    try {
      sync->arrive_and_wait();
      startNs = nowNs();
      for (const nanoseconds d : delays) timer->schedule([] {}, d);
      endNs = nowNs();
    } catch (...) {
      error = std::current_exception();
    }
  }
};

template <typename Impl>
Metrics s3(const RunParams& p) {
  constexpr std::size_t kThreads = 2;
  Impl timer(kTick);
  std::barrier<> sync(kThreads);
  std::array<S3Worker<Impl>, kThreads> workers;
  for (std::size_t i = 0; i < kThreads; ++i) {
    workers[i].timer = &timer;
    workers[i].sync = &sync;
    workers[i].delays = makeDelays(p.n / kThreads, kMinDelay, kMaxDelay, p.seed + i);
  }
  std::array<std::thread, kThreads> threads;
  for (std::size_t i = 0; i < kThreads; ++i) threads[i] = std::thread(std::ref(workers[i]));
  for (auto& t : threads) t.join();
  for (auto& w : workers) {
    if (w.error) std::rethrow_exception(w.error);
  }
  const std::int64_t first = std::min(workers[0].startNs, workers[1].startNs);
  const std::int64_t last = std::max(workers[0].endNs, workers[1].endNs);
  stopExpectingAllPending(timer, p.n / kThreads * kThreads, first, "S3");
  return {{"ns_per_op", nsPerOp(last - first, p.n)}};
}

}  // namespace

Metrics runS1(ImplKind impl, const RunParams& p) {
  return withImpl(impl, [&](auto t) { return s1<typename decltype(t)::type>(p); });
}
Metrics runS2(ImplKind impl, const RunParams& p) {
  return withImpl(impl, [&](auto t) { return s2<typename decltype(t)::type>(p); });
}
Metrics runS3(ImplKind impl, const RunParams& p) {
  return withImpl(impl, [&](auto t) { return s3<typename decltype(t)::type>(p); });
}

}  // namespace wheelbeat::bench
