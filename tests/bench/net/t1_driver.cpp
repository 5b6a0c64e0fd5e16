// T0 / T1's driver (t1.h): per (scenario, config), a registry node and a cluster client in this
// process, N provider processes, the open-loop load, provider 2's pauses, then the line.
//
// Exit paths: the providers are ChildProcesses (EOF on stdin: they quit; SIGKILL if this
// process dies: PR_SET_PDEATHSIG). A stopped process quits on neither EOF nor anything but
// SIGKILL, so every path out of a run (its end, an error, SIGINT / SIGTERM) first sends SIGCONT
// to every provider (Providers' destructor), then reaps them.
#include "../proc_stats.h"
#include "child_process.h"
#include "t1.h"
#include "t1_consumer.h"
#include "t1_load.h"
#include "t1_raw_consumer.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <thread>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;

constexpr int kStoppedProvider = 2;

Clock::time_point after(Clock::time_point t, double secs) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
}

// The faults of a scenario: T0 has none.
T1Faults faultsOf(const std::string& scenario, const T1Config& c) {
  if (scenario == "T1") return c.faults;
  return T1Faults{.slowEvery = 0,
                  .slowMs = c.faults.slowMs,
                  .errorFraction = 0,
                  .stopForS = 0,
                  .stopEveryS = c.faults.stopEveryS,
                  .stopStartS = 0};
}

struct Providers {
  std::vector<std::unique_ptr<ChildProcess>> children;
  std::vector<std::uint16_t> ports;  // each one's, from its "ready" line

  // SIGCONT before EOF: a stopped provider could not quit.
  ~Providers() {
    for (auto& c : children) ::kill(c->pid(), SIGCONT);
    const auto deadline = Clock::now() + 20s;
    for (auto& c : children) (void)c->finish(deadline);
  }

  // Each provider's own faults only: the slow answers on 0, the errors on 1.
  void spawn(const T1Config& c, const T1Faults& f, std::uint16_t registryPort) {
    for (int i = 0; i < c.providers; ++i) {
      std::vector<std::string> args{
          "--scenario",       "T1",
          "--role",           "provider",
          "--proc-index",     std::to_string(i),
          "--registry-port",  std::to_string(registryPort),
          "--slow-every",     std::to_string(i == 0 ? f.slowEvery : 0),
          "--slow-ms",        std::to_string(f.slowMs),
          "--error-fraction", fmt::format("{}", i == 1 ? f.errorFraction : 0.0)};
      if (!c.marker.empty()) args.insert(args.end(), {"--marker", c.marker});
      children.push_back(std::make_unique<ChildProcess>(fmt::format("provider {}", i), args));
    }
    for (auto& child : children) {
      const Kv ready = parseKv(child->readLine(Clock::now() + 20s), "ready");
      ports.push_back(static_cast<std::uint16_t>(kvAt(ready, "port")));
    }
  }

  // Every provider's "measured" count; each sampled after the previous answered.
  std::vector<std::int64_t> measured() {
    std::vector<std::int64_t> counts;
    for (auto& child : children) {
      counts.push_back(kvAt(parseKv(child->ask("stats", Clock::now() + 10s), "stats"), "measured"));
    }
    return counts;
  }
};

// Provider 2's pauses in the window: SIGSTOP at window + start + k x every (while inside the
// window), SIGCONT stopFor later. Applied by the driver's thread as their times come.
struct Pauses {
  struct Event {
    Clock::time_point at;
    int signal;
  };
  std::deque<Event> events;
  pid_t pid = -1;
  std::int64_t stops = 0;
  std::string run;

