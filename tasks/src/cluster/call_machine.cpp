#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/tasks/cluster/call_machine.h>
#include <wheelbeat/tasks/error_names.h>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace wheelbeat::tasks::cluster {
namespace {

using std::chrono::nanoseconds;

bool hedgingMode(Mode mode) noexcept { return mode == Mode::Failover || mode == Mode::Failfast; }

}  // namespace

std::string_view modeName(Mode mode) noexcept {
  switch (mode) {
    case Mode::Failover: return "failover";
    case Mode::Failfast: return "failfast";
    case Mode::Failsafe: return "failsafe";
    case Mode::Failback: return "failback";
    case Mode::Forking: return "forking";
    case Mode::Broadcast: return "broadcast";
  }
  return "unknown";
}

std::string_view attemptKindName(AttemptKind kind) noexcept {
  switch (kind) {
    case AttemptKind::First: return "first";
    case AttemptKind::Retry: return "retry";
    case AttemptKind::Hedge: return "hedge";
  }
  return "unknown";
}

bool retryable(std::string_view error) noexcept {
  return error == errors::kTimeout || error == errors::kDisconnected ||
         error == errors::kReadIdle || error == errors::kOverloaded || error == errors::kNoEndpoint;
}

void validate(const CallPolicy& p) {
  const auto fail = [](std::string_view field, const std::string& value,
                       std::string_view expected) {
    throw std::invalid_argument(
        fmt::format("CallPolicy.{} = {} (expected: {})", field, value, expected));
  };
  if (p.retries > 100) fail("retries", std::to_string(p.retries), "0..100");
  if (p.forks < 1 || p.forks > 100) fail("forks", std::to_string(p.forks), "1..100");
  if (p.deadline <= nanoseconds(0)) fail("deadline", core::formatDurationExact(p.deadline), "> 0");
  if (p.attemptTimeout < nanoseconds(0)) {
    fail("attemptTimeout", core::formatDurationExact(p.attemptTimeout), ">= 0 (0: the time left)");
  }
  if (p.hedge && !hedgingMode(p.mode)) {
    fail("hedge", fmt::format("true with mode {}", modeName(p.mode)),
         "hedging with failover or failfast only");
  }
}

CallMachine::CallMachine(CallPolicy policy) : policy_(policy) { validate(policy_); }

std::size_t CallMachine::inFlight() const noexcept {
  return static_cast<std::size_t>(std::count_if(
      sent_.begin(), sent_.end(), [](const Sent& s) { return s.state == State::InFlight; }));
}

std::vector<std::uint64_t> CallMachine::tried() const {
  std::vector<std::uint64_t> ids;
  ids.reserve(sent_.size());
  for (const Sent& s : sent_) ids.push_back(s.provider);
  return ids;
}

Attempt CallMachine::record(std::uint64_t provider, AttemptKind kind, nanoseconds now) {
  const nanoseconds left = started_ + policy_.deadline - now;
  const nanoseconds timeout =
      policy_.attemptTimeout > nanoseconds(0) ? std::min(policy_.attemptTimeout, left) : left;
  sent_.push_back({provider, kind, State::InFlight});
  lastSendAt_ = now;
  return {static_cast<std::uint32_t>(sent_.size() - 1), provider, timeout, kind};
}

// The next attempt's provider (a hedge or a suspect's retry: one not tried yet), if there is time
// left, then the context's permission for an extra attempt. nullopt: none is sent.
std::optional<Attempt> CallMachine::newAttempt(CallContext& context, AttemptKind kind,
                                               nanoseconds now, bool suspectRetry) {
  if (now >= started_ + policy_.deadline) return std::nullopt;
  const std::vector<std::uint64_t> exclude = tried();
  const std::optional<std::uint64_t> provider = context.pick(exclude, now);
  if (!provider) return std::nullopt;
  const bool again = std::find(exclude.begin(), exclude.end(), *provider) != exclude.end();
  if (again && (kind == AttemptKind::Hedge || suspectRetry)) return std::nullopt;
  if (kind != AttemptKind::First && !context.allowExtra(kind, now)) return std::nullopt;
  return record(*provider, kind, now);
}

Step CallMachine::start(CallContext& context, nanoseconds now) {
  if (begun_) throw std::logic_error("CallMachine::start: the call has started already");
  begun_ = true;
  started_ = now;
  Step step;
  if (policy_.mode == Mode::Broadcast) {
    for (const std::uint64_t id : context.everyone(now)) {
      step.sends.push_back(record(id, AttemptKind::First, now));
    }
  } else {
    const std::uint32_t wanted = policy_.mode == Mode::Forking ? policy_.forks : 1;
    for (std::uint32_t i = 0; i < wanted; ++i) {
      const std::vector<std::uint64_t> exclude = tried();
      const auto provider = context.pick(exclude, now);
      if (!provider || std::find(exclude.begin(), exclude.end(), *provider) != exclude.end()) {
        break;  // no (other) provider
      }
      step.sends.push_back(record(*provider, AttemptKind::First, now));
    }
  }
  if (step.sends.empty()) {
    endFailed(step, std::nullopt, std::string(errors::kNoEndpoint), now);
    return step;
  }
  setWake(step, context, now);
  return step;
}

