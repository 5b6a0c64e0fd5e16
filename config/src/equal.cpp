// Config equality, field by field: the option structs of the other layers have no operator==
// (registry::ServiceOptions excepted). Only what the loader reads is compared: the observers set
// by code (ServerOptions/ClientOptions::metrics, taskListener, taskMetrics) are not.
#include <wheelbeat/config/config.h>

#include <tuple>

namespace wheelbeat::config {
namespace {

bool same(const core::WheelOptions& a, const core::WheelOptions& b) {
  return std::tie(a.tickDuration, a.ticksPerWheel, a.maxPendingTimeouts) ==
         std::tie(b.tickDuration, b.ticksPerWheel, b.maxPendingTimeouts);
}

bool same(const tasks::RetryOptions& a, const tasks::RetryOptions& b) {
  return std::tie(a.backoff, a.initialDelay, a.multiplier, a.maxDelay, a.jitter, a.jitterRatio,
                  a.maxAttempts, a.deadline, a.retryOn, a.ignore) ==
         std::tie(b.backoff, b.initialDelay, b.multiplier, b.maxDelay, b.jitter, b.jitterRatio,
                  b.maxAttempts, b.deadline, b.retryOn, b.ignore);
}

bool same(const tasks::PhiOptions& a, const tasks::PhiOptions& b) {
  return std::tie(a.threshold, a.minStdDeviation, a.acceptablePause, a.window) ==
         std::tie(b.threshold, b.minStdDeviation, b.acceptablePause, b.window);
}

bool same(const tasks::HeartbeatOptions& a, const tasks::HeartbeatOptions& b) {
  return std::tie(a.interval, a.idleTimeout, a.closeTimeout, a.spreadFirst, a.seed, a.detector) ==
             std::tie(b.interval, b.idleTimeout, b.closeTimeout, b.spreadFirst, b.seed,
                      b.detector) &&
         same(a.reconnect, b.reconnect) && same(a.phi, b.phi);
}

bool same(const std::map<std::string, tasks::RetryOptions>& a,
          const std::map<std::string, tasks::RetryOptions>& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (i->first != j->first || !same(i->second, j->second)) return false;
  }
  return true;
}

bool same(const tasks::RetryBudgetOptions& a, const tasks::RetryBudgetOptions& b) {
  return std::tie(a.ratio, a.minRetriesPerSecond, a.window) ==
         std::tie(b.ratio, b.minRetriesPerSecond, b.window);
}

bool same(const tasks::FailbackOptions& a, const tasks::FailbackOptions& b) {
  return a.check == b.check && a.maxPendingRetries == b.maxPendingRetries &&
         same(a.registryRetry, b.registryRetry) && same(a.invocationRetry, b.invocationRetry);
}

bool same(const net::LoopOptions& a, const net::LoopOptions& b) {
  return a.maxPartialBytes == b.maxPartialBytes && a.ioThreads == b.ioThreads;
}

bool same(const registry::RegistryOptions& a, const registry::RegistryOptions& b) {
  return std::tie(a.kind, a.address, a.group, a.session) ==
         std::tie(b.kind, b.address, b.group, b.session);
}

bool same(const net::ServerOptions& a, const net::ServerOptions& b) {
  return std::tie(a.listen, a.backlog, a.maxConnections, a.shutdownGrace) ==
             std::tie(b.listen, b.backlog, b.maxConnections, b.shutdownGrace) &&
         std::tie(a.codec.maxBody, a.maxSendQueue) == std::tie(b.codec.maxBody, b.maxSendQueue) &&
         same(a.heartbeat, b.heartbeat);
}

bool same(const net::ClientOptions& a, const net::ClientOptions& b) {
  return std::tie(a.server, a.connectTimeout, a.codec.maxBody, a.maxSendQueue) ==
             std::tie(b.server, b.connectTimeout, b.codec.maxBody, b.maxSendQueue) &&
         same(a.heartbeat, b.heartbeat);
}

bool same(const std::optional<net::MetricsEndpointOptions>& a,
          const std::optional<net::MetricsEndpointOptions>& b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return std::tie(a->listen, a->maxHeaderBytes, a->requestTimeout, a->maxConnections) ==
         std::tie(b->listen, b->maxHeaderBytes, b->requestTimeout, b->maxConnections);
}

}  // namespace

bool operator==(const Config& a, const Config& b) {
  return same(a.wheel, b.wheel) && a.logLevel == b.logLevel && same(a.heartbeat, b.heartbeat) &&
         same(a.retry, b.retry) && same(a.retryBudget, b.retryBudget) &&
         same(a.failback, b.failback) && same(a.loop, b.loop) && same(a.registry, b.registry) &&
         same(a.server, b.server) && same(a.client, b.client) && a.service == b.service &&
         same(a.metrics, b.metrics);
}

}  // namespace wheelbeat::config