  Pauses(const T1Faults& f, const LoadPlan& plan, double durationS, pid_t target, std::string r)
      : pid(target), run(std::move(r)) {
    if (f.stopForS <= 0 || pid <= 0) return;
    const Clock::time_point end = after(plan.windowStart(), durationS);
    for (double t = f.stopStartS;; t += f.stopEveryS) {
      const Clock::time_point stop = after(plan.windowStart(), t);
      if (stop >= end) break;
      events.push_back({stop, SIGSTOP});
      events.push_back({after(stop, f.stopForS), SIGCONT});
    }
  }
  [[nodiscard]] Clock::time_point next(Clock::time_point otherwise) const {
    return events.empty() ? otherwise : std::min(otherwise, events.front().at);
  }
  void applyDue(Clock::time_point now) {
    while (!events.empty() && events.front().at <= now) {
      const int sig = events.front().signal;
      events.pop_front();
      if (::kill(pid, sig) != 0) continue;
      stops += sig == SIGSTOP ? 1 : 0;
      fmt::print(stderr, "wheelbeat_net_bench: {}: provider {} {}\n", run, kStoppedProvider,
                 sig == SIGSTOP ? fmt::format("stopped ({})", stops) : "continued");
    }
  }
};

// Waits for every measured call to end, carrying out the pauses on time; bounded by the
// window's end + the deadline + 10 s, and checked for SIGINT / SIGTERM every 50 ms.
void awaitCalls(OpenLoop& load, Pauses& pauses, Clock::time_point bound) {
  while (true) {
    const auto now = Clock::now();
    pauses.applyDue(now);
    if (interrupted()) throw Interrupted();
    if (now >= bound) throw std::runtime_error("the measured calls did not all end in time");
    if (load.waitMeasured(pauses.next(std::min(bound, now + 50ms)))) return;
  }
}

// The providers' measured requests, once they have read every attempt the outcomes counted (a
// provider SIGCONTed at the window's end still has requests in its socket): at most 5 s.
std::vector<std::int64_t> providerAttempts(Providers& providers, std::int64_t clientAttempts) {
  const auto deadline = Clock::now() + 5s;
  while (true) {
    std::vector<std::int64_t> counts = providers.measured();
    std::int64_t sum = 0;
    for (const auto n : counts) sum += n;
    if (sum >= clientAttempts || Clock::now() >= deadline) return counts;
    if (interrupted()) throw Interrupted();
    std::this_thread::sleep_for(20ms);  // a few rounds of 8 pipe questions, not a busy loop
  }
}

std::int64_t quantileNs(const std::vector<std::int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];  // nearest rank
}

std::map<std::string, std::int64_t> clientDeltas(const cluster::ServiceClient::Stats& a,
                                                 const cluster::ServiceClient::Stats& b) {
  const auto d = [](std::uint64_t x, std::uint64_t y) { return static_cast<std::int64_t>(y - x); };
  return {{"retries", d(a.attempts[1], b.attempts[1])},
          {"hedges", d(a.attempts[2], b.attempts[2])},
          {"retries_refused", d(a.extraRefused[0][0], b.extraRefused[0][0]) +
                                  d(a.extraRefused[0][1], b.extraRefused[0][1])},
          {"hedges_refused", d(a.extraRefused[1][0], b.extraRefused[1][0]) +
                                 d(a.extraRefused[1][1], b.extraRefused[1][1])},
          {"hedges_refused_by_budget", d(a.extraRefused[1][0], b.extraRefused[1][0])},
          {"hedges_refused_by_load_cap", d(a.extraRefused[1][1], b.extraRefused[1][1])},
          {"late_answers", d(a.lateAnswers, b.lateAnswers)},
          {"ejections_consecutive", d(a.ejections[0], b.ejections[0])},
          {"ejections_percentage", d(a.ejections[1], b.ejections[1])},
          {"ejections_suspect", d(a.ejections[2], b.ejections[2])}};
}

