// The section owned by net/cluster/: "cluster" (cluster::ClusterOptions), calls over the providers
// of a service — its mode, balancer, outlier ejection (tasks/cluster/outlier_ejector.h), hedging
// (tasks/cluster/hedging.h), retry budget (the "retry_budget" keys) and the directory's own keys
// (registry::DirectoryOptions; its client is a copy of "client"). The rules are the layers':
// cluster::validate() across the keys, each nested object's validate() within it; tasks/cluster/
// and the directory throw plain messages, read back by plainRules() (fields.h).
#include "sections.h"

#include <array>
#include <limits>

namespace wheelbeat::config::detail {
namespace {

using O = cluster::ClusterOptions;
using X = tasks::cluster::OutlierOptions;
using D = registry::DirectoryOptions;
using tasks::cluster::BalancerKind;
using tasks::cluster::Mode;

// Type only: the ranges are the layers' rules.
constexpr IntCodec<std::uint32_t> kUint32{0, std::numeric_limits<std::uint32_t>::max(),
                                          "an integer in 0..4294967295"};
constexpr IntCodec<std::uint64_t> kSeed{0, std::numeric_limits<std::uint64_t>::max(),
                                        "an integer in 0..18446744073709551615"};
// Every mode the enum has: which of them a ServiceClient runs is cluster::validate()'s rule.
constexpr EnumCodec<Mode, 6> kMode{
    {"failover", "failfast", "failsafe", "failback", "forking", "broadcast"},
    {Mode::Failover, Mode::Failfast, Mode::Failsafe, Mode::Failback, Mode::Forking,
     Mode::Broadcast}};
// tasks::cluster::balancerKindName()'s words.
constexpr EnumCodec<BalancerKind, 5> kBalancer{
    {"p2c", "round_robin", "random", "least_active", "consistent_hash"},
    {BalancerKind::P2C, BalancerKind::RoundRobin, BalancerKind::WeightedRandom,
     BalancerKind::LeastActive, BalancerKind::ConsistentHash}};

constexpr Field<X> kOutlierFields[] = {
    field<X, &X::consecutiveFailures, kUint32>(
        "consecutive_failures", "consecutiveFailures",
        "Failures in a row (timeouts count) that eject a provider at once. 0 = off; else "
        "1..1000."),
    field<X, &X::failurePercent, kUint32>(
        "failure_percent", "failurePercent",
        "Failure share (%) over an interval that ejects a provider. 0 = off; else 1..100."),
    field<X, &X::minimumVolume, kUint32>(
        "minimum_volume", "minimumVolume",
        "Outcomes a provider needs in an interval before its failure share counts, >= 1."),
    field<X, &X::interval, kDuration>(
        "interval", "interval",
        "How often the providers are evaluated (the failure share's window), >= 1ms."),
    field<X, &X::baseEjectionTime, kDuration>(
        "base_ejection_time", "baseEjectionTime",
        "First ejection's length, >= 1ms; each repeat (not yet decayed) multiplies it."),
    field<X, &X::maxEjectionTime, kDuration>("max_ejection_time", "maxEjectionTime",
                                             "Longest ejection, >= base_ejection_time."),
    field<X, &X::maxEjectionPercent, kUint32>(
        "max_ejection_percent", "maxEjectionPercent",
        "At most floor(N * max_ejection_percent / 100) of N providers out at once, 0..100."),
    field<X, &X::allowEjectAll, kBool>(
        "allow_eject_all", "allowEjectAll",
        "Whether the cap may take the last provider too (false: one always stays)."),
    field<X, &X::suspectFactor, kNumber>(
        "suspect_factor", "suspectFactor",
        "A provider whose call has waited max(suspect_floor, suspect_factor * its typical "
        "latency) gets no new call until it answers. 0 = off; else 1..1000000."),
    field<X, &X::suspectFloor, kDuration>("suspect_floor", "suspectFloor",
                                          "The least wait that makes a provider suspect, >= 0."),
};

constexpr Section<X> kOutlierSection{
    kOutlierFields, [](const X& o) { plainRules([&] { tasks::cluster::validate(o); }); },
    "max_ejection_time >= base_ejection_time"};

constexpr auto kFixed = [](auto& o) -> auto& { return o.hedgeDelay.fixed; };
constexpr auto kPercentile = [](auto& o) -> auto& { return o.hedgeDelay.percentile; };
constexpr auto kFloor = [](auto& o) -> auto& { return o.hedgeDelay.floor; };
constexpr auto kWindow = [](auto& o) -> auto& { return o.hedgeDelay.window; };
constexpr auto kMinSamples = [](auto& o) -> auto& { return o.hedgeDelay.minSamples; };

// Hedging's keys are members of ClusterOptions itself (hedge, hedgeDelay, maxExtraPercent).
constexpr Field<O> kHedgingFields[] = {
    field<O, &O::hedge, kBool>(
        "enabled", "hedge",
        "A call still waiting after the hedge delay gets one more attempt on another provider; "
        "the first success wins. Failover and failfast only; each hedge spends a budget token."),
    field<O, kFixed, kDuration>("delay", "hedgeDelay.fixed",
                                "> 0: always this delay. 0: adaptive (percentile, floor, window, "
                                "min_samples)."),
    field<O, kPercentile, kNumber>(
        "percentile", "hedgeDelay.percentile",
        "Adaptive: the percentile of the attempts' latencies over the window, 50 <= percentile "
        "< 100."),
    field<O, kFloor, kDuration>("floor", "hedgeDelay.floor",
                                "Adaptive: the delay is never below this, >= 0."),
    field<O, kWindow, kDuration>("window", "hedgeDelay.window",
                                 "Adaptive: the latencies observed over this time, >= 10ms."),
    field<O, kMinSamples, kUint32>(
        "min_samples", "hedgeDelay.minSamples",
        "Adaptive: no hedge until the window holds this many latencies, >= 1."),
    field<O, &O::maxExtraPercent, kNumber>(
        "max_extra_percent", "maxExtraPercent",
        "Hedges stay within this share (%) of the last second's calls, 0..100 (retries are "
        "bounded by the budget alone)."),
};

// Hedging's own rules: its members checked with the rest of the options at their defaults (the
// rules across sections, e.g. hedging with the mode, are the cluster section's).
void validateHedging(const O& o) {
  plainRules([&] {
    try {
      tasks::cluster::validate(o.hedgeDelay);
    } catch (const std::invalid_argument& e) {
      throw optionErrorOf(e.what()).within("ClusterOptions", "hedgeDelay");
    }
  });
  O alone;
  alone.hedge = o.hedge;
  alone.hedgeDelay = o.hedgeDelay;
  alone.maxExtraPercent = o.maxExtraPercent;
  plainRules([&] { cluster::validate(alone); });
}

constexpr Section<O> kHedgingSection{kHedgingFields, validateHedging};

constexpr Field<D> kDirectoryFields[] = {
    field<D, &D::emptyProtection, kBool>(
        "empty_protection", "emptyProtection",
        "An empty provider list is held back (the last one kept) while the registry is not "
        "trusted."),
    field<D, &D::leaveDrain, kDuration>(
        "leave_drain", "leaveDrain",
        "How long calls in flight to a provider that left may still finish before its client "
        "closes, >= 0 (0 = at once)."),
    field<D, &D::protectionWindow, kDuration>(
        "protection_window", "protectionWindow",
        "How long after the registry link came back an empty list is still distrusted, >= 0 "
        "(usually registry.session)."),
    field<D, &D::minHeartbeat, kDuration>("min_heartbeat", "minHeartbeat",
                                          "Least heartbeat a provider may advertise, > 0."),
    field<D, &D::maxHeartbeat, kDuration>(
        "max_heartbeat", "maxHeartbeat",
        "Largest heartbeat a provider may advertise, >= min_heartbeat."),
};

constexpr Section<D> kDirectorySection{
    kDirectoryFields, [](const D& o) { plainRules([&] { registry::validate(o); }); },
    "max_heartbeat >= min_heartbeat"};

constexpr Field<O> kClusterFields[] = {
    field<O, &O::mode, kMode>(
        "mode", "mode",
        "Dubbo's cluster mode. failover: a retryable failure is retried on another provider; "
        "failfast: one attempt; failsafe: a failure becomes an empty success; forking: forks "
        "attempts at once, the first success wins; broadcast: every provider, ok when all "
        "succeeded; failback: a failure becomes an empty success and the call is retried in the "
        "background as \"failback\" says (invocation_retry, max_pending_retries)."),
    field<O, &O::retries, kUint32>("retries", "retries",
                                   "Failover: attempts after the first, 0..100 (Dubbo: 2)."),
    field<O, &O::forks, kUint32>("forks", "forks", "Forking: attempts at once, 1..100."),
    field<O, &O::deadline, kDuration>(
        "deadline", "deadline",
        "Each call's deadline (unless the call gives its own), > 0: at it the call ends with "
        "\"timeout\"."),
    field<O, &O::attemptTimeout, kDuration>(
        "attempt_timeout", "attemptTimeout",
        "Each attempt's timeout, at most the time left; 0 = the time left."),
    field<O, &O::balancer, kBalancer>(
        "balancer", "balancer",
        "Which provider an attempt goes to: p2c (two drawn by weight, the lower latency x load "
        "wins), round_robin (smooth weighted), random (by weight), least_active (fewest calls in "
        "flight), consistent_hash (by the call's hash key)."),
    field<O, &O::seed, kSeed>("seed", "seed", "Seed of the balancer's draws."),
    field<O, &O::outlier, kOutlierSection>(
        "outlier", "outlier",
        "Outlier ejection (tasks::cluster::OutlierOptions): providers that fail or stall get no "
        "calls for a while."),
    spanField<O, kHedgingSection>("hedging", "hedge",
                                  "Hedging and the cap on extra attempts (hedge, hedgeDelay: "
                                  "tasks::cluster::HedgeDelayOptions, maxExtraPercent)."),
    field<O, &O::budget, kRetryBudgetSection>(
        "budget", "budget",
        "The service's tokens for retries and hedges (tasks::RetryBudgetOptions, the keys of "
        "retry_budget)."),
    field<O, &O::directory, kDirectorySection>(
        "directory", "directory",
        "How the providers are followed (registry::DirectoryOptions); each provider's client is "
        "configured by \"client\"."),
};

}  // namespace

constexpr Section<O> kClusterSection{
    kClusterFields, [](const O& o) { plainRules([&] { cluster::validate(o); }); },
    "hedging.enabled needs mode failover or failfast and a budget that can give a token"};

}  // namespace wheelbeat::config::detail
