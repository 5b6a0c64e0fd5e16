// The registry's data path, below every Registry: NotifyListener (what a subscriber hears) and
// RegistryBackend (the four asynchronous calls a registry engine serves, also what a
// FailbackRegistry drives). Outcomes are failback's CallResult / Completion
// (<wheelbeat/tasks/failback.h>).
#pragma once

#include <wheelbeat/tasks/failback.h>

#include <memory>
#include <string>
#include <vector>

namespace wheelbeat::registry {

// Receives the provider list of a subscribed service each time it changes (and once after each
// successful subscribe). Thread: whatever thread the backend notifies on; keep it short.
class NotifyListener {
public:
  virtual ~NotifyListener() = default;
  virtual void notify(const std::string& service, const std::vector<std::string>& providers) = 0;
};

// A registry engine (embedded, Redis, a test fake). Every call is asynchronous: it must call
// `done` exactly once, from any thread (possibly before returning); a call that throws counts as
// a failure with error "exception". Calls for one backend may come from several threads.
class RegistryBackend {
public:
  virtual ~RegistryBackend() = default;
  virtual void doRegister(const std::string& url, tasks::Completion done) = 0;
  virtual void doUnregister(const std::string& url, tasks::Completion done) = 0;
  virtual void doSubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                           tasks::Completion done) = 0;
  virtual void doUnsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                             tasks::Completion done) = 0;
};

}  // namespace wheelbeat::registry
