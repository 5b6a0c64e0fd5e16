// ServiceClient::Impl: the state of a ServiceClient and its loop-thread work. Split in three
// files: service_client.cpp (a call from begin to end), failback.cpp (failback mode's hand-off
// to background retries) and client_upkeep.cpp (sweeps, close, stats, the public facade).
// Private to net/cluster/.
#pragma once

#include "provider_set.h"

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/tasks/failback_invoker.h>

#include <atomic>
#include <map>
#include <mutex>
#include <unordered_map>

namespace wheelbeat::cluster {

using std::chrono::nanoseconds;
using tasks::cluster::Attempt;
using tasks::cluster::AttemptKind;
using tasks::cluster::CallContext;
using tasks::cluster::CallMachine;
using tasks::cluster::CallPolicy;
using tasks::cluster::CallResult;
using tasks::cluster::EjectReason;
using tasks::cluster::HedgeDelay;
using tasks::cluster::LoadCap;
using tasks::cluster::Step;

// The steady clock's now (the times CallMachine, the ejector and the hedge delay work with).
inline nanoseconds steadyNow() { return std::chrono::steady_clock::now().time_since_epoch(); }

class ServiceClient::Impl : public std::enable_shared_from_this<Impl> {
public:
  Impl(net::EventLoop& loop, core::HashedWheelTimer& timer, registry::Registry& registry,
       std::string service, ClusterOptions options);

  void start() { directory_.start(); }
  std::vector<HeldCall> close();
  void call(std::string body, CallOptions options, CallDone done);
  [[nodiscard]] Stats stats() const;
  [[nodiscard]] std::vector<ProviderFigure> providerFigures() const;
  [[nodiscard]] std::size_t providers();
  [[nodiscard]] std::size_t available();

private:
  struct Sent {
    std::uint64_t provider = 0;
    nanoseconds at{0};
    bool open = true;  // not answered, not dropped
  };
  struct Call {
    Call(CallPolicy policy, std::string b, CallOptions o, CallDone d)
        : machine(policy), body(std::move(b)), options(o), done(std::move(d)) {}
    CallMachine machine;
    std::string body;
    CallOptions options;
    CallDone done;
    std::vector<Sent> sent;
    core::Timeout wake;
    net::CallResult response;  // the last answer that decided nothing yet, or the deciding one
  };
  // The machine's view of this client during one step of one call.
  class Context : public CallContext {
  public:
    Context(Impl& impl, const Call& call) : impl_(impl), call_(call) {}
    std::optional<std::uint64_t> pick(std::span<const std::uint64_t> exclude,
                                      nanoseconds now) override {
      return impl_.providers_.pick(exclude, call_.options.hashKey, now);
    }
    std::vector<std::uint64_t> everyone(nanoseconds now) override {
      return impl_.providers_.usable(now);
    }
    bool allowExtra(AttemptKind kind, nanoseconds now) override;
    std::optional<nanoseconds> hedgeDelay(nanoseconds now) override {
      return impl_.options_.hedge ? impl_.hedgeDelay_.delay(now) : std::nullopt;
    }

  private:
    Impl& impl_;
    const Call& call_;
  };

  void begin(std::unique_ptr<Call> call);
  void apply(std::uint64_t id, Call& call, const Step& step);
  void send(std::uint64_t id, Call& call, const Attempt& attempt);
  void answered(std::uint64_t id, std::uint32_t index, const net::CallResult& result);
  // Attempt `index` of call `id` ended: ok when `error` is empty.
  void decide(std::uint64_t id, std::uint32_t index, const std::string& error,
              net::CallResult result);
  void woke(std::uint64_t id);
  void end(std::uint64_t id, Call& call, const CallResult& result);
  // Failback mode (failback.cpp): a failed call handed to failback_; its retries' provider
  // choice (any thread) and their attempts (posted to the loop).
  void handOff(std::uint64_t id, Call& call, const CallResult& result);
  [[nodiscard]] std::optional<std::string> failbackSelect(const std::string& avoid);
  void failbackAttempt(const std::string& body, const CallOptions& options, const std::string& url,
                       tasks::Completion done);
  void failbackEnded(const std::string& name, const CallOptions& options,
                     const tasks::CallResult& result);
  std::vector<HeldCall> stopFailback();
  void armSweep();
  // Copies the providers' figures (followed, out, ejections) into stats_.
  void counted(nanoseconds now);
  void sweep();
  void retrySuspect(std::uint64_t provider, nanoseconds now);
  void post(std::function<void()> fn);
  [[nodiscard]] CallPolicy policyOf(const CallOptions& options) const;

  net::EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const ClusterOptions options_;
  const std::string service_;
  registry::Directory directory_;
  // Loop thread only:
  detail::ProviderSet providers_;
  HedgeDelay hedgeDelay_;
  LoadCap loadCap_;
  const std::shared_ptr<tasks::RetryBudget> budget_;  // any thread (failback's retries too)
  const std::shared_ptr<tasks::FailbackMetrics> failbackMetrics_;
  std::unique_ptr<tasks::FailbackInvoker> failback_;  // failback mode only
  std::unordered_map<std::uint64_t, std::unique_ptr<Call>> calls_;
  std::uint64_t nextCall_ = 1;
  nanoseconds lastEvaluate_{0};
  core::Timeout sweep_;
  bool closed_ = false;  // loop thread: calls refused
  // Any thread:
  mutable std::mutex statsMutex_;
  Stats stats_;
  std::vector<ProviderFigure> figures_;  // as of the last counted()
  std::uint64_t failbackPicks_ = 0;
  std::map<std::string, HeldCall> held_;  // failback calls not ended yet, by invocation name
  std::atomic<bool> closing_{false};
};

}  // namespace wheelbeat::cluster
