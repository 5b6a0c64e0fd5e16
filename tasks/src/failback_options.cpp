// FailbackOptions validation, names, and the listener / metrics plumbing of failback.h.
#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/option_error.h>
#include <wheelbeat/tasks/failback.h>

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace wheelbeat::tasks {
namespace {

void validateRetry(const RetryOptions& o, std::string_view field) {
  try {
    validate(o);
  } catch (const core::OptionError& e) {
    throw e.within("FailbackOptions", field);
  }
}

}  // namespace

void validate(const FailbackOptions& o) {
  validateRetry(o.registryRetry, "registryRetry");
  validateRetry(o.invocationRetry, "invocationRetry");
  if (o.maxPendingRetries < 1) {
    throw core::OptionError("FailbackOptions", "maxPendingRetries",
                            std::to_string(o.maxPendingRetries), ">= 1");
  }
}

std::string_view failbackOpName(FailbackOp op) noexcept {
  switch (op) {
    case FailbackOp::Register: return "register";
    case FailbackOp::Unregister: return "unregister";
    case FailbackOp::Subscribe: return "subscribe";
    case FailbackOp::Unsubscribe: return "unsubscribe";
    case FailbackOp::Invoke: return "invoke";
  }
  return "unknown";
}

void FailbackListener::onRetryScheduled(FailbackOp /*op*/, const std::string& /*key*/,
                                        std::int64_t /*attempt*/,
                                        std::chrono::nanoseconds /*delay*/) {}
void FailbackListener::onRecovered(FailbackOp /*op*/, const std::string& /*key*/,
                                   std::int64_t /*attempts*/) {}
void FailbackListener::onGiveUp(FailbackOp /*op*/, const std::string& /*key*/, GiveUp /*reason*/,
                                const CallResult& /*lastFailure*/) {}
void FailbackListener::onRejected(const std::string& /*key*/, std::int64_t /*pending*/) {}

std::string FailbackMetricsSnapshot::toString() const {
  return fmt::format(
      "failures={} retriesScheduled={} recovered={} cancelled={} giveUps={} budgetExhausted={} "
      "rejected={}",
      failures, retriesScheduled, recovered, cancelled, giveUps, budgetExhausted, rejected);
}

FailbackMetricsSnapshot FailbackMetrics::snapshot() const noexcept {
  constexpr auto r = std::memory_order_relaxed;
  return {failures.load(r), retriesScheduled.load(r), recovered.load(r), cancelled.load(r),
          giveUps.load(r),  budgetExhausted.load(r),  rejected.load(r)};
}

}  // namespace wheelbeat::tasks
