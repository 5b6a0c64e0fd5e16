// Sections owned by tasks/: "heartbeat" (heartbeat, idle, close, reconnect, failure detector) and
// "failback".
#include "sections.h"

#include <array>
#include <limits>

namespace wheelbeat::config::detail {
namespace {

using tasks::DetectorKind;
using F = tasks::FailbackOptions;
using H = tasks::HeartbeatOptions;
using P = tasks::PhiOptions;

constexpr Field<P> kPhiFields[] = {
    field<P, &P::threshold, kNumber>(
        "threshold", "threshold",
        "Suspect the connection at phi >= threshold (phi = 8: a 1e-8 chance that a frame is "
        "still coming); > 0."),
    field<P, &P::minStdDeviation, kDuration>(
        "min_std_deviation", "minStdDeviation",
        "Floor of the inter-arrival times' standard deviation, > 0."),
    field<P, &P::acceptablePause, kDuration>(
        "acceptable_pause", "acceptablePause",
        "Added to the mean inter-arrival time (GC pauses, a loaded host), >= 0."),
    field<P, &P::window, kSize>("window", "window",
                                "Inter-arrival samples kept per channel, 1..100000."),
};

constexpr Section<P> kPhiSection{kPhiFields, [](const P& o) { tasks::validate(o); }};

constexpr IntCodec<std::uint64_t> kSeed{
    0, std::numeric_limits<std::uint64_t>::max(),
    "an integer in 0..18446744073709551615 (0: a random seed per task)"};
constexpr EnumCodec<DetectorKind, 2> kDetector{{"fixed", "phi"},
                                               {DetectorKind::Fixed, DetectorKind::Phi}};

constexpr Field<H> kHeartbeatFields[] = {
    field<H, &H::interval, kDuration>(
        "interval", "interval",
        "Heartbeat interval, at least 2 wheel ticks (2 * wheel.tick; Dubbo: 60s)."),
    field<H, &H::idleTimeout, kDuration>(
        "idle_timeout", "idleTimeout",
        "A connection read-idle this long is dead (client reconnects). 0 = 3 * interval; "
        "otherwise >= 2 * interval and at least 2 wheel ticks."),
    field<H, &H::closeTimeout, kDuration>(
        "close_timeout", "closeTimeout",
        "Server: a channel idle longer than this is closed. 0 = idle_timeout (after its own "
        "default); otherwise at least 2 wheel ticks."),
    field<H, &H::reconnect, kPolicy>(
        "reconnect", "reconnect",
        "Delay between reconnect attempts (error names: \"disconnected\", \"read-idle\"). "
        "Defaults: gRPC's backoff (1s, x1.6, +-20%, 2m cap, forever)."),
    field<H, &H::seed, kSeed>("seed", "seed",
                              "Seed of the reconnect jitter; 0 = a fresh random seed per task."),
    field<H, &H::detector, kDetector>(
        "detector", "detector",
        "Which rule finds a silent connection dead. fixed: read idle >= idle_timeout (client) / "
        "close_timeout (server). phi: also as soon as the channel's phi-accrual detector reaches "
        "phi.threshold, checked every interval / 3; the fixed timeouts stay the upper bound."),
    field<H, &H::phi, kPhiSection>(
        "phi", "phi",
        "The phi-accrual failure detector (tasks::PhiOptions), used when detector is \"phi\". "
        "Defaults are Akka's."),
    field<H, &H::spreadFirst, kBool>(
        "spread_first", "spreadFirst",
        "Client: the first heartbeat of each connection at a random point of its first interval "
        "(channels that connect together then beat spread over the interval, not in the same few "
        "ticks); at most one heartbeat more per connect. false (the default): only once idle >= "
        "interval."),
};

constexpr Field<F> kFailbackFields[] = {
    field<F, &F::check, kBool>("check", "check",
                               "Dubbo's check=true: a call whose first attempt fails is not "
                               "retried (its failure goes to the caller)."),
    field<F, &F::registryRetry, kPolicy>(
        "registry_retry", "registryRetry",
        "Registry re-registration retries. An inline object starts from: fixed 5s, no jitter, "
        "forever."),
    field<F, &F::invocationRetry, kPolicy>(
        "invocation_retry", "invocationRetry",
        "Failed invocation retries. An inline object starts from: fixed 5s, no jitter, at most "
        "3."),
    field<F, &F::maxPendingRetries, kInt64>(
        "max_pending_retries", "maxPendingRetries",
        "Invocations held for retry at once (Dubbo's failbacktasks), >= 1."),
};

}  // namespace

constexpr Section<H> kHeartbeatSection{kHeartbeatFields, [](const H& o) { tasks::validate(o); },
                                       "idle_timeout is 0 or >= 2 * interval; interval, and "
                                       "idle_timeout and close_timeout when not 0, are at least "
                                       "2 wheel ticks (2 * wheel.tick)"};
constexpr Section<F> kFailbackSection{kFailbackFields, [](const F& o) { tasks::validate(o); }};

}  // namespace wheelbeat::config::detail
