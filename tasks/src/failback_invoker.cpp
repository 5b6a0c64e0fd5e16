// FailbackInvoker: see failback_invoker.h. A first attempt touches no lock; only a failure takes
// the mutex (to be held for a retry, or rejected), and each retry runs from the wheel.
#include <wheelbeat/tasks/failback_invoker.h>
#include <wheelbeat/tasks/failback_report.h>

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <random>
#include <stdexcept>

namespace wheelbeat::tasks {

struct FailbackInvoker::Impl : std::enable_shared_from_this<Impl> {
  // One invocation, from invoke() to its final outcome. Shared by the held map and the attempt in
  // flight, so stop() may drop it from the map while an attempt still uses it.
  struct Invocation {
    std::string name;
    Selector select;
    Call call;
    Completion done;
    std::uint64_t id = 0;  // 0 until held
    std::optional<RetryState> state;
    std::string lastEndpoint;
    core::Timeout timeout;
    bool inFlight = false;
  };
  using InvocationPtr = std::shared_ptr<Invocation>;

  Impl(core::HashedWheelTimer& t, FailbackOptions o, failback::FailbackReporter r,
       std::shared_ptr<RetryBudget> b, std::uint64_t seed)
      : timer(t),
        options(std::move(o)),
        report(std::move(r)),
        budget(std::move(b)),
        seeds(failback::seedOrRandom(seed)) {}

  [[nodiscard]] InvocationPtr newInvocation(std::string name, Selector select, Call call,
                                            Completion done) const;
  void attempt(const InvocationPtr& inv);
  void onResult(const InvocationPtr& inv, const std::string& endpoint, const CallResult& result);
  void onFailureLocked(const InvocationPtr& inv, const CallResult& failure,
                       failback::Deferred& later);
  void holdLocked(const InvocationPtr& inv);
  void onRetryDue(std::uint64_t id);
  std::vector<Stopped> stop();

  core::HashedWheelTimer& timer;
  const FailbackOptions options;
  const failback::FailbackReporter report;
  const std::shared_ptr<RetryBudget> budget;

