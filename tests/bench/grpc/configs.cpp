// The four channel configurations, as gRPC's service config JSON (gRFC A6 retries, A50 outlier
// detection) understood by Debian's gRPC C++ 1.51:
//   round_robin  round_robin over every provider, nothing else
//   retry        + retryPolicy (3 attempts on UNAVAILABLE) + retryThrottling
//   outlier      retry, with the outlier_detection LB policy wrapping round_robin
//   best         outlier + perAttemptRecvTimeout 100 ms, no throttling
// What 1.51 offers and what it does not:
// - outlier detection is registered as "outlier_detection_experimental", on by default (no
//   environment variable gates it in 1.51: GRPC_EXPERIMENTAL_ENABLE_OUTLIER_DETECTION is gone
//   from the library); it needs a loadBalancingConfig (it has no defaults of its own to fall
//   back on) and ejects on a failure share (failurePercentageEjection) or on success rates far
//   from the others' (successRateEjection), checked once per interval;
// - hedging (hedgingPolicy) is not implemented by the C++ core: the field is ignored. The one
//   piece of it that exists is perAttemptRecvTimeout (an attempt with no answer after that long
//   is cancelled and retried, whatever retryableStatusCodes say), which 1.51 reads only when the
//   channel argument grpc.experimental.enable_hedging is 1 (needsHedgingArg()).
#include "grpc_bench.h"

#include <fmt/format.h>

namespace wheelbeat::bench::grpcbench {
namespace {

constexpr const char* kRoundRobin = R"([{"round_robin":{}}])";

// Ejects a provider that failed >= 20 % of at least 20 calls in the last second, for 30 s (times
// its repeats, at most 300 s); at most half the providers out, as wheelbeat's OutlierOptions.
constexpr const char* kOutlier =
    R"([{"outlier_detection_experimental":{"interval":"1s","baseEjectionTime":"30s",)"
    R"("maxEjectionTime":"300s","maxEjectionPercent":50,"failurePercentageEjection":)"
    R"({"threshold":20,"enforcementPercentage":100,"minimumHosts":3,"requestVolume":20},)"
    R"("childPolicy":[{"round_robin":{}}]}}])";

constexpr const char* kRetryPolicy =
    R"({"maxAttempts":3,"initialBackoff":"0.01s","maxBackoff":"0.1s","backoffMultiplier":2,)"
    R"("retryableStatusCodes":["UNAVAILABLE"]})";

constexpr const char* kBestRetryPolicy =
    R"({"maxAttempts":3,"initialBackoff":"0.01s","maxBackoff":"0.1s","backoffMultiplier":2,)"
    R"("perAttemptRecvTimeout":"0.1s","retryableStatusCodes":["UNAVAILABLE"]})";

// gRFC A6's example: retries stop while fewer than half of 10 tokens are left (a failure costs
// one, a success gives back 0.1).
constexpr const char* kThrottling = R"("retryThrottling":{"maxTokens":10,"tokenRatio":0.1})";

std::string methodConfig(const char* retryPolicy) {
  return fmt::format(R"("methodConfig":[{{"name":[{{"service":"wheelbeat.bench.EchoService"}}],)"
                     R"("retryPolicy":{}}}])",
                     retryPolicy);
}

}  // namespace

const char* scenarioName(Scenario s) { return s == Scenario::T0 ? "T0" : "T1"; }

const char* configName(ChannelConfig c) {
  switch (c) {
    case ChannelConfig::RoundRobin: return "round_robin";
    case ChannelConfig::Retry: return "retry";
    case ChannelConfig::Outlier: return "outlier";
    case ChannelConfig::Best: return "best";
  }
  return "?";
}

std::string serviceConfigJson(ChannelConfig c) {
  switch (c) {
    case ChannelConfig::RoundRobin:
      return fmt::format(R"({{"loadBalancingConfig":{}}})", kRoundRobin);
    case ChannelConfig::Retry:
      return fmt::format(R"({{"loadBalancingConfig":{},{},{}}})", kRoundRobin,
                         methodConfig(kRetryPolicy), kThrottling);
    case ChannelConfig::Outlier:
      return fmt::format(R"({{"loadBalancingConfig":{},{},{}}})", kOutlier,
                         methodConfig(kRetryPolicy), kThrottling);
    case ChannelConfig::Best:
      return fmt::format(R"({{"loadBalancingConfig":{},{}}})", kOutlier,
                         methodConfig(kBestRetryPolicy));
  }
  return "{}";
}

bool needsHedgingArg(ChannelConfig c) { return c == ChannelConfig::Best; }

}  // namespace wheelbeat::bench::grpcbench
