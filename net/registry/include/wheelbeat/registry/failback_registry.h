// FailbackRegistry: Dubbo's FailbackRegistry over a RegistryBackend (register / unregister /
// subscribe / unsubscribe), retrying on the shared wheel. A failed call queues one retry entry for
// its key; the opposite call (and the same call again) cancels it; entries end on success, or on
// give-up — removed and reported, unlike Dubbo, which kept them forever; recover() re-sends
// everything after a registry reconnect. Every Registry (registry.h) runs its engine through one.
// Options and observers are failback's (<wheelbeat/tasks/failback.h>): registryRetry and check of
// tasks::FailbackOptions, tasks::FailbackListener, tasks::FailbackMetrics.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/registry/backend.h>
#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/retry_budget.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace wheelbeat::registry {

// One retry entry that a stop() handed back (it never completed).
struct PendingRetry {
  tasks::FailbackOp op = tasks::FailbackOp::Register;
  std::string key;                           // url or service
  std::shared_ptr<NotifyListener> listener;  // subscribe / unsubscribe only
  std::int64_t attempts = 0;                 // retries already made

  friend bool operator==(const PendingRetry&, const PendingRetry&) = default;
};

// Dubbo's FailbackRegistry, with async backends and give-up.
//
// Keys: a registration is keyed by its url; a subscription by (service, listener). Per key:
//   - A call first updates the wanted state (register adds the url to registered(), unregister
//     removes it; subscribe / unsubscribe likewise for subscribed()), cancels any retry entry of
//     that key (the opposite call's, or the same call's: Dubbo's removeFailedRegistered & co),
//     supersedes any call of that key still in flight (its late result is ignored), then calls
//     the backend.
//   - A failure queues ONE retry entry for the key (attempt 1 after the policy's first delay);
//     each failed retry asks the policy again; a refusal removes the entry and reports the
//     give-up (FailbackListener::onGiveUp, FailbackMetrics::giveUps) — the wanted state stays,
//     so a later recover() tries again.
//   - check (FailbackOptions::check): a call whose FIRST attempt fails is not retried; the call
//     is undone (the wanted state returns to what it was) and its completion gets the failure.
//     Retries and recover() never check.
// recover(): after the backend reconnected, re-sends every registration and subscription of the
// wanted state at the next tick (their pending entries are replaced); failures retry as above.
// Order: the calls of one key reach the backend in the order they were made, retries included
// (a retry of a superseded call is never handed over after the newer call), so the backend's
// final state is the caller's last call. Backends must not block waiting for another thread.
// Completions: a call's `done` (optional) is called exactly once with the first attempt's outcome
// (retrying = true when a retry was queued), on the thread that completed the backend call.
//
// Threads: every member function may be called from any thread, also from a backend completion,
// a listener or a NotifyListener. The state lock is never held while the backend, a listener or
// a completion is called; only the recursive key-order lock is held across the hand-off to the
// backend (hence: backends must not block). The timer must outlive this object; retries scheduled
// on the wheel hold only a weak reference, so destroying the registry (which cancels every entry)
// is safe at any time, also while backend calls are in flight. The registry shares ownership of
// the backend: when calls are in flight at destruction, the last reference may be dropped on the
// thread that completes them, so a backend's destructor must not join that thread.
class FailbackRegistry {
public:
  // Throws std::invalid_argument for invalid options (see validate()). `seed` seeds the jitter of
  // the retry entries (0 = std::random_device). `budget` (may be null) is shared by the entries.
  FailbackRegistry(core::HashedWheelTimer& timer, std::shared_ptr<RegistryBackend> backend,
                   tasks::FailbackOptions options = {},
                   std::shared_ptr<tasks::FailbackListener> listener = nullptr,
                   std::shared_ptr<tasks::FailbackMetrics> metrics = nullptr,
                   std::shared_ptr<tasks::RetryBudget> budget = nullptr, std::uint64_t seed = 0);
  ~FailbackRegistry();
  FailbackRegistry(const FailbackRegistry&) = delete;
  FailbackRegistry& operator=(const FailbackRegistry&) = delete;

  void registerUrl(const std::string& url, tasks::Completion done = nullptr);
  void unregisterUrl(const std::string& url, tasks::Completion done = nullptr);
  // Throws std::invalid_argument if `listener` is null (nothing changes).
  void subscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                 tasks::Completion done = nullptr);
  void unsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                   tasks::Completion done = nullptr);
  void recover();

  // Cancels every retry entry and returns them (sorted by op, key); later calls are refused
  // with std::logic_error, late backend results are ignored. Called by the destructor.
  std::vector<PendingRetry> stop();

  // The wanted state: registered urls (sorted) and subscriptions (sorted by service).
  [[nodiscard]] std::vector<std::string> registered() const;
  [[nodiscard]] std::vector<std::pair<std::string, std::shared_ptr<NotifyListener>>> subscribed()
      const;
  // Retry entries now queued (waiting on the wheel or with a retry in flight), sorted by op, key.
  [[nodiscard]] std::vector<PendingRetry> pendingRetries() const;
  [[nodiscard]] std::size_t pendingRetryCount() const;

private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace wheelbeat::registry
