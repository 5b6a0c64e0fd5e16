// The FailbackRegistry tests' scripted RegistryBackend (immediate or deferred completions, a
// script of results, a registry that is down or throws), over the failback test helpers of
// tests/tasks (the manual-clock Rig, the recording listener, Outcomes).
#pragma once

#include "../../tasks/failback_fake.h"

#include <wheelbeat/registry/failback_registry.h>

#include <deque>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace wbtest {

using wheelbeat::registry::FailbackRegistry;
using wheelbeat::registry::NotifyListener;
using wheelbeat::registry::PendingRetry;
using wheelbeat::registry::RegistryBackend;

inline CallResult down() { return CallResult::failure("disconnected", "registry down"); }

class FakeBackend final : public RegistryBackend {
public:
  void doRegister(const std::string& url, Completion done) override {
    handle("register " + url, std::move(done), [this, url] { urls_.insert(url); });
  }
  void doUnregister(const std::string& url, Completion done) override {
    handle("unregister " + url, std::move(done), [this, url] { urls_.erase(url); });
  }
  void doSubscribe(const std::string& service, std::shared_ptr<NotifyListener> /*l*/,
                   Completion done) override {
    handle("subscribe " + service, std::move(done), [] {});
  }
  void doUnsubscribe(const std::string& service, std::shared_ptr<NotifyListener> /*l*/,
                     Completion done) override {
    handle("unsubscribe " + service, std::move(done), [] {});
  }

  // Scripting: results popped by the next calls, then `fallback`.
  void script(std::vector<CallResult> results) {
    std::lock_guard lock(mutex_);
    for (auto& r : results) script_.push_back(std::move(r));
  }
  void setDown(bool isDown) {
    std::lock_guard lock(mutex_);
    fallback_ = isDown ? down() : CallResult::success();
  }
  void setThrows(bool t) { throws_ = t; }
  // Deferred mode: completions wait for complete(i, result).
  void setDeferred(bool d) { deferred_ = d; }
  void complete(std::size_t i, const CallResult& result) {
    Completion done;
    {
      std::lock_guard lock(mutex_);
      done = std::move(waiting_.at(i));
    }
    done(result);
  }

  std::vector<std::string> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  std::size_t callCount() const { return calls().size(); }
  std::set<std::string> urls() const {
    std::lock_guard lock(mutex_);
    return urls_;
  }
  void forget() {  // the registry lost its state (restart)
    std::lock_guard lock(mutex_);
    urls_.clear();
  }

private:
  template <typename Apply>
  void handle(std::string call, Completion done, Apply apply) {
    if (throws_) throw std::runtime_error("backend exploded");
    CallResult result;
    {
      std::lock_guard lock(mutex_);
      calls_.push_back(std::move(call));
      if (deferred_) {
        waiting_.push_back(std::move(done));
        return;
      }
      if (!script_.empty()) {
        result = script_.front();
        script_.pop_front();
      } else {
        result = fallback_;
      }
      if (result.ok) apply();
    }
    done(result);
  }

  mutable std::mutex mutex_;
  std::vector<std::string> calls_;
  std::deque<CallResult> script_;
  CallResult fallback_ = CallResult::success();
  std::set<std::string> urls_;
  std::vector<Completion> waiting_;
  bool deferred_ = false;
  bool throws_ = false;
};

struct NullNotify final : NotifyListener {
  void notify(const std::string& /*service*/, const std::vector<std::string>& /*p*/) override {}
};

}  // namespace wbtest
