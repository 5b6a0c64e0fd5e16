// ServiceClient's upkeep (the sweep of suspect providers, the figures, close) and its public
// facade over ServiceClient::Impl.
#include "service_client_impl.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/tasks/error_names.h>

namespace wheelbeat::cluster {

// Every 5 ms while calls run: suspicion of providers whose calls wait too long; every outlier
// interval, the ejector's evaluation.
void ServiceClient::Impl::armSweep() {
  if (closed_) return;
  try {
    sweep_ = timer_.newTimeout(
        [loop = &loop_, weak = weak_from_this()] {
          (void)loop->post([weak] {
            if (const auto self = weak.lock()) self->sweep();
          });
        },
        std::chrono::milliseconds(5));
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Warn, "cluster: no sweep of suspect providers: {}", e.what());
  }
}

void ServiceClient::Impl::counted(nanoseconds now) {
  const std::lock_guard lock(statsMutex_);
  stats_.providers = providers_.size();
  stats_.providersOut = providers_.outCount(now);
  figures_.clear();
  for (const auto& [id, p] : providers_.all()) {
    figures_.push_back({p.url, p.latency.value(), p.outstanding.size()});
  }
  for (std::size_t r = 0; r < stats_.ejections.size(); ++r) {
    stats_.ejections[r] = providers_.ejections(static_cast<EjectReason>(r));
  }
}

void ServiceClient::Impl::sweep() {
  const nanoseconds now = steadyNow();
  const bool evaluate = now - lastEvaluate_ >= options_.outlier.interval;
  if (evaluate) lastEvaluate_ = now;
  for (const std::uint64_t provider : providers_.sweep(now, evaluate)) retrySuspect(provider, now);
  counted(now);
  if (!calls_.empty()) armSweep();
}

// Every call whose attempt waits on `provider`, now suspect, may go elsewhere at once (failover;
// CallMachine::onSuspect decides). Ids first: apply() may end a call and erase it from calls_.
void ServiceClient::Impl::retrySuspect(std::uint64_t provider, nanoseconds now) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> waiting;
  for (const auto& [id, call] : calls_) {
    for (std::uint32_t i = 0; i < call->sent.size(); ++i) {
      if (call->sent[i].open && call->sent[i].provider == provider) waiting.emplace_back(id, i);
    }
  }
  for (const auto& [id, index] : waiting) {
    const auto it = calls_.find(id);
    if (it == calls_.end()) continue;
    Context context(*this, *it->second);
    apply(id, *it->second, it->second->machine.onSuspect(context, index, now));
  }
}

std::vector<ServiceClient::HeldCall> ServiceClient::Impl::close() {
  if (closing_.exchange(true)) return {};
  const auto endAll = [this] {
    closed_ = true;
    (void)sweep_.cancel();
    while (!calls_.empty()) {
      const auto it = calls_.begin();
      CallResult r;
      r.error = std::string(tasks::errors::kDisconnected);
      r.attempts = static_cast<std::uint32_t>(it->second->sent.size());
      end(it->first, *it->second, r);
    }
  };
  if (!loop_.call(endAll)) endAll();  // a stopped loop runs nothing any more: end them here
  auto held = stopFailback();
  directory_.close();
  return held;
}

ServiceClient::Stats ServiceClient::Impl::stats() const {
  Stats s;
  {
    const std::lock_guard lock(statsMutex_);
    s = stats_;
  }
  s.failbackRetries = failbackMetrics_->snapshot();
  s.failbackPending = failback_ ? static_cast<std::uint64_t>(failback_->pendingRetries()) : 0;
  return s;
}

std::vector<ServiceClient::ProviderFigure> ServiceClient::Impl::providerFigures() const {
  const std::lock_guard lock(statsMutex_);
  return figures_;
}

std::size_t ServiceClient::Impl::providers() {
  std::size_t n = 0;
  (void)loop_.call([&] { n = providers_.size(); });
  return n;
}

std::size_t ServiceClient::Impl::available() {
  std::size_t n = 0;
  (void)loop_.call([&] { n = providers_.availableCount(steadyNow()); });
  return n;
}

