// ProviderSet: what a ServiceClient knows about each provider of its service — its id, url,
// weight and warm-up (from the url), latency estimate, calls in flight and their send times —
// and the choices made from it: the balancer's candidates, minus the ejected and suspect ones.
// Loop thread only (the ServiceClient's).
#pragma once

#include <wheelbeat/registry/directory.h>
#include <wheelbeat/tasks/cluster/balancer.h>
#include <wheelbeat/tasks/cluster/outlier_ejector.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace wheelbeat::cluster::detail {

// `key`'s value in the url's query ("?a=1&b=2"); nullopt when absent.
[[nodiscard]] std::optional<std::string> urlParameter(std::string_view url, std::string_view key);

struct ProviderInfo {
  std::uint64_t id = 0;
  std::string url;
  double weight = 100;                              // the url's `weight`
  std::chrono::nanoseconds warmup{0};               // the url's `warmup` (ms)
  std::chrono::system_clock::time_point started{};  // the url's `timestamp` (ms since the epoch)
  // Peak EWMA with a 2 s decay (Finagle's 10 s is tuned for fleets of many clients; one client
  // over a few providers must give a provider that one slow answer made expensive its next
  // chance within seconds, not half a minute).
  tasks::cluster::PeakEwma latency{std::chrono::seconds(2)};
  std::multiset<std::chrono::nanoseconds> outstanding;  // send times of attempts in flight
};

class ProviderSet {
public:
  ProviderSet(registry::Directory& directory, const tasks::cluster::OutlierOptions& outlier,
              tasks::cluster::BalancerKind balancer, std::uint64_t seed);

  // The directory's list changed: new urls get an id, gone ones are forgotten.
  void follow(const std::vector<std::string>& urls, std::chrono::nanoseconds now);

  // A provider for the next attempt (see tasks::cluster::CallContext::pick), and every usable one.
  [[nodiscard]] std::optional<std::uint64_t> pick(std::span<const std::uint64_t> exclude,
                                                  std::uint64_t hashKey,
                                                  std::chrono::nanoseconds now);
  [[nodiscard]] std::vector<std::uint64_t> usable(std::chrono::nanoseconds now);

  // The provider's client when connected; null otherwise (or unknown id).
  [[nodiscard]] std::shared_ptr<net::TcpClient> connected(std::uint64_t id) const;
  [[nodiscard]] const ProviderInfo* find(std::uint64_t id) const;
  [[nodiscard]] std::optional<std::uint64_t> idOf(const std::string& url) const;
  // Every provider followed, by id.
  [[nodiscard]] const std::map<std::uint64_t, ProviderInfo>& all() const noexcept { return byId_; }

  // Attempt bookkeeping: sent at `at`; answered (or dropped) — the answer's outcome feeds the
  // latency estimate and the ejector (`healthy`: the provider answered, even with an error of the
  // application; `latency`: 0 = none to learn). A failure counts as an answer at least
  // kFailurePenalty slow: a provider that fails fast ("overloaded" in a microsecond) must not look
  // like the cheapest one to P2C (gRPC's weighted round robin penalises errors the same way).
  static constexpr std::chrono::nanoseconds kFailurePenalty = std::chrono::milliseconds(100);
  void sent(std::uint64_t id, std::chrono::nanoseconds at);
  void finished(std::uint64_t id, std::chrono::nanoseconds sentAt);
  void outcome(std::uint64_t id, bool healthy, std::chrono::nanoseconds latency,
               std::chrono::nanoseconds now);
  // The periodic checks: suspicion of providers whose oldest call waits too long, and the
  // ejector's interval (when `evaluate`). Returns the providers this sweep made suspect.
  std::vector<std::uint64_t> sweep(std::chrono::nanoseconds now, bool evaluate);

  [[nodiscard]] std::size_t size() const noexcept { return byId_.size(); }
  [[nodiscard]] std::size_t availableCount(std::chrono::nanoseconds now) const;
  [[nodiscard]] std::uint64_t ejections(tasks::cluster::EjectReason reason) const noexcept {
    return ejector_.ejections(reason);
  }
  [[nodiscard]] std::size_t outCount(std::chrono::nanoseconds now) const {
    return ejector_.outCount(now);
  }

private:
  [[nodiscard]] std::vector<tasks::cluster::Candidate> candidates(
      std::span<const std::uint64_t> exclude, std::chrono::nanoseconds now) const;

  registry::Directory& directory_;
  tasks::cluster::OutlierEjector ejector_;
  tasks::cluster::Balancer balancer_;
  std::map<std::uint64_t, ProviderInfo> byId_;
  std::map<std::string, std::uint64_t> idOfUrl_;
  std::uint64_t nextId_ = 1;
};

}  // namespace wheelbeat::cluster::detail
