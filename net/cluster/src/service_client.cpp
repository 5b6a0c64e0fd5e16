// ServiceClient: the calls (begin, attempts, answers, wake-ups, the end) on the loop thread, over
// ProviderSet (provider_set.h) and tasks/cluster/'s CallMachine.
#include "service_client_impl.h"

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/tasks/error_names.h>

#include <fmt/format.h>

#include <stdexcept>

namespace wheelbeat::cluster {

bool ServiceClient::Impl::Context::allowExtra(AttemptKind kind, nanoseconds now) {
  // The budget is looked at before the cap counts an extra, and spent only after it. The cap is
  // a hedge's alone: a retry follows a failure and the budget (with its per-second reserve)
  // bounds it, so a client sending one call a second still fails over.
  const bool capped = kind == AttemptKind::Hedge;
  int refusedBy = -1;
  if (impl_.budget_->available(now) <= 0) {
    refusedBy = 0;
  } else if (capped && !impl_.loadCap_.tryExtra(now)) {
    refusedBy = 1;
  } else if (!impl_.budget_->tryWithdraw(now)) {
    refusedBy = 0;
  }
  if (refusedBy < 0) return true;
  const std::lock_guard lock(impl_.statsMutex_);
  ++impl_.stats_
        .extraRefused[kind == AttemptKind::Hedge ? 1 : 0][static_cast<std::size_t>(refusedBy)];
  return false;
}

ServiceClient::Impl::Impl(net::EventLoop& loop, core::HashedWheelTimer& timer,
                          registry::Registry& registry, std::string service, ClusterOptions options)
    : loop_(loop),
      timer_(timer),
      options_((validate(options), std::move(options))),
      service_(std::move(service)),
      directory_(loop, timer, registry, service_, options_.directory, {},
                 registry::DirectoryEvents{.onList =
                                               [this](const std::vector<std::string>& urls) {
                                                 providers_.follow(urls, steadyNow());
                                                 counted(steadyNow());
                                               }}),
      providers_(directory_, options_.outlier, options_.balancer, options_.seed),
      hedgeDelay_(options_.hedgeDelay),
      loadCap_(options_.maxExtraPercent),
      budget_(std::make_shared<tasks::RetryBudget>(options_.budget)),
      failbackMetrics_(std::make_shared<tasks::FailbackMetrics>()) {
  if (options_.mode == tasks::cluster::Mode::Failback) {
    failback_ = std::make_unique<tasks::FailbackInvoker>(timer_, options_.failback, nullptr,
                                                         failbackMetrics_, budget_, options_.seed);
  }
}

CallPolicy ServiceClient::Impl::policyOf(const CallOptions& options) const {
  CallPolicy p;
  p.mode = options_.mode;
  p.retries = options_.retries;
  p.forks = options_.forks;
  p.deadline = options.deadline.value_or(options_.deadline);
  p.attemptTimeout = options_.attemptTimeout;
  p.hedge = options_.hedge;
  return p;
}

void ServiceClient::Impl::post(std::function<void()> fn) {
  (void)loop_.post([weak = weak_from_this(), fn = std::move(fn)] {
    if (const auto self = weak.lock()) fn();
  });
}

void ServiceClient::Impl::call(std::string body, CallOptions options, CallDone done) {
  if (!done) throw std::invalid_argument("ServiceClient::call: an empty done callback");
  if (options.deadline && *options.deadline <= nanoseconds(0)) {
    throw std::invalid_argument(fmt::format("ServiceClient::call: deadline = {} (expected: > 0)",
                                            core::formatDurationExact(*options.deadline)));
  }
  if (closing_.load(std::memory_order_acquire)) {
    throw std::logic_error("ServiceClient::call: the client is closed");
  }
  // Refused here, naming it, rather than by every attempt's channel as "bad-request".
  const std::size_t maxBody = options_.directory.client.codec.maxBody;
  if (body.size() > maxBody) {
    throw std::invalid_argument(fmt::format(
        "ServiceClient::call: body of {} bytes (expected: at most directory.client.codec.maxBody "
        "= {})",
        body.size(), maxBody));
  }
  // The machine validates the policy here, on the caller's thread: a bad call changes nothing.
  auto c = std::make_unique<Call>(policyOf(options), std::move(body), options, std::move(done));
  auto shared = std::make_shared<std::unique_ptr<Call>>(std::move(c));
  if (!loop_.post([weak = weak_from_this(), shared] {
        if (const auto self = weak.lock()) self->begin(std::move(*shared));
      })) {
    throw std::logic_error("ServiceClient::call: the loop is stopped");
  }
}

void ServiceClient::Impl::begin(std::unique_ptr<Call> owned) {
  if (closed_) {
    CallOutcome o;
    o.error = std::string(tasks::errors::kDisconnected);
    owned->done(o);
    return;
  }
  const nanoseconds now = steadyNow();
  if (!sweep_.isPending()) armSweep();
  budget_->onRequest(now);
  loadCap_.onCall(now);
  const std::uint64_t id = nextCall_++;
  Call& call = *calls_.emplace(id, std::move(owned)).first->second;
  {
    const std::lock_guard lock(statsMutex_);
    ++stats_.calls;
  }
  Context context(*this, call);
  apply(id, call, call.machine.start(context, now));
}

// Carries out a step: its sends, then its end or its wake-up.
void ServiceClient::Impl::apply(std::uint64_t id, Call& call, const Step& step) {
  for (const Attempt& attempt : step.sends) send(id, call, attempt);
  for (const std::uint32_t index : step.dropped) {
    Sent& s = call.sent[index];
    if (s.open) providers_.finished(s.provider, s.at);
    s.open = false;
  }
  if (step.result) {
    end(id, call, *step.result);
    return;
  }
  if (!step.wakeAt) return;
  (void)call.wake.cancel();
  const nanoseconds delay = *step.wakeAt - steadyNow();
  try {
    call.wake = timer_.newTimeout(
        [loop = &loop_, weak = weak_from_this(), id] {
          // On the wheel's thread: hand over to the loop without taking a reference here.
          (void)loop->post([weak, id] {
            if (const auto self = weak.lock()) self->woke(id);
          });
        },
        delay);
  } catch (const std::exception& e) {  // the timer stopped: the call cannot time out any more
    core::log(core::LogLevel::Warn, "cluster: call {} has no wake-up: {}", id, e.what());
  }
}

void ServiceClient::Impl::send(std::uint64_t id, Call& call, const Attempt& attempt) {
  const nanoseconds now = steadyNow();
  call.sent.resize(std::max<std::size_t>(call.sent.size(), attempt.index + 1));
  call.sent[attempt.index] = {attempt.provider, now, true};
  {
    const std::lock_guard lock(statsMutex_);
    ++stats_.attempts[static_cast<std::size_t>(attempt.kind)];
  }
  providers_.sent(attempt.provider, now);
  const auto client = providers_.connected(attempt.provider);
  net::RequestResult r{net::SendResult::NotConnected, 0};
  if (client) {
    r = client->channel().request(
        call.body, attempt.timeout,
        [weak = weak_from_this(), id, index = attempt.index](const net::CallResult& result) {
          if (const auto self = weak.lock()) self->answered(id, index, result);
        },
        call.options.serialization);
  }
  if (r.sent != net::SendResult::Queued) {
    // Refused at once: the answer comes as a failure, after this step (never inside it).
    post([this, id, index = attempt.index, error = std::string(net::errorName(r.sent))] {
      decide(id, index, error, net::CallResult{});
    });
  }
}

void ServiceClient::Impl::answered(std::uint64_t id, std::uint32_t index,
                                   const net::CallResult& result) {
  decide(id, index, std::string(net::errorName(result)), result);
}

void ServiceClient::Impl::decide(std::uint64_t id, std::uint32_t index, const std::string& error,
                                 net::CallResult result) {
  const nanoseconds now = steadyNow();
  const auto it = calls_.find(id);
  Call* call = it == calls_.end() ? nullptr : it->second.get();
  Sent* sent = call != nullptr && index < call->sent.size() ? &call->sent[index] : nullptr;
  if (sent == nullptr || !sent->open) {  // the call ended, or dropped this attempt: a loser
    const std::lock_guard lock(statsMutex_);
    ++stats_.lateAnswers;
    return;
  }
  sent->open = false;
  providers_.finished(sent->provider, sent->at);
  // The provider answered (even with an application's error) unless the error says it did not.
  const bool healthy = error.empty() || !tasks::cluster::retryable(error);
  const bool answeredAtAll = result.status == net::CallStatus::Ok;
  providers_.outcome(sent->provider, healthy, answeredAtAll ? now - sent->at : nanoseconds(0), now);
  if (error.empty()) hedgeDelay_.observe(now - sent->at, now);
  if (answeredAtAll) call->response = std::move(result);
  Context context(*this, *call);
  apply(id, *call, call->machine.onAnswer(context, index, {error.empty(), error}, now));
}

void ServiceClient::Impl::woke(std::uint64_t id) {
  const auto it = calls_.find(id);
  if (it == calls_.end()) return;
  Call& call = *it->second;
  Context context(*this, call);
  apply(id, call, call.machine.onWake(context, steadyNow()));
}

void ServiceClient::Impl::end(std::uint64_t id, Call& call, const CallResult& result) {
  (void)call.wake.cancel();
  CallOutcome o;
  o.ok = result.ok;
  o.error = result.error;
  o.attempts = result.attempts;
  o.hedgeWon = result.hedgeWon;
  o.failsafe = result.failsafe;
  o.latency = result.latency;
  if (result.provider) {
    if (const auto* p = providers_.find(*result.provider)) o.provider = p->url;
  }
  o.failback = result.failback;
  if (result.attempt && !result.failsafe && !result.failback) {
    o.response = std::move(call.response);
  }
  if (result.failback) handOff(id, call, result);
  {
    const std::lock_guard lock(statsMutex_);
    ++(o.failsafe   ? stats_.failsafe
       : o.failback ? stats_.failback
       : o.ok       ? stats_.ok
                    : stats_.failed);
    stats_.hedgesWon += o.hedgeWon ? 1 : 0;
  }
  const CallDone done = std::move(call.done);
  calls_.erase(id);  // `call` is gone from here
  try {
    done(o);
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "cluster: a call's done callback threw: {}", e.what());
  } catch (...) {
    core::log(core::LogLevel::Error, "cluster: a call's done callback threw");
  }
}

}  // namespace wheelbeat::cluster