ServiceClient::ServiceClient(net::EventLoop& loop, core::HashedWheelTimer& timer,
                             registry::Registry& registry, std::string service,
                             ClusterOptions options) {
  if (service.empty()) throw std::invalid_argument("ServiceClient: an empty service name");
  const std::string user = "ServiceClient " + service;
  impl_ = std::make_shared<Impl>(loop, timer, registry, std::move(service), std::move(options));
  // The timer stopped under this client: no deadline would ever fire again, so it closes.
  timerUse_ = timer.use(user, [weak = std::weak_ptr<Impl>(impl_)] {
    if (const auto impl = weak.lock()) (void)impl->close();
  });
  loopUse_ = loop.use(user);
}

ServiceClient::~ServiceClient() {
  const auto held = close();
  if (!held.empty()) {
    core::log(core::LogLevel::Warn, "cluster: {} failback calls dropped with the client",
              held.size());
  }
}

void ServiceClient::start() { impl_->start(); }
std::vector<ServiceClient::HeldCall> ServiceClient::close() {
  timerUse_.quiet();  // closed: a timer stopped from now on has nothing to tell it
  return impl_->close();
}
void ServiceClient::call(std::string body, CallOptions options, CallDone done) {
  impl_->call(std::move(body), options, std::move(done));
}
ServiceClient::Stats ServiceClient::stats() const { return impl_->stats(); }

void ServiceClient::writeMetrics(core::MetricsWriter& out) const {
  const Stats s = stats();
  const auto n = [](std::uint64_t v) { return static_cast<double>(v); };
  out.counter("wheelbeat_cluster_calls_total", n(s.ok), {"ok"});
  out.counter("wheelbeat_cluster_calls_total", n(s.failed), {"failed"});
  out.counter("wheelbeat_cluster_calls_total", n(s.failsafe), {"failsafe"});
  out.counter("wheelbeat_cluster_calls_total", n(s.failback), {"failback"});
  for (std::size_t k = 0; k < s.attempts.size(); ++k) {
    out.counter("wheelbeat_cluster_attempts_total", n(s.attempts[k]),
                {attemptKindName(static_cast<AttemptKind>(k))});
  }
  for (std::size_t k = 0; k < 2; ++k) {
    for (std::size_t by = 0; by < 2; ++by) {
      out.counter("wheelbeat_cluster_extra_refused_total", n(s.extraRefused[k][by]),
                  {k == 0 ? "retry" : "hedge", by == 0 ? "budget" : "load-cap"});
    }
  }
  out.counter("wheelbeat_cluster_hedges_won_total", n(s.hedgesWon));
  out.counter("wheelbeat_cluster_late_answers_total", n(s.lateAnswers));
  for (std::size_t r = 0; r < s.ejections.size(); ++r) {
    out.counter("wheelbeat_cluster_ejections_total", n(s.ejections[r]),
                {ejectReasonName(static_cast<EjectReason>(r))});
  }
  out.gauge("wheelbeat_cluster_providers_out", n(s.providersOut));
  out.gauge("wheelbeat_cluster_providers", n(s.providers));
  out.gauge("wheelbeat_cluster_failback_pending", n(s.failbackPending));
  out.counter("wheelbeat_cluster_failback_total", n(s.failbackRetries.recovered), {"recovered"});
  out.counter("wheelbeat_cluster_failback_total", n(s.failbackRetries.giveUps), {"given-up"});
  out.counter("wheelbeat_cluster_failback_total", n(s.failbackRetries.rejected), {"rejected"});
  for (const ProviderFigure& f : impl_->providerFigures()) {
    out.gauge("wheelbeat_cluster_provider_latency_seconds",
              std::chrono::duration<double>(f.latency).count(), {f.url});
  }
}
std::vector<ServiceClient::ProviderFigure> ServiceClient::providerFigures() const {
  return impl_->providerFigures();
}
std::size_t ServiceClient::providers() const { return impl_->providers(); }
std::size_t ServiceClient::available() const { return impl_->available(); }

}  // namespace wheelbeat::cluster
