#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/tasks/failback_report.h>

#include <exception>
#include <random>

namespace wheelbeat::tasks::failback {

void Deferred::run() noexcept {
  // A callback may defer nothing more (it runs after our lock is gone), so one pass is enough.
  auto work = std::move(work_);
  work_.clear();
  for (auto& fn : work) {
    try {
      fn();
    } catch (const std::exception& e) {
      core::log(core::LogLevel::Warn, "failback: a listener or completion threw: {}", e.what());
    } catch (...) {
      core::log(core::LogLevel::Warn, "failback: a listener or completion threw");
    }
  }
}

void FailbackReporter::scheduled(Deferred& later, FailbackOp op, std::string key,
                                 std::int64_t attempt, std::chrono::nanoseconds delay,
                                 const CallResult& failure) const {
  count(&FailbackMetrics::retriesScheduled);
  core::log(core::LogLevel::Debug, "failback: {} {} failed ({}: {}): retry {} in {}",
            failbackOpName(op), key, failure.error, failure.message, attempt, core::human(delay));
  if (!listener) return;
  later.add([l = listener, op, key = std::move(key), attempt, delay] {
    l->onRetryScheduled(op, key, attempt, delay);
  });
}

void FailbackReporter::recovered(Deferred& later, FailbackOp op, std::string key,
                                 std::int64_t attempts) const {
  count(&FailbackMetrics::recovered);
  core::log(core::LogLevel::Debug, "failback: {} {} succeeded after {} retr{}", failbackOpName(op),
            key, attempts, attempts == 1 ? "y" : "ies");
  if (!listener) return;
  later.add(
      [l = listener, op, key = std::move(key), attempts] { l->onRecovered(op, key, attempts); });
}

void FailbackReporter::giveUp(Deferred& later, FailbackOp op, std::string key, GiveUp reason,
                              CallResult last) const {
  count(&FailbackMetrics::giveUps);
  if (reason == GiveUp::BudgetExhausted) count(&FailbackMetrics::budgetExhausted);
  core::log(core::LogLevel::Warn, "failback: gave up {} {} ({}) after: {}", failbackOpName(op), key,
            giveUpName(reason), last.message);
  if (!listener) return;
  later.add([l = listener, op, key = std::move(key), reason, last = std::move(last)] {
    l->onGiveUp(op, key, reason, last);
  });
}

void FailbackReporter::rejected(Deferred& later, std::string key, std::int64_t pending) const {
  count(&FailbackMetrics::rejected);
  if (!listener) return;
  later.add([l = listener, key = std::move(key), pending] { l->onRejected(key, pending); });
}

std::uint64_t seedOrRandom(std::uint64_t seed) {
  while (seed == 0) {
    std::random_device device;
    seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }
  return seed;
}

CallResult exceptionResult(std::exception_ptr error) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const std::exception& e) {
    return CallResult::failure("exception", e.what());
  } catch (...) {
    return CallResult::failure("exception", "unknown exception");
  }
}

}  // namespace wheelbeat::tasks::failback
