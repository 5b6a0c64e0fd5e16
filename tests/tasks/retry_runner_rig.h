// Helpers of the RetryRunner tests: a scripted flaky operation that records the time of every
// attempt and keeps its completions, and a recorder of final results.
#pragma once

#include "fake_channel.h"

#include <wheelbeat/tasks/error_names.h>
#include <wheelbeat/tasks/retry_runner.h>

#include <doctest/doctest.h>

#include <deque>
#include <string>
#include <thread>
#include <vector>

namespace wbtest {

using wheelbeat::tasks::AttemptDone;
using wheelbeat::tasks::RetryHandle;
using wheelbeat::tasks::RetryOutcome;
using wheelbeat::tasks::retryOutcomeName;
using wheelbeat::tasks::RetryResult;
using wheelbeat::tasks::RetryRunner;
using wheelbeat::tasks::RetryRunnerOptions;
namespace errors = wheelbeat::tasks::errors;

// Attempt n fails with script[n - 1] ("" = succeed, "hang" = never complete, "defer" = keep the
// completion in `open`); attempts beyond the script succeed. Records each attempt's time.
struct Flaky {
  Flaky(const Rig* r, std::vector<std::string> s) : rig(r), script(std::move(s)) {}

  const Rig* rig;
  std::vector<std::string> script;
  std::vector<ns> at;  // elapsed time of each attempt
  std::vector<AttemptDone> open;

  wheelbeat::tasks::RetryOperation operation() {
    return [this](std::int64_t attempt, AttemptDone done) {
      at.push_back(rig->elapsed());
      const auto i = static_cast<std::size_t>(attempt - 1);
      const std::string step = i < script.size() ? script[i] : "";
      if (step == "hang") return;
      if (step == "defer") {
        open.push_back(std::move(done));
      } else if (step.empty()) {
        done.succeed();
      } else {
        done.fail(step);
      }
    };
  }
};

// Every final result, with the thread it came on.
struct Finals {
  std::vector<RetryResult> results;
  std::vector<std::thread::id> threads;

  wheelbeat::tasks::RetryCallback callback() {
    return [this](const RetryResult& r) {
      results.push_back(r);
      threads.push_back(std::this_thread::get_id());
    };
  }
  [[nodiscard]] const RetryResult& only() const {
    REQUIRE(results.size() == 1);
    return results.front();
  }
};

// Options without jitter: Fixed `delay`, or Exponential from it when multiplier > 1.
inline RetryOptions plainPolicy(ns delay, std::int64_t maxAttempts, double multiplier = 1.0,
                                ns maxDelay = 10s) {
  RetryOptions o;
  o.backoff = multiplier > 1.0 ? Backoff::Exponential : Backoff::Fixed;
  o.initialDelay = delay;
  o.multiplier = multiplier;
  o.maxDelay = multiplier > 1.0 ? maxDelay : delay;
  o.jitter = Jitter::None;
  o.maxAttempts = maxAttempts;
  return o;
}

}  // namespace wbtest
