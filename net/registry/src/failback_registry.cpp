// FailbackRegistry: see failback_registry.h for the rules. One mutex guards the wanted state, the
// retry entries and the "latest call" token of each key; the backend, listeners and completions are
// always called after it is released (failback::Deferred).
#include <wheelbeat/core/log.h>
#include <wheelbeat/registry/failback_registry.h>
#include <wheelbeat/tasks/failback_report.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

namespace wheelbeat::registry {

using tasks::CallResult;
using tasks::Completion;
using tasks::Decision;
using tasks::FailbackListener;
using tasks::FailbackMetrics;
using tasks::FailbackOp;
using tasks::FailbackOptions;
using tasks::RetryBudget;
using tasks::RetryState;
using tasks::SmallRng;
namespace failback = tasks::failback;
namespace {

// A registration (url) or a subscription (service, listener identity).
struct Key {
  bool subscription = false;
  std::string name;
  const NotifyListener* listener = nullptr;

  // clang-tidy 14 reports the compiler-generated body of a defaulted <=> (there is no bool or 0
  // in this line).
  // NOLINTNEXTLINE(readability-implicit-bool-conversion,modernize-use-nullptr)
  auto operator<=>(const Key&) const = default;
};

bool isSubscriptionOp(FailbackOp op) noexcept {
  return op == FailbackOp::Subscribe || op == FailbackOp::Unsubscribe;
}

bool addsToWantedState(FailbackOp op) noexcept {
  return op == FailbackOp::Register || op == FailbackOp::Subscribe;
}

// What one backend call is about, carried through its completion.
struct Call {
  FailbackOp op;
  Key key;
  std::shared_ptr<NotifyListener> listener;
  std::uint64_t token;  // the call whose result counts for `key`
  bool first;           // the caller's own attempt (check and `done` apply)
  bool wasWanted;       // first only: the wanted state before the call (to undo on check)
  Completion done;      // first only
};

}  // namespace

struct FailbackRegistry::Impl : std::enable_shared_from_this<Impl> {
  struct Entry {
    FailbackOp op;
    std::shared_ptr<NotifyListener> listener;
    RetryState state;
    std::uint64_t token;
    core::Timeout timeout;
  };

  Impl(core::HashedWheelTimer& t, std::shared_ptr<RegistryBackend> b, FailbackOptions o,
       failback::FailbackReporter r, std::shared_ptr<RetryBudget> bu, std::uint64_t seed)
      : timer(t),
        backend(std::move(b)),
        options(std::move(o)),
        report(std::move(r)),
        budget(std::move(bu)),
        seeds(failback::seedOrRandom(seed)) {}

  void start(FailbackOp op, const std::string& name, std::shared_ptr<NotifyListener> listener,
             Completion done);
  void send(Call call);
  void onResult(const Call& call, const CallResult& result);
  void onRetryDue(const Key& key, std::uint64_t token);
  void recover();
  std::vector<PendingRetry> stop();

  // Locked helpers (mutex held).
  bool wantedLocked(const Key& key) const;
  void setWantedLocked(const Key& key, const std::shared_ptr<NotifyListener>& l, bool wanted);
  bool cancelEntryLocked(const Key& key);
  Entry& entryLocked(const Call& call, std::chrono::nanoseconds now);
  void retryLocked(Entry& entry, const Key& key, const CallResult& failure, CallResult& outcome,
                   failback::Deferred& later);
  void armLocked(Entry& entry, const Key& key, std::chrono::nanoseconds delay);
  std::vector<PendingRetry> pendingLocked() const;

  core::HashedWheelTimer& timer;
  const std::shared_ptr<RegistryBackend> backend;
  const FailbackOptions options;
  const failback::FailbackReporter report;
  const std::shared_ptr<RetryBudget> budget;

