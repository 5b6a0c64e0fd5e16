// SteadyClock::readNotBefore(): an upper bound of CLOCK_MONOTONIC from the TSC (see clock.h for
// the argument). The hot path is one ordered rdtsc, a thread-local base and a multiply.
#include <wheelbeat/core/clock.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>

// A preprocessor switch (read by #if below), not a constant: constexpr cannot select code.
#if defined(__x86_64__) && defined(__linux__)
#include <x86intrin.h>
#define WHEELBEAT_HAVE_TSC 1  // NOLINT(cppcoreguidelines-macro-usage)
#else
#define WHEELBEAT_HAVE_TSC 0  // NOLINT(cppcoreguidelines-macro-usage)
#endif

namespace wheelbeat::core {
namespace {

// A thread's base is replaced once it is this old: bounds the over-estimate (25% of it).
constexpr double kRebaseNs = 64'000;
// Calibrate over at least this long: the rate's bracket error is then below 0.1%.
constexpr std::int64_t kCalibrationNs = 20'000'000;
// A pair (TSC, read()) whose TSC bracket is wider than this (the thread was interrupted between
// the reads) is not used for calibration.
constexpr std::uint64_t kMaxBracketTicks = 20'000;
// CLOCK_MONOTONIC's rate against the TSC moves by at most +-10.1% (ADJ_TICK +-10%, frequency
// +-500 ppm, adjtime slew +-500 ppm): the fastest rate is < 1.101 / 0.899 = 1.2247x the rate
// measured at any time. 1.25 covers it.
constexpr double kRateMargin = 1.25;
// Added to every extrapolated reading: the hot path's unordered rdtsc (see fastTsc()).
constexpr std::int64_t kReorderGuardNs = 1'000;

std::int64_t steadyNs() noexcept { return SteadyClock::read().count(); }

#if WHEELBEAT_HAVE_TSC
// lfence: the TSC is read after every earlier instruction completed (rdtsc alone may run ahead
// of them, e.g. ahead of a caller's own clock read it is compared with).
std::uint64_t orderedTsc() noexcept {
  _mm_lfence();
  return __rdtsc();
}

// The hot path's rdtsc, without lfence (which would double its cost, ~19 ns instead of ~10 ns
// here). Unordered, it may read the counter while earlier instructions are still in flight, but
// never ahead of an ordered clock read that precedes it in this thread (the vDSO's read, like
// orderedTsc(), starts with lfence, which holds back every later instruction): the value can
// be early only by the time an in-flight load takes (~100 ns for one from another core's cache:
// a flag another thread set after reading the clock). kReorderGuardNs covers that.
std::uint64_t fastTsc() noexcept { return __rdtsc(); }

bool fileHas(const char* path, const char* word) {
  std::ifstream in(path);
  std::string token;
  while (in >> token) {
    if (token == word) return true;
  }
  return false;
}

// The kernel keeps CLOCK_MONOTONIC on the TSC only when it found it invariant and in sync
// across CPUs (and switches away from it if its watchdog later sees otherwise).
bool tscUsable() {
  return fileHas("/sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc") &&
         fileHas("/proc/cpuinfo", "constant_tsc") && fileHas("/proc/cpuinfo", "nonstop_tsc");
}
#else
std::uint64_t orderedTsc() noexcept { return 0; }
std::uint64_t fastTsc() noexcept { return 0; }
bool tscUsable() { return false; }
#endif

struct Pair {
  std::uint64_t tscBefore = 0;
  std::int64_t ns = 0;
  std::uint64_t tscAfter = 0;
};
Pair readPair() noexcept {
  Pair p;
  p.tscBefore = orderedTsc();
  p.ns = steadyNs();
  p.tscAfter = orderedTsc();
  return p;
}

enum State : int { kUnchecked, kCalibrating, kReady, kOff };

// Process-wide calibration: mult = ns per TSC tick (an upper bound, times kRateMargin) in 32.32
// fixed point; limit = the base's maximum age in ticks.
struct Calibration {
  std::atomic<int> state{kUnchecked};
  std::atomic<std::uint64_t> mult{0};
  std::atomic<std::uint64_t> limit{0};
  std::mutex mutex;  // the slow path before kReady
  Pair anchor;       // guarded by mutex
};
Calibration& calibration() {
  static auto* c = new Calibration;  // never destroyed: threads may read it during teardown
  return *c;
}

// Each thread's base: the hot path reads only this (mult == 0: go the slow way).
struct Base {
  std::uint64_t tsc = 0;
  std::int64_t ns = 0;
  std::uint64_t mult = 0;
  std::uint64_t limit = 0;
};
thread_local constinit Base tlBase;

void calibrateLocked(Calibration& c, const Pair& now) {
  if (c.anchor.ns == 0) {
    if (now.tscAfter - now.tscBefore <= kMaxBracketTicks) c.anchor = now;
    return;
  }
  if (now.ns - c.anchor.ns < kCalibrationNs || now.tscAfter - now.tscBefore > kMaxBracketTicks)
    return;
  if (now.tscBefore <= c.anchor.tscAfter) {  // the TSC went back: not usable
    c.state.store(kOff);
    return;
  }
  // The two readings of the clock lie within their brackets, so the ticks between them are at
  // least tscBefore - anchor.tscAfter: dividing by that gives an upper bound of the rate.
  const double nsPerTick = static_cast<double>(now.ns - c.anchor.ns) /
                           static_cast<double>(now.tscBefore - c.anchor.tscAfter);
  const double mult = nsPerTick * kRateMargin * 4294967296.0 + 1;
  const double limit = kRebaseNs / nsPerTick;
  if (!(mult >= 1 && mult < 1e15 && limit >= 1 && limit * mult < 9e18)) {
    c.state.store(kOff);  // an absurd rate: keep the exact clock
    return;
  }
  c.mult.store(static_cast<std::uint64_t>(mult));
  c.limit.store(static_cast<std::uint64_t>(limit));
  c.state.store(kReady);
}

// Before kReady: the exact clock, and one step of calibration.
std::int64_t slowRead() noexcept {
  Calibration& c = calibration();
  int state = c.state.load();
  if (state == kUnchecked || state == kCalibrating) {
    std::lock_guard lock(c.mutex);
    state = c.state.load();
    if (state == kUnchecked) {
      bool usable = false;
      try {
        usable = tscUsable();
      } catch (...) {
      }
      state = usable ? kCalibrating : kOff;
      c.state.store(state);
    }
    if (state == kCalibrating) {
      const Pair p = readPair();
      calibrateLocked(c, p);
      if (c.state.load() != kReady) return p.ns;
    }
  }
  return steadyNs();
}

// The base is too old (or the TSC went back, or this thread has none): a new pair. Returns the
// exact reading, and checks that the old base's extrapolation did not fall behind it.
std::int64_t rebase() noexcept {
  Calibration& c = calibration();
  if (c.state.load(std::memory_order_acquire) != kReady) {
    tlBase.mult = 0;
    return slowRead();
  }
  const Base old = tlBase;
  const Pair p = readPair();
  if (old.mult != 0 && p.tscAfter >= old.tsc) {
    // read() at p.ns happened before p.tscAfter: the old base must say at least p.ns there.
    // In double: the gap may be hours (ticks * mult would overflow); the margin dwarfs rounding.
    const double extrapolated =
        static_cast<double>(p.tscAfter - old.tsc) * static_cast<double>(old.mult) / 4294967296.0;
    if (static_cast<double>(old.ns) + extrapolated + 1 < static_cast<double>(p.ns)) {
      c.state.store(kOff);  // the bound failed: never trust the TSC again in this process
      tlBase.mult = 0;
      return p.ns;
    }
  }
  // tscBefore, not tscAfter: the clock was read after it, so the base can only be late.
  tlBase = Base{p.tscBefore, p.ns, c.mult.load(std::memory_order_relaxed),
                c.limit.load(std::memory_order_relaxed)};
  return p.ns;
}

}  // namespace

std::chrono::nanoseconds SteadyClock::readNotBefore() noexcept {
  const Base& base = tlBase;
  if (base.mult == 0) return std::chrono::nanoseconds(rebase());
  const std::uint64_t ticks = fastTsc() - base.tsc;  // a TSC behind the base wraps: > limit
  if (ticks > base.limit) return std::chrono::nanoseconds(rebase());
  return std::chrono::nanoseconds(base.ns + static_cast<std::int64_t>((ticks * base.mult) >> 32) +
                                  kReorderGuardNs);
}

bool SteadyClock::readNotBeforeUsesTsc() noexcept { return calibration().state.load() == kReady; }

}  // namespace wheelbeat::core
