// ZkEngine (zk_engine.h): subscriptions — a generation of one-shot watches per service on each
// watched category, re-armed on every change, a deleted category node awaited, and each providers
// listing delivered to the service's listeners (a changed list to all, any list to new ones).
#include "zk_engine.h"

#include <wheelbeat/core/log.h>

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wheelbeat::registry::zk {

void ZkEngine::doSubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                           Completion done) {
  call(std::move(done), [service, listener](ZkEngine& self, const std::shared_ptr<OnceDone>& once) {
    Service& s = self.services_[service];
    s.listeners.insert(listener);
    s.welcome.emplace_back(listener, once);
    self.watchAll(service);
  });
}

void ZkEngine::watchAll(const std::string& service) {
  const std::uint64_t generation = ++services_[service].generation;
  for (const Category category : kWatched) {
    const std::string path = dubbo::categoryPath(group_, service, category);
    CreateOptions parent;
    parent.existingIsOk = true;  // persistent; created as Dubbo does, so later providers show
    std::weak_ptr<Engine> weak = weak_from_this();
    session_->create(path, "", parent,
                     [weak, service, category, generation](const ZkResult&, const std::string&) {
                       // Whatever the create said (e.g. no rights on a parent), the listing tells
                       // the truth.
                       if (auto self = std::static_pointer_cast<ZkEngine>(weak.lock())) {
                         self->watch(service, category, generation);
                       }
                     });
  }
}

bool ZkEngine::current(const std::string& service, std::uint64_t generation) const {
  auto it = services_.find(service);
  return !closed_ && it != services_.end() && it->second.generation == generation;
}

void ZkEngine::watch(const std::string& service, Category category, std::uint64_t generation) {
  if (!current(service, generation)) return;
  const std::string path = dubbo::categoryPath(group_, service, category);
  std::weak_ptr<Engine> weak = weak_from_this();
  auto rearm = [weak, service, category, generation](WatchEvent event, const std::string&) {
    auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
    // Lost: the session expired or closed; recover() re-subscribes on the next session.
    if (self && event != WatchEvent::Lost) self->watch(service, category, generation);
  };
  session_->getChildren(path, rearm,
                        [weak, service, category, generation, path](
                            const ZkResult& r, const std::vector<std::string>& children) {
                          auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
                          if (!self || !self->current(service, generation)) return;
                          if (r.code == ZNONODE) {
                            self->watchCreation(service, category, generation, path);
                          } else if (!r.ok()) {
                            self->failWelcome(service, failure(r));
                          }
                          if (category == Category::Providers && (r.ok() || r.code == ZNONODE)) {
                            self->deliver(service, r.ok() ? children : std::vector<std::string>{});
                          }
                        });
}

void ZkEngine::watchCreation(const std::string& service, Category category,
                             std::uint64_t generation, const std::string& path) {
  std::weak_ptr<Engine> weak = weak_from_this();
  session_->exists(
      path,
      [weak, service, category, generation](WatchEvent event, const std::string&) {
        auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
        if (self && event == WatchEvent::Created) self->watch(service, category, generation);
      },
      [weak, service, category, generation](const ZkResult& r,
                                            const std::optional<NodeStat>& stat) {
        auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
        // Created between the listing and this watch: list it now.
        if (self && r.ok() && stat) self->watch(service, category, generation);
      });
}

void ZkEngine::deliver(const std::string& service, const std::vector<std::string>& children) {
  const dubbo::ProviderList list = dubbo::parseProviders(children);
  std::vector<std::string> urls;
  urls.reserve(list.providers.size());
  for (const auto& url : list.providers) urls.push_back(url.toFullString());
  std::sort(urls.begin(), urls.end());
  for (const auto& skipped : list.skipped) {
    core::log(core::LogLevel::Warn, "zookeeper {}: skipped provider {}", hosts_, skipped);
  }
  Service& s = services_[service];
  const bool changed = !s.delivered || urls != s.providers;
  s.providers = urls;
  s.delivered = true;
  const auto welcome = std::exchange(s.welcome, {});
  // A listener may unsubscribe from inside notify(): the set is copied first.
  std::vector<std::shared_ptr<NotifyListener>> notified;
  for (const auto& listener : s.listeners) {
    const bool isNew = std::any_of(welcome.begin(), welcome.end(),
                                   [&](const auto& w) { return w.first == listener; });
    if (changed || isNew) notified.push_back(listener);
  }
  {
    // Counted before anyone hears of the list: what a listener sees is already in stats().
    std::lock_guard lock(statsMutex_);
    stats_.notifications += notified.size();
    stats_.malformedChildren += list.skipped.size();
  }
  for (const auto& listener : notified) listener->notify(service, urls);
  for (const auto& [listener, once] : welcome) (*once)(CallResult::success());
}

void ZkEngine::failWelcome(const std::string& service, const CallResult& why) {
  auto it = services_.find(service);
  if (it == services_.end()) return;
  for (const auto& [listener, once] : std::exchange(it->second.welcome, {})) (*once)(why);
}

}  // namespace wheelbeat::registry::zk
