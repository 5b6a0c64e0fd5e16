#include "provider_set.h"

#include <algorithm>
#include <charconv>

namespace wheelbeat::cluster::detail {
namespace {

using std::chrono::nanoseconds;
using tasks::cluster::Candidate;

std::optional<double> number(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

bool contains(std::span<const std::uint64_t> ids, std::uint64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

std::optional<std::string> urlParameter(std::string_view url, std::string_view key) {
  const auto query = url.find('?');
  if (query == std::string_view::npos) return std::nullopt;
  std::string_view rest = url.substr(query + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == key) {
      return std::string(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    }
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
  }
  return std::nullopt;
}

ProviderSet::ProviderSet(registry::Directory& directory,
                         const tasks::cluster::OutlierOptions& outlier,
                         tasks::cluster::BalancerKind balancer, std::uint64_t seed)
    : directory_(directory), ejector_(outlier), balancer_(balancer, seed) {}

void ProviderSet::follow(const std::vector<std::string>& urls, nanoseconds now) {
  for (auto it = idOfUrl_.begin(); it != idOfUrl_.end();) {
    if (std::find(urls.begin(), urls.end(), it->first) != urls.end()) {
      ++it;
      continue;
    }
    ejector_.remove(it->second);
    byId_.erase(it->second);
    it = idOfUrl_.erase(it);
  }
  for (const std::string& url : urls) {
    if (idOfUrl_.contains(url)) continue;
    ProviderInfo p;
    p.id = nextId_++;
    p.url = url;
    const auto weight = number(urlParameter(url, "weight"));
    if (weight && *weight > 0) p.weight = *weight;
    const auto warmupMs = number(urlParameter(url, "warmup"));
    if (warmupMs && *warmupMs > 0) {
      p.warmup = std::chrono::milliseconds(static_cast<std::int64_t>(*warmupMs));
    }
    const auto timestampMs = number(urlParameter(url, "timestamp"));
    p.started = timestampMs ? std::chrono::system_clock::time_point(std::chrono::milliseconds(
                                  static_cast<std::int64_t>(*timestampMs)))
                            : std::chrono::system_clock::now();
    ejector_.add(p.id, now);
    idOfUrl_.emplace(url, p.id);
    byId_.emplace(p.id, std::move(p));
  }
}

std::shared_ptr<net::TcpClient> ProviderSet::connected(std::uint64_t id) const {
  const auto it = byId_.find(id);
  if (it == byId_.end()) return nullptr;
  auto client = directory_.client(it->second.url);
  return client && client->state() == net::ClientState::Connected ? client : nullptr;
}

std::optional<std::uint64_t> ProviderSet::idOf(const std::string& url) const {
  const auto it = idOfUrl_.find(url);
  if (it == idOfUrl_.end()) return std::nullopt;
  return it->second;
}

const ProviderInfo* ProviderSet::find(std::uint64_t id) const {
  const auto it = byId_.find(id);
  return it == byId_.end() ? nullptr : &it->second;
}

std::vector<Candidate> ProviderSet::candidates(std::span<const std::uint64_t> exclude,
                                               nanoseconds now) const {
  std::vector<Candidate> out;
  const auto wallNow = std::chrono::system_clock::now();
  for (const auto& [id, p] : byId_) {
    if (contains(exclude, id) || !ejector_.available(id, now) || !connected(id)) continue;
    const auto uptime = std::chrono::duration_cast<nanoseconds>(wallNow - p.started);
    out.push_back({.id = id,
                   .weight = tasks::cluster::warmedWeight(p.weight, uptime, p.warmup),
                   .inflight = static_cast<std::uint32_t>(p.outstanding.size()),
                   .latency = p.latency.cost(now)});
  }
  return out;
}

std::optional<std::uint64_t> ProviderSet::pick(std::span<const std::uint64_t> exclude,
                                               std::uint64_t hashKey, nanoseconds now) {
  std::vector<Candidate> c = candidates(exclude, now);
  if (c.empty()) c = candidates({}, now);  // none other: one already tried
  if (c.empty()) return std::nullopt;
  return c[balancer_.pick(c, hashKey)].id;
}

std::vector<std::uint64_t> ProviderSet::usable(nanoseconds now) {
  std::vector<std::uint64_t> ids;
  for (const Candidate& c : candidates({}, now)) ids.push_back(c.id);
  return ids;
}

void ProviderSet::sent(std::uint64_t id, nanoseconds at) {
  const auto it = byId_.find(id);
  if (it != byId_.end()) it->second.outstanding.insert(at);
}

void ProviderSet::finished(std::uint64_t id, nanoseconds sentAt) {
  const auto it = byId_.find(id);
  if (it == byId_.end()) return;
  const auto at = it->second.outstanding.find(sentAt);
  if (at != it->second.outstanding.end()) it->second.outstanding.erase(at);
}

void ProviderSet::outcome(std::uint64_t id, bool healthy, nanoseconds latency, nanoseconds now) {
  const auto it = byId_.find(id);
  if (it == byId_.end()) return;
  if (!healthy) {
    it->second.latency.observe(std::max(latency, kFailurePenalty), now);
  } else if (latency > nanoseconds(0)) {
    it->second.latency.observe(latency, now);
  }
  healthy ? ejector_.onSuccess(id, now) : ejector_.onFailure(id, now);
}

std::vector<std::uint64_t> ProviderSet::sweep(nanoseconds now, bool evaluate) {
  std::vector<std::uint64_t> suspects;
  for (const auto& [id, p] : byId_) {
    if (!p.outstanding.empty() &&
        ejector_.onOutstanding(id, now - *p.outstanding.begin(), p.latency.value(), now)) {
      suspects.push_back(id);
    }
  }
  if (evaluate) ejector_.evaluate(now);
  return suspects;
}

std::size_t ProviderSet::availableCount(nanoseconds now) const {
  return candidates({}, now).size();
}

}  // namespace wheelbeat::cluster::detail
