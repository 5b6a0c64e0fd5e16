// T0 / T1's open-loop load (t1_load.h).
#include "t1_load.h"

#include "../proc_stats.h"
#include "proto.h"
#include "t1.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <mutex>

namespace wheelbeat::bench::netbench {

using namespace std::chrono_literals;

struct OpenLoop::State {
  explicit State(std::int64_t measured) : measuredCalls(measured) {}

  // Every measured call ended: all of them, or (the pacing cut short) all that were issued.
  [[nodiscard]] bool allEnded() const {
    return endedCalls == measuredCalls || (paced && endedCalls == r.issued);
  }

  // Loop thread: one call's outcome.
  void ended(Clock::time_point scheduled, bool measured, const cluster::CallOutcome& o) {
    const auto now = Clock::now();
    if (!measured) return;
    const std::lock_guard lock(mutex);
    r.latencyNs.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - scheduled).count());
    if (o.ok) {
      ++r.ok;
    } else {
      ++r.failed;
      ++r.failedByError[o.error.empty() ? "unnamed" : o.error];
    }
    r.attempts += o.attempts;
    r.hedgesWon += o.hedgeWon ? 1 : 0;
    ++endedCalls;
    if (allEnded()) endedChanged.notify_all();
  }

  const std::int64_t measuredCalls;
  mutable std::mutex mutex;              // guards everything below
  std::condition_variable endedChanged;  // the driver's: allEnded()
  std::atomic<bool> stopping{false};     // read by the pacing thread between its sleeps
  bool paced = false;                    // the pacing thread issued its last call (or stopped)
  std::int64_t endedCalls = 0;
  LoadResults r;
};

Clock::time_point LoadPlan::at(std::int64_t k) const {
  const double ns = static_cast<double>(k) * 1e9 / rate;
  return t0 + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(ns))));
}

OpenLoop::OpenLoop(Caller& client, LoadPlan plan)
    : client_(client), plan_(plan), state_(std::make_shared<State>(plan.measuredCalls)) {
  state_->r.latencyNs.reserve(static_cast<std::size_t>(plan.measuredCalls));
}

OpenLoop::~OpenLoop() { stop(); }

void OpenLoop::start() {
  thread_ = std::thread([this] { pace(); });
}

bool OpenLoop::waitMeasured(Clock::time_point until) {
  std::unique_lock lock(state_->mutex);
  return state_->endedChanged.wait_until(lock, until, [&] { return state_->allEnded(); });
}

void OpenLoop::stop() {
  state_->stopping.store(true);
  if (thread_.joinable()) thread_.join();
}

namespace {

// Sleeps until `t` with one clock_nanosleep (steady_clock is CLOCK_MONOTONIC on Linux): no lock
// and no condition variable on the pacing path, whose wake-ups are most of its CPU. Wakes at
// least every 100 ms to see `stopping`. False when stopping.
bool sleepUntil(Clock::time_point t, const std::atomic<bool>& stopping) {
  for (;;) {
    if (stopping.load(std::memory_order_relaxed)) return false;
    const Clock::time_point step = std::min(t, Clock::now() + 100ms);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(step.time_since_epoch());
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ns.count() / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(ns.count() % 1'000'000'000);
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
    if (step >= t) return !stopping.load(std::memory_order_relaxed);
  }
}

}  // namespace

LoadResults OpenLoop::results() const {
  LoadResults r;
  {
    const std::lock_guard lock(state_->mutex);
    r = state_->r;
  }
  std::sort(r.latencyNs.begin(), r.latencyNs.end());
  return r;
}

// The pacing thread. A call is issued at its scheduled time, or at once if that has passed: a
// late start is counted, never skipped, and its latency still runs from its scheduled time.
void OpenLoop::pace() {
  State& s = *state_;
  std::string body(static_cast<std::size_t>(plan_.payloadBytes), 'x');
  cluster::CallOptions options;
  options.deadline = plan_.deadline;
  const std::int64_t total = plan_.warmupCalls + plan_.measuredCalls;
  std::chrono::nanoseconds pacingCpuStart{-1};
  for (std::int64_t k = 0; k < total; ++k) {
    const Clock::time_point at = plan_.at(k);
    const bool measured = k >= plan_.warmupCalls;
    if (at > Clock::now() && !sleepUntil(at, s.stopping)) break;
    if (s.stopping.load(std::memory_order_relaxed)) break;
    {
      const std::lock_guard lock(s.mutex);
      if (k == plan_.warmupCalls) {  // the window opens: the process's CPU and the client's counts
        s.r.cpuStart = processCpu();
        s.r.statsStart = client_.stats();
        s.r.loadStart = loadAverage1m();
        pacingCpuStart = threadCpu();
      }
      if (measured) ++s.r.issued;  // before call(): its outcome may come at once
    }
    body.front() = measured ? kT1MeasuredMark : kT1WarmupMark;
    const Clock::time_point started = Clock::now();
    try {
      client_.call(body, options, [state = state_, at, measured](const cluster::CallOutcome& o) {
        state->ended(at, measured, o);
      });
    } catch (const std::exception& e) {  // the client closed under the run: stop issuing
      fmt::print(stderr, "wheelbeat_net_bench: call {} not started: {}\n", k, e.what());
      const std::lock_guard lock(s.mutex);
      if (measured) --s.r.issued;
      break;
    }
    if (!measured) continue;
    const std::int64_t lag =
        std::chrono::duration_cast<std::chrono::nanoseconds>(started - at).count();
    const std::lock_guard lock(s.mutex);
    s.r.lateStarts += lag > 1'000'000 ? 1 : 0;
    s.r.maxStartLagNs = std::max(s.r.maxStartLagNs, lag);
    s.r.lastStart = started;
  }
  const std::chrono::nanoseconds pacingCpuEnd = threadCpu();
  {
    const std::lock_guard lock(s.mutex);
    s.paced = true;
    if (pacingCpuStart.count() >= 0) s.r.pacingCpu = pacingCpuEnd - pacingCpuStart;
  }
  s.endedChanged.notify_all();
}

}  // namespace wheelbeat::bench::netbench
