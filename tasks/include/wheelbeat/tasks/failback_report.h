// How a failback reports its decisions, for the failbacks themselves (FailbackInvoker here,
// registry::FailbackRegistry in the registry layer) rather than for applications: the counters,
// the decision lines of core::log, and the listener calls deferred until no lock is held. Every
// failback reports alike through it, so logs, metrics and listeners read the same for both.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace wheelbeat::tasks::failback {

// Work collected under a lock and run after it is released: listener calls and completions must
// never run under the failback's mutex (they may call back into it). run() (also the destructor)
// runs each in order; one that throws is logged (Warn) and dropped. Thread: the owner's.
class Deferred {
public:
  Deferred() = default;
  Deferred(const Deferred&) = delete;
  Deferred& operator=(const Deferred&) = delete;
  ~Deferred() { run(); }

  void add(std::function<void()> fn) { work_.push_back(std::move(fn)); }
  void run() noexcept;

private:
  std::vector<std::function<void()>> work_;
};

// The listener and the counters of one failback (either may be null). Every call below counts at
// once and defers the listener call into `later`. Thread: any.
struct FailbackReporter {
  std::shared_ptr<FailbackListener> listener;
  std::shared_ptr<FailbackMetrics> metrics;

  void count(std::atomic<std::uint64_t> FailbackMetrics::*counter) const noexcept {
    if (metrics) (metrics.get()->*counter).fetch_add(1, std::memory_order_relaxed);
  }
  void failure() const noexcept { count(&FailbackMetrics::failures); }
  // Also the Debug line "failback: register URL failed (error: message): retry 2 in 1.6s".
  void scheduled(Deferred& later, FailbackOp op, std::string key, std::int64_t attempt,
                 std::chrono::nanoseconds delay, const CallResult& failure) const;
  void recovered(Deferred& later, FailbackOp op, std::string key, std::int64_t attempts) const;
  void giveUp(Deferred& later, FailbackOp op, std::string key, GiveUp reason,
              CallResult last) const;
  void rejected(Deferred& later, std::string key, std::int64_t pending) const;
};

// Seeds for the RetryState of each entry: from `seed`, or from std::random_device when 0.
std::uint64_t seedOrRandom(std::uint64_t seed);

// The result of a call that threw instead of completing.
CallResult exceptionResult(std::exception_ptr error);

}  // namespace wheelbeat::tasks::failback
