// S5 (lateness) and S7 (firing throughput): tick 1 ms, every timeout fires, and each one is
// checked to have fired exactly once.
#include "impls.h"
#include "proc_stats.h"
#include "workload.h"

#include <fmt/format.h>

#include <algorithm>

namespace wheelbeat::bench {
namespace {

using namespace std::chrono_literals;

constexpr nanoseconds kTick = 1ms;
constexpr nanoseconds kFireGrace = 30s;  // how long past the last deadline before giving up

void requireAllFired(bool allFired, const FireCounter& counter, std::uint64_t n,
                     std::string_view label) {
  require(allFired, fmt::format("{}: only {} of {} timeouts fired within {} s of the last deadline",
                                label, counter.count(), n, kFireGrace / 1s));
}

// What each S5 task writes, indexed by its timeout's number; read only after the timer stopped.
struct LatenessLog {
  explicit LatenessLog(std::size_t n) : fireNs(n), fires(n), counter(n) {}
  std::vector<std::int64_t> fireNs;
  std::vector<std::uint32_t> fires;
  FireCounter counter;
};

void requireEachFiredOnce(const LatenessLog& log) {
  const auto wrong =
      std::find_if(log.fires.begin(), log.fires.end(), [](auto f) { return f != 1; });
  require(wrong == log.fires.end(),
          fmt::format("S5: timeout #{} fired {} times", wrong - log.fires.begin(),
                      wrong == log.fires.end() ? 1 : *wrong));
  require(log.counter.count() == log.fires.size(),
          fmt::format("S5: {} fires for {} timeouts", log.counter.count(), log.fires.size()));
}

Metrics latenessMetrics(const LatenessLog& log, const std::vector<std::int64_t>& scheduledNs,
                        const std::vector<nanoseconds>& delays) {
  std::vector<double> ms(delays.size());
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const std::int64_t deadline = scheduledNs[i] + delays[i].count();
    ms[i] = static_cast<double>(log.fireNs[i] - deadline) / 1e6;
  }
  std::sort(ms.begin(), ms.end());
  return {{"p50_ms", percentileSorted(ms, 0.50)},
          {"p99_ms", percentileSorted(ms, 0.99)},
          {"p999_ms", percentileSorted(ms, 0.999)},
          {"max_ms", ms.back()},
          {"min_ms", ms.front()}};
}

// The schedule time is read right before each call, the fire time first thing in the task, both
// on steady_clock: lateness = fire - (schedule + delay). The wheel reads its own clock inside
// newTimeout(), after ours, so a negative value can only mean a truly early fire.
template <typename Impl>
Metrics s5(const RunParams& p) {
  const nanoseconds maxDelay = p.quick ? nanoseconds(100ms) : nanoseconds(1000ms);
  const auto delays = makeDelays(p.n, 10ms, maxDelay, p.seed);
  std::vector<std::int64_t> scheduledNs(p.n);
  LatenessLog log(p.n);
  Impl timer(kTick);
  for (std::uint32_t i = 0; i < p.n; ++i) {
    scheduledNs[i] = nowNs();
    timer.schedule(
        [log = &log, i] {
          log->fireNs[i] = nowNs();
          ++log->fires[i];
          log->counter.onFire();
        },
        delays[i]);
  }
  requireAllFired(log.counter.waitAll(maxDelay + kFireGrace), log.counter, p.n, "S5");
  timer.stop();  // joins the worker: its writes to `log` are visible from here on
  requireEachFiredOnce(log);
  return latenessMetrics(log, scheduledNs, delays);
}

// The CPU clock of the thread that runs the timer's tasks (its worker): a probe task reads it.
template <typename Impl>
clockid_t workerCpuClock(Impl& timer) {
  FireCounter probe(1);
  clockid_t clock{};
  bool failed = false;
  timer.schedule(
      [&probe, &clock, &failed] {
        try {
          clock = threadCpuClock();
        } catch (...) {
          failed = true;  // reported below, once the probe has fired
        }
        probe.onFire();
      },
      0ns);
  require(probe.waitAll(kFireGrace), "S7: the probe task did not run");
  require(!failed, "S7: pthread_getcpuclockid failed on the worker thread");
  return clock;  // written before onFire(), read after waitAll(): ordered by its mutex
}

// fired_per_s = N / CPU seconds spent by the timer's own threads from the first newTimeout()
// until the last task ran. That CPU is the process's (getrusage) minus the scheduling thread's
// (CLOCK_THREAD_CPUTIME_ID): the scheduling cost is S1's subject, and the main thread otherwise
// only sleeps in a blocking wait for the last fire. Per CPU-second rather than per wall-second
// because firing is bounded by the deadlines (100-200 ms), not by the timer.
// worker_cpu_ns_per_timeout = the worker thread's own CPU time (its CLOCK_THREAD_CPUTIME_ID) over
// the same span / N: everything the worker does for them (take them in, place, fire, free), as
// Netty's harness measures its worker. fire_window_ms = wall time from the first to the last fire.
template <typename Impl>
Metrics s7(const RunParams& p) {
  const auto delays = makeDelays(p.n, 100ms, 200ms, p.seed);
  FireCounter counter(p.n);
  Impl timer(kTick);
  const clockid_t worker = workerCpuClock(timer);
  const nanoseconds worker0 = cpuOfClock(worker);
  const nanoseconds proc0 = processCpu();
  const nanoseconds sched0 = threadCpu();
  for (const nanoseconds d : delays) timer.schedule([c = &counter] { c->onFire(); }, d);
  requireAllFired(counter.waitAll(200ms + kFireGrace), counter, p.n, "S7");
  const nanoseconds proc1 = processCpu();
  const nanoseconds sched1 = threadCpu();
  const nanoseconds worker1 = cpuOfClock(worker);  // before stop(): the clock dies with the thread
  timer.stop();
  require(counter.count() == p.n,
          fmt::format("S7: {} fires for {} timeouts", counter.count(), p.n));
  const nanoseconds timerCpu = (proc1 - proc0) - (sched1 - sched0);
  require(timerCpu.count() > 0, "S7: no CPU time measured for the timer's threads");
  return {
      {"fired_per_s", static_cast<double>(p.n) / (static_cast<double>(timerCpu.count()) / 1e9)},
      {"timer_cpu_ms", static_cast<double>(timerCpu.count()) / 1e6},
      {"worker_cpu_ns_per_timeout",
       static_cast<double>((worker1 - worker0).count()) / static_cast<double>(p.n)},
      {"fire_window_ms", static_cast<double>(counter.lastFireNs() - counter.firstFireNs()) / 1e6}};
}

}  // namespace

Metrics runS5(ImplKind impl, const RunParams& p) {
  return withImpl(impl, [&](auto t) { return s5<typename decltype(t)::type>(p); });
}
Metrics runS7(ImplKind impl, const RunParams& p) {
  return withImpl(impl, [&](auto t) { return s7<typename decltype(t)::type>(p); });
}

}  // namespace wheelbeat::bench
