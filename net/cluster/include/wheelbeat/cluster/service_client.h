// ServiceClient: calls to a service over every provider the registry lists — Dubbo's cluster
// invoker in the library. It follows the providers through a registry::Directory (one client per
// provider), and for each call decides where each attempt goes (tasks/cluster/: balancer, outlier
// ejection, hedging, Dubbo's cluster modes), all within the call's deadline and one retry budget
// for the service.
//
//   cluster::ServiceClient client(loop, timer, *registry, "org.example.Greeter", options);
//   client.start();
//   client.call(body, {}, [](const cluster::CallOutcome& o) {
//     if (o.ok) use(o.response.body); else log(o.error, o.attempts);
//   });
//   client.close();
//
// What a call gets: the provider's answer (the first success among its attempts), or the shared
// error name (tasks/error_names.h) of why there is none: "timeout" (the deadline passed),
// "no-endpoint" (no provider available), or the last attempt's error. A response with a Dubbo
// error status counts as that error (net::errorName()): 100 (busy) is retried by failover, an
// application's error (status 70, ...) is returned at once.
//
// Failback mode (Dubbo's): a call whose attempt failed ends at once as an empty success
// (CallOutcome::failback, `error` says what failed) and is retried in the background by a
// tasks::FailbackInvoker (ClusterOptions::failback: delays, at most maxPendingRetries held; each
// retry on a provider other than the one that failed last, from the service's retry budget).
// CallOptions::failbackDone hears how it ended; close() hands back the calls still waiting.
//
// Per provider the client keeps a latency estimate (peak EWMA of its answers), its calls in
// flight, and its weight (the url's `weight`, default 100, warmed up over `warmup` ms from the
// url's `timestamp`, as Dubbo). A provider whose calls wait far beyond its own latency becomes
// suspect and gets no new call until it answers (OutlierEjector). `hashKey` in CallOptions routes
// a call with the ConsistentHash balancer.
//
// Timing: the deadline and the hedge delay are timeouts on `timer`: their resolution is its tick
// (use a wheel of 1-5 ms ticks for hedge delays of a few ms). Each attempt is a
// Channel::request() with the time left (at most attemptTimeout).
//
// Threads: call() from any thread (the call starts on the loop thread); `done` runs on the loop
// thread, exactly once per accepted call. start(), close() and the destructor: any thread but a
// callback of this client; close() waits for the loop to run the calls' ends: every call still
// running ends with "disconnected" before close() returns. Lifetime: loop, timer and registry
// must outlive the client (a timer destroyed first ends the process naming this client).
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/metrics.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/directory.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/tasks/cluster/balancer.h>
#include <wheelbeat/tasks/cluster/call_machine.h>
#include <wheelbeat/tasks/cluster/hedging.h>
#include <wheelbeat/tasks/cluster/outlier_ejector.h>
#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/retry_budget.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::cluster {

// Plain options (config/ parses JSON into this struct).
struct ClusterOptions {
  // Failover (default), Failfast, Failsafe, Failback, Forking or Broadcast (call_machine.h).
  tasks::cluster::Mode mode = tasks::cluster::Mode::Failover;
  std::uint32_t retries = 2;  // failover: Dubbo's default (three attempts in all)
  std::uint32_t forks = 2;    // forking
  std::chrono::nanoseconds deadline = std::chrono::seconds(1);  // per call, unless CallOptions'
  std::chrono::nanoseconds attemptTimeout{0};                   // 0: the time left
  tasks::cluster::BalancerKind balancer = tasks::cluster::BalancerKind::P2C;
  tasks::cluster::OutlierOptions outlier{};
  // Hedging (failover and failfast): after the delay, one more attempt on another provider. Needs
  // a budget that can give a token (budget.ratio > 0 or budget.minRetriesPerSecond > 0).
  bool hedge = false;
  tasks::cluster::HedgeDelayOptions hedgeDelay{};
  // Hedges <= this share (%) of the last second's calls (below 20 calls a second the default 5 %
  // allows none). Retries are bounded by `budget` alone.
  double maxExtraPercent = 5;
  tasks::RetryBudgetOptions budget{};  // the service's tokens for retries, hedges, failback
  // Failback mode: a failed call is held and retried in the background (tasks::FailbackInvoker:
  // invocationRetry, Dubbo's 3 retries 5 s apart; at most maxPendingRetries held at once).
  tasks::FailbackOptions failback{};
  registry::DirectoryOptions directory{};
  std::uint64_t seed = 0;  // the balancer's draws
};

// Throws std::invalid_argument naming the field: a core::OptionError for ClusterOptions' own rules
// (mode, maxExtraPercent, budget.*, hedge with no budget token) and the nested structs' own
// messages otherwise. Thread: any.
void validate(const ClusterOptions& options);

