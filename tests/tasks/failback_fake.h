// Helpers of the failback tests: a scripted RegistryBackend (immediate or deferred completions)
// and a listener that records every failback event as one line.
#pragma once

#include "fake_channel.h"

#include <wheelbeat/tasks/failback.h>

#include <fmt/format.h>

#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace wbtest {

using wheelbeat::tasks::CallResult;
using wheelbeat::tasks::Completion;
using wheelbeat::tasks::FailbackInvoker;
using wheelbeat::tasks::FailbackListener;
using wheelbeat::tasks::FailbackMetrics;
using wheelbeat::tasks::FailbackMetricsSnapshot;
using wheelbeat::tasks::FailbackOp;
using wheelbeat::tasks::failbackOpName;
using wheelbeat::tasks::FailbackOptions;
using wheelbeat::tasks::FailbackRegistry;
using wheelbeat::tasks::NotifyListener;
using wheelbeat::tasks::PendingRetry;
using wheelbeat::tasks::RegistryBackend;

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

// Records every event, e.g. "scheduled register a #1 5s", "recovered register a 1",
// "gave-up register a max-attempts disconnected", "rejected call-3 2".
class RecordingFailbackListener final : public FailbackListener {
public:
  void onRetryScheduled(FailbackOp op, const std::string& key, std::int64_t attempt,
                        ns delay) override {
    add(fmt::format("scheduled {} {} #{} {}", failbackOpName(op), key, attempt,
                    std::chrono::duration_cast<std::chrono::milliseconds>(delay).count()));
  }
  void onRecovered(FailbackOp op, const std::string& key, std::int64_t attempts) override {
    add(fmt::format("recovered {} {} {}", failbackOpName(op), key, attempts));
  }
  void onGiveUp(FailbackOp op, const std::string& key, wheelbeat::tasks::GiveUp reason,
                const CallResult& last) override {
    add(fmt::format("gave-up {} {} {} {}", failbackOpName(op), key, giveUpName(reason),
                    last.error));
  }
  void onRejected(const std::string& key, std::int64_t pending) override {
    add(fmt::format("rejected {} {}", key, pending));
  }

  std::vector<std::string> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }

private:
  void add(std::string e) {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(e));
  }
  mutable std::mutex mutex_;
  std::vector<std::string> events_;
};

struct NullNotify final : NotifyListener {
  void notify(const std::string& /*service*/, const std::vector<std::string>& /*p*/) override {}
};

// Collects the outcomes a Completion receives.
struct Outcomes {
  std::vector<CallResult> seen;
  Completion sink() {
    return [this](const CallResult& r) { seen.push_back(r); };
  }
};

}  // namespace wbtest
