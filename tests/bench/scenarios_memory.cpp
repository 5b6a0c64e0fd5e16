// S4 (memory per pending timeout) and S6 (CPU while a million timeouts wait): both keep
// 1 000 000 timeouts pending with delays uniform 10-20 min, so nothing fires.
#include "impls.h"
#include "proc_stats.h"
#include "workload.h"

#include <fmt/format.h>

#include <cstdlib>
#include <thread>

namespace wheelbeat::bench {
namespace {

using namespace std::chrono_literals;

constexpr nanoseconds kMinDelay = 10min;
constexpr nanoseconds kMaxDelay = 20min;

template <typename Impl>
void scheduleAll(Impl& timer, const std::vector<nanoseconds>& delays) {
  for (const nanoseconds d : delays) timer.schedule([] {}, d);
}

template <typename Impl>
void stopExpectingAllPending(Impl& timer, std::uint64_t n, std::string_view label) {
  const std::size_t unrun = timer.stop();
  require(unrun == n,
          fmt::format("{}: stop() returned {} of {} pending timeouts", label, unrun, n));
}

// Runs in a fresh process (see runS4). "before" is read once the timer is constructed and
// started and the delays are generated, so only the per-timeout cost is measured. "after" is read
// after a short pause so that memory the worker thread allocates while taking in the new
// timeouts (the wheel drains submissions asynchronously) is counted too.
template <typename Impl>
double s4Measure(std::uint64_t n, std::uint64_t seed) {
  const auto delays = makeDelays(n, kMinDelay, kMaxDelay, seed);
  Impl timer(100ms);
  const std::int64_t before = vmRssBytes();
  scheduleAll(timer, delays);
  std::this_thread::sleep_for(n >= 100'000 ? 200ms : 20ms);
  const std::int64_t after = vmRssBytes();
  require(timer.pending() == n, fmt::format("S4: pending {} of {}", timer.pending(), n));
  stopExpectingAllPending(timer, n, "S4");
  return static_cast<double>(after - before) / static_cast<double>(n);
}

// CPU used by the whole process while the main thread sleeps (a blocking wait) for the window.
// The window opens after a settle pause, so it measures the steady state with N pending, not the
// worker taking in the N new timeouts.
template <typename Impl>
Metrics s6(const RunParams& p) {
  const nanoseconds settle = p.quick ? nanoseconds(50ms) : nanoseconds(1s);
  const nanoseconds window = p.quick    ? nanoseconds(200ms)
                             : p.warmup ? nanoseconds(1s)
                                        : nanoseconds(10s);
  const auto delays = makeDelays(p.n, kMinDelay, kMaxDelay, p.seed);
  Impl timer(1ms);
  scheduleAll(timer, delays);
  std::this_thread::sleep_for(settle);
  const nanoseconds cpu0 = processCpu();
  const std::int64_t t0 = nowNs();
  std::this_thread::sleep_for(window);
  const nanoseconds cpu1 = processCpu();
  const std::int64_t wall = nowNs() - t0;
  stopExpectingAllPending(timer, p.n, "S6");
  const double pct = 100.0 * static_cast<double>((cpu1 - cpu0).count()) / static_cast<double>(wall);
  return {{"cpu_pct", pct}, {"window_ms", static_cast<double>(wall) / 1e6}};
}

}  // namespace

int s4ChildMain(ImplKind impl, std::uint64_t n, std::uint64_t seed) {
  const double bytes =
      withImpl(impl, [&](auto t) { return s4Measure<typename decltype(t)::type>(n, seed); });
  fmt::print("{}\n", bytes);
  return 0;
}

// RSS does not reliably go down after free (the allocator keeps memory; a reused free chunk
// would even hide the cost), so every repetition of each impl runs in a fresh process.
Metrics runS4(ImplKind impl, const RunParams& p) {
  const std::string out = runSelf(
      {"--s4-child", std::string(implName(impl)), std::to_string(p.n), std::to_string(p.seed)});
  char* end = nullptr;
  const double bytes = std::strtod(out.c_str(), &end);
  require(end != out.c_str(), fmt::format("S4: unreadable child output '{}'", out));
  return {{"rss_bytes_per_timeout", bytes}};
}

Metrics runS6(ImplKind impl, const RunParams& p) {
  return withImpl(impl, [&](auto t) { return s6<typename decltype(t)::type>(p); });
}

}  // namespace wheelbeat::bench