  mutable std::mutex mutex;
  SmallRng seeds;
  bool stopped = false;
  std::uint64_t nextId = 1;
  std::map<std::uint64_t, InvocationPtr> held;  // failed invocations, by id
};

void FailbackInvoker::Impl::attempt(const InvocationPtr& inv) {
  std::optional<std::string> endpoint;
  try {
    endpoint = inv->select(inv->lastEndpoint);
  } catch (...) {
    onResult(inv, {}, failback::exceptionResult(std::current_exception()));
    return;
  }
  if (!endpoint) {
    onResult(inv, {}, CallResult::failure("no-endpoint", "no endpoint available"));
    return;
  }
  auto self = weak_from_this();
  try {
    inv->call(*endpoint, [self, inv, ep = *endpoint](const CallResult& result) {
      if (auto impl = self.lock()) {
        impl->onResult(inv, ep, result);
      } else if (inv->done) {
        inv->done(result);  // the invoker is gone: nothing to retry with, report the outcome
      }
    });
  } catch (...) {
    onResult(inv, *endpoint, failback::exceptionResult(std::current_exception()));
  }
}

void FailbackInvoker::Impl::onResult(const InvocationPtr& inv, const std::string& endpoint,
                                     const CallResult& result) {
  failback::Deferred later;
  bool finished = true;
  {
    std::lock_guard lock(mutex);
    inv->inFlight = false;
    if (!result.ok) {
      report.failure();
      if (!endpoint.empty()) inv->lastEndpoint = endpoint;
    }
    if (result.ok && inv->id != 0) {
      report.recovered(later, FailbackOp::Invoke, inv->name, inv->state->attempts());
    }
    if (!result.ok && !stopped) {
      onFailureLocked(inv, result, later);
      finished = !held.contains(inv->id);
    }
    if (finished && inv->id != 0) held.erase(inv->id);
  }
  if (finished && inv->done) later.add([done = inv->done, result] { done(result); });
}

// A failed attempt: hold the invocation (if room) and ask its policy for a retry.
void FailbackInvoker::Impl::onFailureLocked(const InvocationPtr& inv, const CallResult& failure,
                                            failback::Deferred& later) {
  if (inv->id == 0) {
    const auto pending = static_cast<std::int64_t>(held.size());
    if (pending >= options.maxPendingRetries) {
      report.rejected(later, inv->name, pending);
      later.add([done = inv->done, name = inv->name, limit = options.maxPendingRetries] {
        if (!done) return;
        done(CallResult::failure(
            std::string(kFailbackRejected),
            fmt::format("failback of '{}' rejected: {} failed invocations already held "
                        "(expected: fewer than maxPendingRetries = {})",
                        name, limit, limit)));
      });
      inv->done = nullptr;  // reported as rejected instead of the plain failure
      return;
    }
    holdLocked(inv);
  }
  const Decision d = inv->state->next(timer.now(), failure.error);
  if (!d.retry) {
    report.giveUp(later, FailbackOp::Invoke, inv->name, d.reason, failure);
    held.erase(inv->id);
    return;
  }
  try {
    inv->timeout = timer.newTimeout(
        [self = weak_from_this(), id = inv->id] {
          if (auto impl = self.lock()) impl->onRetryDue(id);
        },
        d.delay);
    report.scheduled(later, FailbackOp::Invoke, inv->name, d.attempt, d.delay, failure);
  } catch (const core::TimerStoppedError&) {
    held.erase(inv->id);
  }
}

void FailbackInvoker::Impl::holdLocked(const InvocationPtr& inv) {
  inv->id = nextId++;
  inv->state.emplace(options.invocationRetry, timer.now(), seeds(), budget);
  held.emplace(inv->id, inv);
}

void FailbackInvoker::Impl::onRetryDue(std::uint64_t id) {
  InvocationPtr inv;
  {
    std::lock_guard lock(mutex);
    const auto it = held.find(id);
    if (stopped || it == held.end()) return;
    inv = it->second;
    inv->inFlight = true;
  }
  attempt(inv);
}

std::vector<FailbackInvoker::Stopped> FailbackInvoker::Impl::stop() {
  std::lock_guard lock(mutex);
  stopped = true;
  std::vector<Stopped> out;
  for (auto it = held.begin(); it != held.end();) {
    Invocation& inv = *it->second;
    if (inv.inFlight) {
      ++it;  // finishes on its own; its result reaches `done`
      continue;
    }
    inv.timeout.cancel();
    out.push_back(Stopped{inv.name, inv.state->attempts(), inv.lastEndpoint, std::move(inv.select),
                          std::move(inv.call), std::move(inv.done)});
    it = held.erase(it);
  }
  return out;
}

// --- public face ---------------------------------------------------------------------------------

FailbackInvoker::FailbackInvoker(core::HashedWheelTimer& timer, FailbackOptions options,
                                 std::shared_ptr<FailbackListener> listener,
                                 std::shared_ptr<FailbackMetrics> metrics,
                                 std::shared_ptr<RetryBudget> budget, std::uint64_t seed) {
  validate(options);
  impl_ = std::make_shared<Impl>(
      timer, std::move(options),
      failback::FailbackReporter{std::move(listener), std::move(metrics)}, std::move(budget), seed);
}

FailbackInvoker::~FailbackInvoker() { impl_->stop(); }

// A new invocation, in flight (its first attempt runs or has just failed). Throws as invoke().
FailbackInvoker::Impl::InvocationPtr FailbackInvoker::Impl::newInvocation(std::string name,
                                                                          Selector select,
                                                                          Call call,
                                                                          Completion done) const {
  if (!select) throw std::invalid_argument("FailbackInvoker::invoke: select = empty");
  if (!call) throw std::invalid_argument("FailbackInvoker::invoke: call = empty");
  {
    std::lock_guard lock(mutex);
    if (stopped) throw std::logic_error("FailbackInvoker: used after stop()");
  }
  auto inv = std::make_shared<Invocation>();
  inv->name = std::move(name);
  inv->select = std::move(select);
  inv->call = std::move(call);
  inv->done = std::move(done);
  inv->inFlight = true;
  return inv;
}

void FailbackInvoker::invoke(std::string name, Selector select, Call call, Completion done) {
  impl_->attempt(
      impl_->newInvocation(std::move(name), std::move(select), std::move(call), std::move(done)));
}

void FailbackInvoker::adopt(std::string name, std::string failedEndpoint, const CallResult& failure,
                            Selector select, Call call, Completion done) {
  if (failure.ok) {
    throw std::invalid_argument(fmt::format(
        "FailbackInvoker::adopt: failure of '{}' is ok (expected: a failed attempt)", name));
  }
  auto inv =
      impl_->newInvocation(std::move(name), std::move(select), std::move(call), std::move(done));
  impl_->onResult(inv, failedEndpoint, failure);
}

std::int64_t FailbackInvoker::pendingRetries() const {
  std::lock_guard lock(impl_->mutex);
  return static_cast<std::int64_t>(impl_->held.size());
}

std::vector<FailbackInvoker::Stopped> FailbackInvoker::stop() { return impl_->stop(); }

std::optional<std::string> pickEndpoint(const std::vector<std::string>& candidates,
                                        std::string_view avoid, std::uint64_t attempt) {
  std::vector<const std::string*> usable;
  usable.reserve(candidates.size());
  for (const auto& c : candidates) {
    if (c != avoid) usable.push_back(&c);
  }
  if (usable.empty()) {
    if (candidates.empty()) return std::nullopt;
    return candidates[attempt % candidates.size()];
  }
  return *usable[attempt % usable.size()];
}

}  // namespace wheelbeat::tasks
