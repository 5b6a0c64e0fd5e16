#include "registry_book.h"

#include "../service_url.h"

namespace wheelbeat::registry {

std::optional<RegistryChange> RegistryBook::registerUrl(SessionId session, const std::string& url) {
  const std::string service = serviceOfUrl(url);
  auto& owners = owners_[url];
  const bool fresh = owners.empty();
  owners.insert(session);
  sessionUrls_[session].insert(url);
  if (!fresh) return std::nullopt;
  byService_[service].insert(url);
  return changeOf(service);
}

std::optional<RegistryChange> RegistryBook::unregisterUrl(SessionId session,
                                                          const std::string& url) {
  const auto it = owners_.find(url);
  if (it == owners_.end() || it->second.erase(session) == 0) return std::nullopt;
  if (auto s = sessionUrls_.find(session); s != sessionUrls_.end()) {
    s->second.erase(url);
    if (s->second.empty()) sessionUrls_.erase(s);
  }
  if (!it->second.empty()) return std::nullopt;
  owners_.erase(it);
  const std::string service = serviceOfUrl(url);
  auto& urls = byService_[service];
  urls.erase(url);
  if (urls.empty()) byService_.erase(service);
  return changeOf(service);
}

std::vector<std::string> RegistryBook::subscribe(SessionId session, const std::string& service) {
  subscribers_[service].insert(session);
  sessionServices_[session].insert(service);
  return providers(service);
}

void RegistryBook::unsubscribe(SessionId session, const std::string& service) {
  if (auto it = subscribers_.find(service); it != subscribers_.end()) {
    it->second.erase(session);
    if (it->second.empty()) subscribers_.erase(it);
  }
  if (auto it = sessionServices_.find(session); it != sessionServices_.end()) {
    it->second.erase(service);
    if (it->second.empty()) sessionServices_.erase(it);
  }
}

std::vector<RegistryChange> RegistryBook::dropSession(SessionId session) {
  if (auto it = sessionServices_.find(session); it != sessionServices_.end()) {
    const auto services = it->second;  // unsubscribe() edits the set
    for (const auto& service : services) unsubscribe(session, service);
  }
  std::map<std::string, RegistryChange> changed;
  if (auto it = sessionUrls_.find(session); it != sessionUrls_.end()) {
    const auto urls = it->second;  // unregisterUrl() edits the set
    for (const auto& url : urls) {
      if (auto change = unregisterUrl(session, url)) changed[change->service] = std::move(*change);
    }
  }
  std::vector<RegistryChange> out;
  out.reserve(changed.size());
  for (auto& [service, change] : changed) out.push_back(changeOf(service));
  return out;
}

std::vector<std::string> RegistryBook::providers(const std::string& service) const {
  const auto it = byService_.find(service);
  if (it == byService_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::vector<SessionId> RegistryBook::subscribers(const std::string& service) const {
  const auto it = subscribers_.find(service);
  if (it == subscribers_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

RegistryChange RegistryBook::changeOf(const std::string& service) const {
  return RegistryChange{service, providers(service), subscribers(service)};
}

}  // namespace wheelbeat::registry
