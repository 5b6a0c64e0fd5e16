// toJson(): the effective configuration, every key written, in the loader's format.
#include "sections.h"
#include "values.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>

namespace wheelbeat::config {
namespace {

using namespace std::chrono_literals;
using detail::durationJson;
using detail::Json;

std::string_view backoffName(tasks::Backoff b) {
  return b == tasks::Backoff::Fixed ? "fixed" : "exponential";
}

std::string_view jitterName(tasks::Jitter j) {
  switch (j) {
    case tasks::Jitter::None: return "none";
    case tasks::Jitter::Full: return "full";
    case tasks::Jitter::Equal: return "equal";
    case tasks::Jitter::Decorrelated: return "decorrelated";
    case tasks::Jitter::Proportional: return "proportional";
  }
  return "?";  // not a valid RetryOptions: the loader never produces one
}

std::string_view logLevelKey(core::LogLevel level) {
  constexpr std::array<std::string_view, 5> kNames{"debug", "info", "warn", "error", "off"};
  const auto i = static_cast<std::size_t>(level);
  return i < kNames.size() ? kNames.at(i) : "?";
}

Json policyJson(const tasks::RetryOptions& o) {
  return Json{{"backoff", backoffName(o.backoff)},
              {"initial_delay", durationJson(o.initialDelay)},
              {"multiplier", o.multiplier},
              {"max_delay", durationJson(o.maxDelay)},
              {"jitter", jitterName(o.jitter)},
              {"jitter_ratio", o.jitterRatio},
              {"max_attempts", o.maxAttempts},
              {"deadline", durationJson(o.deadline)},
              {"retry_on", o.retryOn},
              {"ignore", o.ignore}};
}

Json phiJson(const tasks::PhiOptions& o) {
  return Json{{"threshold", o.threshold},
              {"min_std_deviation", durationJson(o.minStdDeviation)},
              {"acceptable_pause", durationJson(o.acceptablePause)},
              {"window", o.window}};
}

Json heartbeatJson(const tasks::HeartbeatOptions& o) {
  return Json{{"interval", durationJson(o.interval)},
              {"idle_timeout", durationJson(o.idleTimeout)},
              {"close_timeout", durationJson(o.closeTimeout)},
              {"reconnect", policyJson(o.reconnect)},
              {"seed", o.seed},
              {"detector", tasks::detectorKindName(o.detector)},
              {"phi", phiJson(o.phi)},
              {"spread_first", o.spreadFirst}};
}

Json retryMapJson(const std::map<std::string, tasks::RetryOptions>& retry) {
  Json out = Json::object();
  for (const auto& [name, policy] : retry) out[name] = policyJson(policy);
  return out;
}

Json failbackJson(const tasks::FailbackOptions& o) {
  return Json{{"check", o.check},
              {"registry_retry", policyJson(o.registryRetry)},
              {"invocation_retry", policyJson(o.invocationRetry)},
              {"max_pending_retries", o.maxPendingRetries}};
}

Json netJson(const Config& c) {
  return Json{
      {"loop", {{"max_partial_bytes", c.loop.maxPartialBytes}, {"io_threads", c.loop.ioThreads}}},
      {"registry",
       {{"kind", registry::registryKindName(c.registry.kind)},
        {"address", detail::formatEndpoint(c.registry.address)},
        {"group", c.registry.group},
        {"session", durationJson(c.registry.session)}}},
      {"server",
       {{"listen", detail::formatEndpoint(c.server.listen)},
        {"backlog", c.server.backlog},
        {"max_connections", c.server.maxConnections},
        {"shutdown_grace", durationJson(c.server.shutdownGrace)},
        {"max_body", c.server.codec.maxBody},
        {"max_send_queue", c.server.maxSendQueue}}},
      {"client",
       {{"server", detail::formatEndpoint(c.client.server)},
        {"connect_timeout", durationJson(c.client.connectTimeout)},
        {"max_body", c.client.codec.maxBody},
        {"max_send_queue", c.client.maxSendQueue}}}};
}

Json serviceJson(const registry::ServiceOptions& o) {
  return Json{{"interface", o.interface}, {"application", o.application},
              {"version", o.version},     {"group", o.group},
              {"methods", o.methods},     {"timeout", durationJson(o.timeout)},
              {"protocol", o.protocol}};
}

Json metricsJson(const net::MetricsEndpointOptions& o) {
  return Json{{"listen", o.listen},
              {"max_header_bytes", o.maxHeaderBytes},
              {"request_timeout", durationJson(o.requestTimeout)},
              {"max_connections", o.maxConnections}};
}

tasks::HeartbeatOptions resolvedHeartbeat(const tasks::HeartbeatOptions& o) {
  tasks::HeartbeatOptions r = o.resolved();
  r.seed = o.seed;  // 0 = a random seed for each task: a rule, not a value to fill in
  return r;
}

}  // namespace

Config resolved(const Config& config) {
  Config c = config;
  c.heartbeat = resolvedHeartbeat(c.heartbeat);
  c.server.heartbeat = resolvedHeartbeat(c.server.heartbeat);
  c.client.heartbeat = resolvedHeartbeat(c.client.heartbeat);
  // HashedWheelTimer's floor and rounding (core/include/wheelbeat/core/hashed_wheel_timer.h).
  c.wheel.tickDuration = std::max<std::chrono::nanoseconds>(c.wheel.tickDuration, 1ms);
  c.wheel.ticksPerWheel = static_cast<std::int64_t>(
      std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(c.wheel.ticksPerWheel, 1))));
  return c;
}

std::string toJson(const Config& c) {
  Json out{{"log_level", logLevelKey(c.logLevel)},
           {"wheel",
            {{"tick", durationJson(c.wheel.tickDuration)},
             {"ticks_per_wheel", c.wheel.ticksPerWheel},
             {"max_pending", c.wheel.maxPendingTimeouts}}},
           {"heartbeat", heartbeatJson(c.heartbeat)},
           {"retry", retryMapJson(c.retry)},
           {"retry_budget",
            {{"ratio", c.retryBudget.ratio},
             {"min_retries_per_second", c.retryBudget.minRetriesPerSecond},
             {"window", durationJson(c.retryBudget.window)}}},
           {"failback", failbackJson(c.failback)}};
  const Json net = netJson(c);
  for (const auto& [key, value] : net.items()) out[key] = value;
  // The defaults name no service (interface ""), which the loader would refuse.
  if (c.service != registry::ServiceOptions{}) out["service"] = serviceJson(c.service);
  // No section, no endpoint: the loader's reading of a missing "metrics".
  if (c.metrics) out["metrics"] = metricsJson(*c.metrics);
  return out.dump(2) + "\n";
}

}  // namespace wheelbeat::config