  mutable std::mutex mutex;
  // Held from taking a key's token to handing the call to the backend, so the backend receives
  // the calls of a key in token order: a retry of a superseded call can no longer reach the
  // backend after the newer call (and undo it there). Recursive: a backend may complete at once
  // and a completion may call again.
  std::recursive_mutex sendOrder;
  SmallRng seeds;
  bool stopped = false;
  std::uint64_t nextToken = 1;
  std::map<Key, std::uint64_t> latest;  // key → token of the call whose result counts
  std::map<Key, Entry> entries;
  std::set<std::string> registered;
  std::map<Key, std::shared_ptr<NotifyListener>> subscribed;
};

// --- calls -------------------------------------------------------------------------------------

void FailbackRegistry::Impl::start(FailbackOp op, const std::string& name,
                                   std::shared_ptr<NotifyListener> listener, Completion done) {
  Call call{op,
            Key{isSubscriptionOp(op), name, listener.get()},
            std::move(listener),
            0,
            true,
            false,
            std::move(done)};
  std::lock_guard order(sendOrder);
  {
    std::lock_guard lock(mutex);
    if (stopped) throw std::logic_error("FailbackRegistry: used after stop()");
    call.wasWanted = wantedLocked(call.key);
    setWantedLocked(call.key, call.listener, addsToWantedState(op));
    if (cancelEntryLocked(call.key)) report.count(&FailbackMetrics::cancelled);
    call.token = nextToken++;
    latest[call.key] = call.token;
  }
  send(std::move(call));
}

void FailbackRegistry::Impl::send(Call call) {
  auto self = weak_from_this();
  auto shared = std::make_shared<Call>(std::move(call));
  Completion done = [self, shared](const CallResult& result) {
    if (auto impl = self.lock()) impl->onResult(*shared, result);
  };
  const Call& c = *shared;
  try {
    switch (c.op) {
      case FailbackOp::Register: backend->doRegister(c.key.name, std::move(done)); break;
      case FailbackOp::Unregister: backend->doUnregister(c.key.name, std::move(done)); break;
      case FailbackOp::Subscribe:
        backend->doSubscribe(c.key.name, c.listener, std::move(done));
        break;
      case FailbackOp::Unsubscribe:
        backend->doUnsubscribe(c.key.name, c.listener, std::move(done));
        break;
      case FailbackOp::Invoke: break;
    }
  } catch (...) {
    onResult(c, failback::exceptionResult(std::current_exception()));
  }
}

void FailbackRegistry::Impl::onResult(const Call& call, const CallResult& result) {
  failback::Deferred later;
  CallResult outcome = result;
  {
    std::lock_guard lock(mutex);
    const auto latestIt = latest.find(call.key);
    const bool current = !stopped && latestIt != latest.end() && latestIt->second == call.token;
    if (!result.ok) report.failure();
    if (current && result.ok) {
      latest.erase(latestIt);
      if (auto it = entries.find(call.key); it != entries.end()) {
        report.recovered(later, call.op, call.key.name, it->second.state.attempts());
        it->second.timeout.cancel();
        entries.erase(it);
      }
    } else if (current && call.first && options.check) {
      setWantedLocked(call.key, call.listener, call.wasWanted);  // the call "threw": undo it
      latest.erase(latestIt);
    } else if (current) {
      retryLocked(entryLocked(call, timer.now()), call.key, result, outcome, later);
    }
  }
  if (call.first && call.done) later.add([done = call.done, outcome] { done(outcome); });
}

// Asks the entry's policy for the next retry: arms it, or removes the entry and reports.
void FailbackRegistry::Impl::retryLocked(Entry& entry, const Key& key, const CallResult& failure,
                                         CallResult& outcome, failback::Deferred& later) {
  const Decision d = entry.state.next(timer.now(), failure.error);
  if (d.retry) {
    try {
      armLocked(entry, key, d.delay);
      report.scheduled(later, entry.op, key.name, d.attempt, d.delay, failure);
      outcome.retrying = true;
      return;
    } catch (const core::TimerStoppedError&) {
      core::log(core::LogLevel::Warn, "failback: timer stopped: dropping the retry of {} {}",
                failbackOpName(entry.op), key.name);
    }
  } else {
    report.giveUp(later, entry.op, key.name, d.reason, failure);
  }
  latest.erase(key);
  entries.erase(key);
}

FailbackRegistry::Impl::Entry& FailbackRegistry::Impl::entryLocked(const Call& call,
                                                                   std::chrono::nanoseconds now) {
  auto it = entries.find(call.key);
  if (it == entries.end()) {
    it = entries
             .emplace(call.key, Entry{call.op, call.listener,
                                      RetryState(options.registryRetry, now, seeds(), budget),
                                      call.token, core::Timeout{}})
             .first;
  }
  return it->second;
}

void FailbackRegistry::Impl::armLocked(Entry& entry, const Key& key,
                                       std::chrono::nanoseconds delay) {
  entry.timeout = timer.newTimeout(
      [self = weak_from_this(), key, token = entry.token] {
        if (auto impl = self.lock()) impl->onRetryDue(key, token);
      },
      delay);
}

void FailbackRegistry::Impl::onRetryDue(const Key& key, std::uint64_t token) {
  Call call{FailbackOp::Register, key, nullptr, token, false, false, nullptr};
  std::lock_guard order(sendOrder);
  {
    std::lock_guard lock(mutex);
    const auto it = entries.find(key);
    if (stopped || it == entries.end() || it->second.token != token) return;
    call.op = it->second.op;
    call.listener = it->second.listener;
  }
  send(std::move(call));
}

void FailbackRegistry::Impl::recover() {
  std::lock_guard lock(mutex);
  if (stopped) throw std::logic_error("FailbackRegistry: used after stop()");
  const auto now = timer.now();
  auto requeue = [&](FailbackOp op, const Key& key, std::shared_ptr<NotifyListener> l) {
    cancelEntryLocked(key);
    const std::uint64_t token = nextToken++;
    latest[key] = token;
    auto& entry = entries
                      .emplace(key, Entry{op, std::move(l),
                                          RetryState(options.registryRetry, now, seeds(), budget),
                                          token, core::Timeout{}})
                      .first->second;
    armLocked(entry, key, std::chrono::nanoseconds(0));
  };
  for (const auto& url : registered)
    requeue(FailbackOp::Register, Key{false, url, nullptr}, nullptr);
  for (const auto& [key, l] : subscribed) requeue(FailbackOp::Subscribe, key, l);
}

std::vector<PendingRetry> FailbackRegistry::Impl::stop() {
  std::lock_guard lock(mutex);
  auto pending = pendingLocked();
  for (auto& [key, entry] : entries) entry.timeout.cancel();
  entries.clear();
  latest.clear();
  stopped = true;
  return pending;
}

// --- locked helpers ------------------------------------------------------------------------------

bool FailbackRegistry::Impl::wantedLocked(const Key& key) const {
  return key.subscription ? subscribed.contains(key) : registered.contains(key.name);
}

void FailbackRegistry::Impl::setWantedLocked(const Key& key,
                                             const std::shared_ptr<NotifyListener>& l,
                                             bool wanted) {
  if (key.subscription) {
    if (wanted) {
      subscribed[key] = l;
    } else {
      subscribed.erase(key);
    }
  } else if (wanted) {
    registered.insert(key.name);
  } else {
    registered.erase(key.name);
  }
}

bool FailbackRegistry::Impl::cancelEntryLocked(const Key& key) {
  const auto it = entries.find(key);
  if (it == entries.end()) return false;
  it->second.timeout.cancel();
  entries.erase(it);
  return true;
}

std::vector<PendingRetry> FailbackRegistry::Impl::pendingLocked() const {
  std::vector<PendingRetry> out;
  out.reserve(entries.size());
  for (const auto& [key, e] : entries) {
    out.push_back(PendingRetry{e.op, key.name, e.listener, e.state.attempts()});
  }
  std::sort(out.begin(), out.end(), [](const PendingRetry& a, const PendingRetry& b) {
    return std::tie(a.op, a.key, a.listener) < std::tie(b.op, b.key, b.listener);
  });
  return out;
}

// --- public face ---------------------------------------------------------------------------------

FailbackRegistry::FailbackRegistry(core::HashedWheelTimer& timer,
                                   std::shared_ptr<RegistryBackend> backend,
                                   FailbackOptions options,
                                   std::shared_ptr<FailbackListener> listener,
                                   std::shared_ptr<FailbackMetrics> metrics,
                                   std::shared_ptr<RetryBudget> budget, std::uint64_t seed) {
  validate(options);
  if (!backend)
    throw std::invalid_argument("FailbackRegistry: backend = null (expected: a backend)");
  impl_ = std::make_shared<Impl>(
      timer, std::move(backend), std::move(options),
      failback::FailbackReporter{std::move(listener), std::move(metrics)}, std::move(budget), seed);
}

FailbackRegistry::~FailbackRegistry() { impl_->stop(); }

void FailbackRegistry::registerUrl(const std::string& url, Completion done) {
  impl_->start(FailbackOp::Register, url, nullptr, std::move(done));
}

void FailbackRegistry::unregisterUrl(const std::string& url, Completion done) {
  impl_->start(FailbackOp::Unregister, url, nullptr, std::move(done));
}

void FailbackRegistry::subscribe(const std::string& service,
                                 std::shared_ptr<NotifyListener> listener, Completion done) {
  if (!listener) throw std::invalid_argument("FailbackRegistry::subscribe: listener = null");
  impl_->start(FailbackOp::Subscribe, service, std::move(listener), std::move(done));
}

void FailbackRegistry::unsubscribe(const std::string& service,
                                   std::shared_ptr<NotifyListener> listener, Completion done) {
  if (!listener) throw std::invalid_argument("FailbackRegistry::unsubscribe: listener = null");
  impl_->start(FailbackOp::Unsubscribe, service, std::move(listener), std::move(done));
}

void FailbackRegistry::recover() { impl_->recover(); }

std::vector<PendingRetry> FailbackRegistry::stop() { return impl_->stop(); }

std::vector<std::string> FailbackRegistry::registered() const {
  std::lock_guard lock(impl_->mutex);
  return {impl_->registered.begin(), impl_->registered.end()};
}

std::vector<std::pair<std::string, std::shared_ptr<NotifyListener>>> FailbackRegistry::subscribed()
    const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::pair<std::string, std::shared_ptr<NotifyListener>>> out;
  for (const auto& [key, l] : impl_->subscribed) out.emplace_back(key.name, l);
  return out;
}

std::vector<PendingRetry> FailbackRegistry::pendingRetries() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->pendingLocked();
}

std::size_t FailbackRegistry::pendingRetryCount() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->entries.size();
}

}  // namespace wheelbeat::registry
