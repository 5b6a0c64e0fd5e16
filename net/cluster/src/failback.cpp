// ServiceClient's failback mode: a call whose attempt failed ends at once as an empty success
// (CallOutcome::failback) and is handed to a tasks::FailbackInvoker, which retries it in the
// background (its policy's delays, each retry on a provider other than the one that failed last,
// the service's retry budget) — Dubbo's FailbackClusterInvoker.
//
// Threads: the invoker picks a provider on the wheel's thread (failbackSelect reads the provider
// list copied by counted()), and each retry's attempt is posted to the loop, where the
// providers' clients live.
#include "service_client_impl.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/tasks/error_names.h>

#include <fmt/format.h>

namespace wheelbeat::cluster {

void ServiceClient::Impl::handOff(std::uint64_t id, Call& call, const CallResult& result) {
  std::string failedUrl;
  if (result.provider) {
    if (const auto* p = providers_.find(*result.provider)) failedUrl = p->url;
  }
  std::string name = fmt::format("{} call {}", service_, id);
  {
    const std::lock_guard lock(statsMutex_);
    held_.emplace(name, HeldCall{call.body, call.options, failedUrl, 0});
  }
  const auto weak = weak_from_this();
  auto select = [weak](const std::string& avoid) -> std::optional<std::string> {
    const auto self = weak.lock();
    return self ? self->failbackSelect(avoid) : std::nullopt;
  };
  auto attempt = [weak, body = call.body, options = call.options](const std::string& url,
                                                                  tasks::Completion done) {
    const auto self = weak.lock();
    if (!self) {
      done(tasks::CallResult::failure(std::string(tasks::errors::kDisconnected), "client gone"));
      return;
    }
    self->failbackAttempt(body, options, url, std::move(done));
  };
  auto ended = [weak, name, options = call.options](const tasks::CallResult& r) {
    if (const auto self = weak.lock()) self->failbackEnded(name, options, r);
  };
  try {
    failback_->adopt(name, failedUrl,
                     tasks::CallResult::failure(result.error, "the call's attempts failed"),
                     std::move(select), std::move(attempt), std::move(ended));
  } catch (const std::exception& e) {  // stopped by close(): nothing will retry it
    core::log(core::LogLevel::Warn, "cluster: {} not handed to failback: {}", name, e.what());
    const std::lock_guard lock(statsMutex_);
    held_.erase(name);
  }
}

std::optional<std::string> ServiceClient::Impl::failbackSelect(const std::string& avoid) {
  const std::lock_guard lock(statsMutex_);
  std::vector<std::string> urls;
  urls.reserve(figures_.size());
  for (const ProviderFigure& f : figures_) urls.push_back(f.url);
  return tasks::pickEndpoint(urls, avoid, failbackPicks_++);
}

// One background retry, on the loop: an attempt with the call's deadline (at most the attempt
// timeout) to `url`, counted like any attempt for the provider's latency and ejection.
void ServiceClient::Impl::failbackAttempt(const std::string& body, const CallOptions& options,
                                          const std::string& url, tasks::Completion done) {
  auto shared = std::make_shared<tasks::Completion>(std::move(done));
  const auto run = [this, body, options, url, shared] {
    const auto fail = [&](std::string_view error, std::string message) {
      (*shared)(tasks::CallResult::failure(std::string(error), std::move(message)));
    };
    const auto id = providers_.idOf(url);
    const auto client = id ? providers_.connected(*id) : nullptr;
    if (closed_ || !client) {
      fail(tasks::errors::kNoEndpoint, fmt::format("{} is not connected", url));
      return;
    }
    const nanoseconds deadline = options.deadline.value_or(options_.deadline);
    const nanoseconds timeout = options_.attemptTimeout > nanoseconds(0)
                                    ? std::min(options_.attemptTimeout, deadline)
                                    : deadline;
    const nanoseconds at = steadyNow();
    providers_.sent(*id, at);
    const auto r = client->channel().request(
        body, timeout,
        [weak = weak_from_this(), provider = *id, at, shared](const net::CallResult& result) {
          const std::string error(net::errorName(result));
          if (const auto self = weak.lock()) {
            const nanoseconds now = steadyNow();
            self->providers_.finished(provider, at);
            const bool answered = result.status == net::CallStatus::Ok;
            self->providers_.outcome(provider, error.empty() || !tasks::cluster::retryable(error),
                                     answered ? now - at : nanoseconds(0), now);
          }
          (*shared)(error.empty() ? tasks::CallResult::success()
                                  : tasks::CallResult::failure(error, "failback retry failed"));
        },
        options.serialization);
    if (r.sent != net::SendResult::Queued) {
      providers_.finished(*id, at);
      fail(net::errorName(r.sent), fmt::format("{} refused the request", url));
    }
  };
  if (!loop_.post(run)) {
    (*shared)(tasks::CallResult::failure(std::string(tasks::errors::kDisconnected),
                                         "the loop is stopped"));
  }
}

void ServiceClient::Impl::failbackEnded(const std::string& name, const CallOptions& options,
                                        const tasks::CallResult& result) {
  {
    const std::lock_guard lock(statsMutex_);
    held_.erase(name);
  }
  if (!options.failbackDone) return;
  try {
    options.failbackDone(result);
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "cluster: a failbackDone callback threw: {}", e.what());
  } catch (...) {
    core::log(core::LogLevel::Error, "cluster: a failbackDone callback threw");
  }
}

// close(): the retries stop; the calls waiting for one come back with what is known of them.
std::vector<ServiceClient::HeldCall> ServiceClient::Impl::stopFailback() {
  std::vector<HeldCall> out;
  if (!failback_) return out;
  const auto stopped = failback_->stop();
  const std::lock_guard lock(statsMutex_);
  for (const auto& s : stopped) {
    const auto it = held_.find(s.name);
    if (it == held_.end()) continue;
    HeldCall h = std::move(it->second);
    held_.erase(it);
    h.lastProvider = s.lastEndpoint;
    h.retries = std::max<std::int64_t>(0, s.attempts - 1);  // the last one never ran
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace wheelbeat::cluster
