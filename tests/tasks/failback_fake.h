// Helpers of the failback tests (FailbackInvoker here; the registry's FailbackRegistry in
// tests/registry/failback/): a listener that records every failback event as one line, and a
// collector of completions.
#pragma once

#include "fake_channel.h"

#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/failback_invoker.h>

#include <fmt/format.h>

#include <mutex>
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

// Collects the outcomes a Completion receives.
struct Outcomes {
  std::vector<CallResult> seen;
  Completion sink() {
    return [this](const CallResult& r) { seen.push_back(r); };
  }
};

}  // namespace wbtest