void fill(T1Measurement& m, const LoadResults& r, const LoadPlan& plan) {
  m.ok = r.ok;
  m.failed = r.failed;
  m.failedByError = r.failedByError;
  m.attemptsClient = r.attempts;
  m.hedgesWon = r.hedgesWon;
  m.p50Ns = quantileNs(r.latencyNs, 0.50);
  m.p99Ns = quantileNs(r.latencyNs, 0.99);
  m.p999Ns = quantileNs(r.latencyNs, 0.999);
  m.maxNs = r.latencyNs.empty() ? 0 : r.latencyNs.back();
  m.lateStarts = r.lateStarts;
  m.maxStartLagNs = r.maxStartLagNs;
  // Calls started per second: the window's calls over the time from its start to the last
  // one's actual start, plus one interval (the rate when the pacing kept its schedule).
  const double span =
      std::chrono::duration<double>(r.lastStart - plan.windowStart()).count() + 1 / plan.rate;
  m.achievedRate = r.issued > 0 && span > 0 ? static_cast<double>(r.issued) / span : 0;
  m.loadStart = r.loadStart;
}

T1Measurement runOne(const T1Config& c, const std::string& scenario, const std::string& name) {
  const std::string run = fmt::format("{} {}", scenario, name);
  fmt::print(stderr,
             "wheelbeat_net_bench: {}: {} providers, {} calls/s, warm-up {} s, window {} s\n", run,
             c.providers, c.rate, c.warmupS, c.durationS);
  T1Measurement m;
  m.scenario = scenario;
  m.config = name;
  m.run = c;
  m.run.faults = faultsOf(scenario, c);
  T1Consumer consumer;
  Providers providers;
  providers.spawn(c, m.run.faults, consumer.registryPort());
  std::unique_ptr<Caller> caller;
  if (name == kT1RawConfig) {
    caller = std::make_unique<RawConsumer>(providers.ports);
  } else {
    consumer.connect(t1ClusterOptions(name, c), c.providers);
    caller = std::make_unique<ClusterCaller>(consumer.client());
  }
  LoadPlan plan{.rate = c.rate,
                .warmupCalls = std::llround(c.warmupS * c.rate),
                .measuredCalls = std::max<std::int64_t>(1, std::llround(c.durationS * c.rate)),
                .t0 = Clock::now() + 20ms,
                .deadline = std::chrono::milliseconds(c.deadlineMs),
                .payloadBytes = c.payloadBytes};
  m.offered = plan.measuredCalls;
  const pid_t stopped = static_cast<int>(providers.children.size()) > kStoppedProvider
                            ? providers.children[kStoppedProvider]->pid()
                            : -1;
  Pauses pauses(m.run.faults, plan, c.durationS, stopped, run);
  OpenLoop load(*caller, plan);
  load.start();
  fmt::print(stderr, "wheelbeat_net_bench: {}: calls started\n", run);
  awaitCalls(load, pauses, after(plan.windowStart(), c.durationS + c.deadlineMs / 1e3 + 10));
  const std::chrono::nanoseconds cpuEnd = processCpu();  // first: results() sorts
  const auto statsEnd = caller->stats();
  m.loadEnd = loadAverage1m();
  load.stop();
  for (auto& child : providers.children) ::kill(child->pid(), SIGCONT);
  m.stops = pauses.stops;
  const LoadResults r = load.results();
  m.cpuNs = (cpuEnd - r.cpuStart).count();
  m.pacingCpuNs = r.pacingCpu.count();
  fill(m, r, plan);
  m.clientDeltas = clientDeltas(r.statsStart, statsEnd);
  m.providerAttempts = providerAttempts(providers, r.attempts);
  for (const auto n : m.providerAttempts) m.attempts += n;
  return m;
}

}  // namespace

int t1DriverMain(const T1Config& config) {
  installInterruptHandlers();
  try {
    for (const auto& scenario : config.scenarios) {
      for (const auto& name : config.configs) {
        if (name == kT1RawConfig && scenario != "T0") {
          fmt::print(stderr, "wheelbeat_net_bench: {} {}: skipped (the floor runs in T0 only)\n",
                     scenario, name);
          continue;
        }
        fmt::print("{}\n", t1Line(runOne(config, scenario, name)));
        (void)std::fflush(stdout);
      }
    }
    return 0;
  } catch (const Interrupted&) {
    fmt::print(stderr, "wheelbeat_net_bench: interrupted; every provider is stopped\n");
    return 130;
  }
}

}  // namespace wheelbeat::bench::netbench
