// The driver: for every (scenario, config) row, fresh providers, the consumer's calls, T1's stops
// of provider 2, the providers' counts, one JSON line. Providers are started anew for each row so
// that every row begins from the same state (call counters at 0, nothing ejected, no connection).
#include "grpc_bench.h"
#include "provider_process.h"
#include "report.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace wheelbeat::bench::grpcbench {
namespace {

std::atomic<bool> gInterrupted{false};
std::atomic<int> gSignal{0};

extern "C" void onSignal(int sig) {
  gSignal.store(sig);
  gInterrupted.store(true);
}

// SIGINT / SIGTERM / SIGHUP only set a flag: every wait checks it, the row unwinds, and the
// destructors stop every provider before the process exits.
void installInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

using Window = std::pair<Clock::time_point, Clock::time_point>;

// T1's stops of provider 2, from a thread of its own. Stopping it (or destroying it) resumes the
// provider whatever the schedule says.
class StopSchedule {
public:
  StopSchedule(const ProviderProcess& provider, std::vector<Window> windows)
      : provider_(provider), windows_(std::move(windows)), thread_([this] { run(); }) {}
  ~StopSchedule() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
      cv_.notify_all();
    }
    thread_.join();
    provider_.resume();
  }
  StopSchedule(const StopSchedule&) = delete;
  StopSchedule& operator=(const StopSchedule&) = delete;

private:
  void run() {
    std::unique_lock lock(mutex_);
    for (const auto& [from, to] : windows_) {
      if (cv_.wait_until(lock, from, [this] { return done_; })) return;
      provider_.pause();
      fmt::print(stderr, "wheelbeat_grpc_bench:   provider 2 stopped\n");
      const bool done = cv_.wait_until(lock, to, [this] { return done_; });
      provider_.resume();
      if (done) return;
      fmt::print(stderr, "wheelbeat_grpc_bench:   provider 2 resumed\n");
    }
  }

  const ProviderProcess& provider_;
  std::vector<Window> windows_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

std::vector<Window> stopWindows(const Options& o, Clock::time_point windowStart) {
  std::vector<Window> out;
  const auto at = [&](double s) {
    return windowStart +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  for (double t = o.stopStartS; t < o.durationS && o.stopForS > 0; t += o.stopEveryS) {
    out.emplace_back(at(t), at(t + o.stopForS));
  }
  return out;
}

std::vector<std::string> providerArgs(const Options& o, Scenario s, int index) {
  // Every fault flag is given, 0 where this provider has none (their defaults are T1's).
  const bool t1 = s == Scenario::T1;
  return {"--role",           "provider",
          "--index",          std::to_string(index),
          "--parent-pid",     std::to_string(::getpid()),
          "--slow-every",     std::to_string(t1 && index == 0 ? o.slowEvery : 0),
          "--slow-ms",        std::to_string(o.slowMs),
          "--error-fraction", fmt::format("{}", t1 && index == 1 ? o.errorFraction : 0.0)};
}

ConsumerPlan planOf(const Options& o, ChannelConfig c, const std::vector<int>& ports) {
  ConsumerPlan plan;
  plan.target = "ipv4:";
  for (std::size_t i = 0; i < ports.size(); ++i) {
    plan.target += fmt::format("{}127.0.0.1:{}", i > 0 ? "," : "", ports[i]);
  }
  plan.serviceConfig = serviceConfigJson(c);
  plan.enableHedgingArg = needsHedgingArg(c);
  plan.rate = o.rate;
  plan.warmupCalls = static_cast<std::uint64_t>(std::llround(o.warmupS * o.rate));
  plan.measuredCalls = static_cast<std::uint64_t>(std::llround(o.durationS * o.rate));
  plan.deadlineMs = o.deadlineMs;
  plan.payload = o.payload;
  return plan;
}

// Stops every provider and sums the measured attempts; the per-provider figures go to stderr
// (they show where ejection and retries sent the calls). A provider counts the attempts it
// handled: one sent to a stopped provider and abandoned (deadline, per-attempt timeout) before it
// resumed is cancelled before it reaches the service, so it is not counted. Every call makes one
// first attempt, hence at least offered + retries - attempts such attempts (also on stderr).
std::uint64_t collectAttempts(std::vector<std::unique_ptr<ProviderProcess>>& providers,
                              std::uint64_t offered) {
  std::uint64_t attempts = 0;
  std::uint64_t retries = 0;
  std::string byProvider;
  for (std::size_t i = 0; i < providers.size(); ++i) {
    const ProviderCounts c = providers[i]->finish(Clock::now() + std::chrono::seconds(10));
    attempts += c.measured;
    retries += c.retried;
    byProvider += fmt::format(" p{} {} ({} retries)", i, c.measured, c.retried);
  }
  fmt::print(stderr, "wheelbeat_grpc_bench:   attempts by provider:{}\n", byProvider);
  const std::uint64_t seen = attempts - retries;  // first attempts the providers handled
  if (seen < offered) {
    fmt::print(stderr,
               "wheelbeat_grpc_bench:   attempts never handled by a provider: at least {}\n",
               offered + retries - attempts);
  }
  return attempts;
}

Row runRow(const Options& o, Scenario s, ChannelConfig c) {
  fmt::print(stderr, "wheelbeat_grpc_bench: {} {}: {} providers, {} calls/s, {} s warm-up, {} s\n",
             scenarioName(s), configName(c), o.providers, o.rate, o.warmupS, o.durationS);
  std::vector<std::unique_ptr<ProviderProcess>> providers;
  for (int i = 0; i < o.providers; ++i) {
    providers.push_back(std::make_unique<ProviderProcess>(i, providerArgs(o, s, i)));
  }
  std::vector<int> ports;
  for (auto& p : providers) ports.push_back(p->awaitPort(Clock::now() + std::chrono::seconds(10)));
  const ConsumerPlan plan = planOf(o, c, ports);
  std::unique_ptr<StopSchedule> stops;  // after `providers`: destroyed (resuming) before them
  Row row{s, c, o.providers, o.rate, o.durationS, 0, {}};
  row.result = runConsumer(plan, [&](Clock::time_point start) {
    const auto window = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(plan.warmupCalls / o.rate));
    if (s == Scenario::T1)
      stops = std::make_unique<StopSchedule>(*providers[2], stopWindows(o, window));
  });
  stops.reset();
  row.attempts = collectAttempts(providers, plan.measuredCalls);
  return row;
}

}  // namespace

bool interrupted() noexcept { return gInterrupted.load(); }

int driverMain(const Options& options) {
  installInterruptHandlers();
  try {
    for (const Scenario s : options.scenarios) {
      for (const ChannelConfig c : options.configs) {
        const Row row = runRow(options, s, c);
        fmt::print("{}\n", rowJson(row));
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    if (interrupted()) {
      fmt::print(stderr, "wheelbeat_grpc_bench: interrupted (signal {}); providers stopped\n",
                 gSignal.load());
      return 128 + gSignal.load();
    }
    fmt::print(stderr, "wheelbeat_grpc_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace wheelbeat::bench::grpcbench