struct CallOptions {
  std::optional<std::chrono::nanoseconds> deadline;  // instead of ClusterOptions::deadline
  std::uint64_t hashKey = 0;                         // ConsistentHash's key
  std::uint8_t serialization = net::kHessian2;
  // Failback mode (optional): the background retries' final outcome — ok, the last failure after
  // the policy gave up, or "failback-rejected" — from the loop or the wheel thread. Not called
  // for a call handed back by close().
  tasks::Completion failbackDone;
};

struct CallOutcome {
  bool ok = false;
  std::string error;         // the shared error name; empty when ok
  std::string provider;      // the url of the provider whose answer decided (may be empty)
  net::CallResult response;  // that answer (status byte, body), when one decided
  std::uint32_t attempts = 0;
  bool hedgeWon = false;
  bool failsafe = false;  // failsafe mode swallowed `error`
  bool failback = false;  // failback mode: `error` handed to background retries (ok is true)
  std::chrono::nanoseconds latency{0};
};
using CallDone = std::function<void(const CallOutcome&)>;

class ServiceClient {
public:
  // Throws std::invalid_argument for an empty service or invalid options.
  ServiceClient(net::EventLoop& loop, core::HashedWheelTimer& timer, registry::Registry& registry,
                std::string service, ClusterOptions options);
  ~ServiceClient();  // close(); the failback calls it hands back are dropped (logged)
  ServiceClient(const ServiceClient&) = delete;
  ServiceClient& operator=(const ServiceClient&) = delete;

  // Subscribes to the service (the directory's start()).
  void start();
  // A failback call close() took back before its retries ended (what never ran is not lost).
  struct HeldCall {
    std::string body;
    CallOptions options;
    std::string lastProvider;  // the url that failed last
    std::int64_t retries = 0;  // background retries already made
  };
  // Ends every running call with "disconnected", stops the failback retries (handing back the
  // calls still waiting for one; those with a retry in flight end with its outcome), unsubscribes
  // and closes every provider's client. Idempotent (a second close() returns nothing); later
  // call()s are refused.
  std::vector<HeldCall> close();

  // Starts a call. Throws std::logic_error after close(), std::invalid_argument for an empty
  // `done`, a deadline <= 0 or a body larger than the provider clients' codec.maxBody (nothing
  // started, nothing changed).
  void call(std::string body, CallOptions options, CallDone done);

  struct Stats {
    std::uint64_t calls = 0;  // started
    std::uint64_t ok = 0;     // ended with a success (failsafe's empty ones not counted)
    std::uint64_t failed = 0;
    std::uint64_t failsafe = 0;  // failures failsafe turned into empty successes
    std::uint64_t failback = 0;  // failures handed to failback (empty successes)
    // The failback retries: failures seen (first attempts included), retries scheduled,
    // recovered, given up (budget included), rejected (maxPendingRetries).
    tasks::FailbackMetricsSnapshot failbackRetries{};
    std::uint64_t failbackPending = 0;        // failed calls held for a retry now
    std::array<std::uint64_t, 3> attempts{};  // by AttemptKind: first, retry, hedge
    // Extra attempts not sent, [retry | hedge][no budget token | over the load cap].
    std::array<std::array<std::uint64_t, 2>, 2> extraRefused{};
    std::uint64_t hedgesWon = 0;
    std::uint64_t lateAnswers = 0;             // answers of dropped attempts, discarded
    std::array<std::uint64_t, 3> ejections{};  // by EjectReason
    std::uint64_t providers = 0;               // followed now
    std::uint64_t providersOut = 0;            // ejected or suspect now (as of the last check)
  };
  // Any thread.
  [[nodiscard]] Stats stats() const;
  // wheelbeat_cluster_* (core/metrics.h) from stats(); several clients add up. Any thread.
  void writeMetrics(core::MetricsWriter& out) const;
  // Each provider followed now and its latency estimate (peak EWMA of its answers; 0 before
  // the first). Any thread (as of the last call or sweep).
  struct ProviderFigure {
    std::string url;
    std::chrono::nanoseconds latency{0};
    std::uint64_t inFlight = 0;
  };
  [[nodiscard]] std::vector<ProviderFigure> providerFigures() const;
  // Providers listed now, and of them available (connected, not ejected, not suspect). Any thread.
  [[nodiscard]] std::size_t providers() const;
  [[nodiscard]] std::size_t available() const;

  class Impl;

private:
  core::Users::Use timerUse_;  // the timer must outlive this client (core/users.h)
  core::Users::Use loopUse_;   // and so must the loop
  std::shared_ptr<Impl> impl_;
};

}  // namespace wheelbeat::cluster