Step CallMachine::onAnswer(CallContext& context, std::uint32_t index, const AttemptOutcome& outcome,
                           nanoseconds now) {
  if (index >= sent_.size()) {
    throw std::invalid_argument(fmt::format(
        "CallMachine::onAnswer: attempt {} was never sent ({} were)", index, sent_.size()));
  }
  Step step;
  if (finished_ || sent_[index].state != State::InFlight) {
    step.late = true;
    return step;
  }
  sent_[index].state = State::Answered;
  if (policy_.mode == Mode::Broadcast) {
    if (!outcome.ok && !firstFailure_) firstFailure_.emplace(index, outcome.error);
    if (inFlight() > 0) {
      setWake(step, context, now);
    } else if (firstFailure_) {
      finish(step, decided(firstFailure_->first, false, firstFailure_->second), now);
    } else {
      finish(step, decided(index, true, ""), now);
    }
    return step;
  }
  if (outcome.ok) {
    finish(step, decided(index, true, ""), now);
  } else {
    afterFailure(context, step, index, outcome, now);
  }
  return step;
}

void CallMachine::afterFailure(CallContext& context, Step& step, std::uint32_t index,
                               const AttemptOutcome& outcome, nanoseconds now) {
  if (policy_.mode == Mode::Failover && !retryable(outcome.error)) {
    endFailed(step, index, outcome.error, now);  // an answer: the application's error
    return;
  }
  if (policy_.mode == Mode::Failover && retries_ < policy_.retries) {
    if (auto retry = newAttempt(context, AttemptKind::Retry, now)) {
      ++retries_;
      step.sends.push_back(*retry);
    }
  }
  if (inFlight() > 0) {
    setWake(step, context, now);
  } else {
    endFailed(step, index, outcome.error, now);
  }
}

Step CallMachine::onWake(CallContext& context, nanoseconds now) {
  Step step;
  if (finished_ || !begun_) return step;
  if (now >= started_ + policy_.deadline) {
    CallResult r;
    r.error = std::string(errors::kTimeout);
    finish(step, std::move(r), now);
    return step;
  }
  if (policy_.hedge && !hedged_ && inFlight() > 0) {
    const auto delay = context.hedgeDelay(now);
    if (delay && now >= lastSendAt_ + *delay) {
      hedged_ = true;  // one hedge per call, sent or not
      if (auto hedge = newAttempt(context, AttemptKind::Hedge, now)) step.sends.push_back(*hedge);
    }
  }
  setWake(step, context, now);
  return step;
}

Step CallMachine::onSuspect(CallContext& context, std::uint32_t index, nanoseconds now) {
  if (index >= sent_.size()) {
    throw std::invalid_argument(fmt::format(
        "CallMachine::onSuspect: attempt {} was never sent ({} were)", index, sent_.size()));
  }
  Step step;
  Sent& s = sent_[index];
  if (finished_ || policy_.mode != Mode::Failover || s.state != State::InFlight || s.suspected ||
      inFlight() > 1 || retries_ >= policy_.retries) {
    return step;  // no wake in the step: the one armed before stays
  }
  s.suspected = true;
  if (auto retry = newAttempt(context, AttemptKind::Retry, now, true)) {
    ++retries_;
    step.sends.push_back(*retry);
    setWake(step, context, now);
  }
  return step;
}

void CallMachine::setWake(Step& step, CallContext& context, nanoseconds now) {
  nanoseconds at = started_ + policy_.deadline;
  if (policy_.hedge && !hedged_ && inFlight() > 0) {
    if (const auto delay = context.hedgeDelay(now)) {
      at = std::min(at, std::max(now, lastSendAt_ + *delay));
    }
  }
  step.wakeAt = at;
}

CallResult CallMachine::decided(std::uint32_t index, bool ok, std::string error) const {
  CallResult r;
  r.ok = ok;
  r.error = std::move(error);
  r.provider = sent_[index].provider;
  r.attempt = index;
  r.hedgeWon = sent_[index].kind == AttemptKind::Hedge;
  return r;
}

void CallMachine::endFailed(Step& step, std::optional<std::uint32_t> index,
                            const std::string& error, nanoseconds now) {
  CallResult r;
  if (index) r = decided(*index, false, error);
  r.error = error;
  if (policy_.mode == Mode::Failsafe || policy_.mode == Mode::Failback) {
    r.ok = true;  // an empty success; `error` says what was swallowed or handed on
    r.failsafe = policy_.mode == Mode::Failsafe;
    r.failback = policy_.mode == Mode::Failback;
  }
  finish(step, std::move(r), now);
}

void CallMachine::finish(Step& step, CallResult result, nanoseconds now) {
  for (std::uint32_t i = 0; i < sent_.size(); ++i) {
    if (sent_[i].state == State::InFlight) {
      sent_[i].state = State::Dropped;
      step.dropped.push_back(i);
    }
  }
  result.attempts = static_cast<std::uint32_t>(sent_.size());
  result.latency = now - started_;
  finished_ = true;
  step.result = std::move(result);
  step.wakeAt.reset();
}

}  // namespace wheelbeat::tasks::cluster
