// THE catalogue: every metric wheelbeat exposes, in exposition order. A layer's collector may
// only write what is named here (MetricsWriter checks), docs/metrics.md's table is this table
// (tests/core/exposition_test.cpp compares them), and nothing else names a metric.
//
// Label value sets are fixed here so the number of series stays bounded; they mirror the names
// of the enums they come from (net::clientStateName, net::decodeErrorName,
// registry::registryKindName), which the net and registry tests check against this table.
#include <wheelbeat/core/metrics.h>

#include <fmt/format.h>

namespace wheelbeat::core {
namespace {

using T = MetricType;

constexpr std::string_view kStates[] = {"disconnected", "connecting", "connected", "read-only"};
constexpr std::string_view kKinds[] = {"bad-magic", "body-too-large", "truncated-at-eof",
                                       "partial-frame-budget", "out-of-memory"};
constexpr std::string_view kEngines[] = {"embedded", "redis", "zookeeper"};
// tasks::cluster's names: CallMachine's outcomes, AttemptKind, EjectReason; a refused extra's
// cause.
constexpr std::string_view kOutcomes[] = {"ok", "failed", "failsafe", "failback"};
constexpr std::string_view kFailbackEnds[] = {"recovered", "given-up", "rejected"};
constexpr std::string_view kAttemptKinds[] = {"first", "retry", "hedge"};
constexpr std::string_view kExtraKinds[] = {"retry", "hedge"};
constexpr std::string_view kEjectReasons[] = {"consecutive", "percentage", "suspect"};
constexpr std::string_view kRefusers[] = {"budget", "load-cap"};

constexpr LabelDef kState[] = {{"state", kStates}};
constexpr LabelDef kKind[] = {{"kind", kKinds}};
constexpr LabelDef kEngine[] = {{"engine", kEngines}};
constexpr LabelDef kOutcome[] = {{"outcome", kOutcomes}};
constexpr LabelDef kAttemptKind[] = {{"kind", kAttemptKinds}};
constexpr LabelDef kEjectReason[] = {{"reason", kEjectReasons}};
constexpr LabelDef kFailbackEnd[] = {{"outcome", kFailbackEnds}};
// A provider's url: the one open label, bounded by the providers a client follows (a provider
// that leaves is gone from the next scrape).
constexpr LabelDef kProvider[] = {{"provider", {}}};
constexpr LabelDef kRefused[] = {{"kind", kExtraKinds}, {"by", kRefusers}};

constexpr MetricDef kCatalogue[] = {
    // The wheel (core::HashedWheelTimer::writeMetrics).
    {"wheelbeat_wheel_pending_timeouts", T::Gauge,
     "Timeouts scheduled and neither run nor cancelled."},
    {"wheelbeat_wheel_scheduled_total", T::Counter, "Timeouts accepted by newTimeout()."},
    {"wheelbeat_wheel_expired_total", T::Counter,
     "Timeouts whose deadline came: handed to their task."},
    {"wheelbeat_wheel_cancelled_total", T::Counter,
     "Timeouts cancelled before they ran (cancel() or stop())."},
    {"wheelbeat_wheel_rejected_total", T::Counter,
     "newTimeout() calls refused because max pending timeouts was reached."},
    {"wheelbeat_wheel_task_errors_total", T::Counter, "Timer tasks (or the executor) that threw."},
    {"wheelbeat_wheel_rounds_total", T::Counter,
     "Rounds of the wheel: wake-ups of its thread (advance() calls when driven by hand)."},
    {"wheelbeat_wheel_lateness_seconds", T::Histogram,
     "How late each timeout ran after its deadline."},
    {"wheelbeat_wheel_worker_lag_seconds", T::Histogram,
     "How late the wheel processed each tick that held timeouts, after the tick's time."},
    // The timer tasks (tasks::writeMetrics(TaskMetrics)).
    {"wheelbeat_tasks_heartbeats_sent_total", T::Counter,
     "Heartbeats sent by heartbeat tasks (the channel was idle)."},
    {"wheelbeat_tasks_reconnects_total", T::Counter, "Reconnects started by reconnect tasks."},
    {"wheelbeat_tasks_give_ups_total", T::Counter,
     "Reconnect tasks that gave up (the retry policy refused)."},
    {"wheelbeat_tasks_idle_closes_total", T::Counter, "Idle channels closed by close-idle tasks."},
    {"wheelbeat_tasks_idle_deferred_total", T::Counter,
     "Idle-looking checks that found unread input and did not act (the loop is behind)."},
    {"wheelbeat_tasks_errors_total", T::Counter, "Task runs whose body threw."},
    {"wheelbeat_tasks_runs_total", T::Counter, "Task bodies run."},
    // Channels (net::writeMetrics(ChannelMetrics)).
    {"wheelbeat_channels", T::Gauge,
     "Channels by state: each client in its state, each server connection as connected while open.",
     kState},
    {"wheelbeat_channel_frames_in_total", T::Counter,
     "Frames decoded, heartbeats and events included."},
    {"wheelbeat_channel_frames_out_total", T::Counter,
     "Frames queued for sending, heartbeats and events included."},
    {"wheelbeat_channel_bytes_in_total", T::Counter, "Bytes read from sockets."},
    {"wheelbeat_channel_bytes_out_total", T::Counter, "Bytes written to sockets."},
    {"wheelbeat_channel_protocol_errors_total", T::Counter,
     "Connections closed because the inbound stream could not be decoded, by kind.", kKind},
    {"wheelbeat_channel_readonly_received_total", T::Counter,
     "READONLY events received (the peer is shutting down gracefully)."},
    {"wheelbeat_channel_heartbeats_answered_total", T::Counter,
     "Heartbeat requests from peers answered."},
    {"wheelbeat_channel_heartbeat_rtt_seconds", T::Histogram,
     "Round trip of each heartbeat sent and answered."},
    {"wheelbeat_server_accepted_total", T::Counter, "Connections accepted by servers."},
    {"wheelbeat_server_rejected_total", T::Counter,
     "Connections closed right after accept (max connections or setup failure)."},
    // The registry (registry::writeMetrics(Registry)) and the consumer's directory.
    {"wheelbeat_registry_registered", T::Gauge, "Urls this process wants registered.", kEngine},
    {"wheelbeat_registry_subscribed", T::Gauge, "Subscriptions this process wants.", kEngine},
    {"wheelbeat_registry_failback_pending", T::Gauge,
     "Registry calls waiting for a failback retry.", kEngine},
    {"wheelbeat_registry_failback_retried_total", T::Counter, "Failback retries scheduled.",
     kEngine},
    {"wheelbeat_registry_failback_given_up_total", T::Counter,
     "Failback entries given up by the retry policy.", kEngine},
    {"wheelbeat_directory_providers", T::Gauge, "Providers the consumer directories follow."},
    {"wheelbeat_directory_notifications_total", T::Counter,
     "Provider lists the directories received from the registry."},
    {"wheelbeat_directory_empty_protections_total", T::Counter,
     "Empty provider lists held back by empty-list protection."},
    // Calls over a provider set (cluster::ServiceClient::writeMetrics).
    {"wheelbeat_cluster_calls_total", T::Counter,
     "Calls ended, by outcome (failsafe, failback: a failure turned into an empty success).",
     kOutcome},
    {"wheelbeat_cluster_attempts_total", T::Counter, "Attempts sent, by kind.", kAttemptKind},
    {"wheelbeat_cluster_extra_refused_total", T::Counter,
     "Retries and hedges not sent: no budget token, or over the load cap.", kRefused},
    {"wheelbeat_cluster_hedges_won_total", T::Counter, "Calls decided by a hedge's answer."},
    {"wheelbeat_cluster_late_answers_total", T::Counter,
     "Answers of attempts dropped when their call had ended (discarded)."},
    {"wheelbeat_cluster_ejections_total", T::Counter,
     "Providers taken out of rotation, by reason (suspect: a call waited far too long).",
     kEjectReason},
    {"wheelbeat_cluster_providers_out", T::Gauge, "Providers ejected or suspect now."},
    {"wheelbeat_cluster_providers", T::Gauge, "Providers the cluster clients follow."},
    {"wheelbeat_cluster_provider_latency_seconds", T::Gauge,
     "A provider's latency estimate (peak EWMA of its answers; 0 before the first).", kProvider},
    {"wheelbeat_cluster_failback_pending", T::Gauge, "Failed calls held for a failback retry now."},
    {"wheelbeat_cluster_failback_total", T::Counter,
     "Failback calls ended by their background retries, by outcome.", kFailbackEnd},
    // Retry budgets (tasks::writeMetrics(RetryBudget)).
    {"wheelbeat_retry_budget_tokens", T::Gauge, "Whole retry tokens available now."},
    {"wheelbeat_retry_budget_refusals_total", T::Counter,
     "Retries refused because the budget was exhausted."},
};

std::string labelCell(const MetricDef& m) {
  std::string out;
  for (const LabelDef& l : m.labels) {
    if (!out.empty()) out += "; ";
    if (l.values.empty()) {
      out += fmt::format("`{}`: any (one per provider followed)", l.name);
    } else {
      out += fmt::format("`{}`: {}", l.name, fmt::join(l.values, ", "));
    }
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::span<const MetricDef> metricCatalogue() noexcept { return kCatalogue; }

std::string metricCatalogueMarkdown() {
  std::string out = "| Metric | Type | Labels | Meaning |\n|---|---|---|---|\n";
  for (const MetricDef& m : kCatalogue) {
    out += fmt::format("| `{}` | {} | {} | {} |\n", m.name, metricTypeName(m.type), labelCell(m),
                       m.help);
  }
  return out;
}

}  // namespace wheelbeat::core
