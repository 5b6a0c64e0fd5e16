// Internal plumbing shared by FailbackRegistry and FailbackInvoker (not installed): counting,
// the listener calls deferred until no lock is held, and retry scheduling on the wheel.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/failback.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace wheelbeat::tasks::detail {

// Work collected under a lock and run after it is released: listener calls and completions must
// never run under the failback mutex (they may call back into it).
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

// The listener and the counters of one FailbackRegistry / FailbackInvoker. Every `report*`
// counts at once and defers the listener call into `later`.
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

}  // namespace wheelbeat::tasks::detail
