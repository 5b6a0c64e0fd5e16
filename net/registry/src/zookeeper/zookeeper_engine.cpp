// The ZooKeeper engine (contract in zookeeper_engine.h): Dubbo's layout (dubbo_url.h) over one
// ZkSession (zk_session.h) on the loop thread. Every do-call hops to the loop; its completion is
// guarded so that exactly one of the answer and the request timeout reaches the caller.
#include "dubbo_url.h"
#include "zk_session.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/registry/zookeeper_engine.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>

namespace wheelbeat::registry {
namespace {

using tasks::CallResult;
using tasks::Completion;
using Category = dubbo::Category;

// The categories a subscription watches (Dubbo's consumer: providers, configurators, routers).
constexpr std::array<Category, 3> kWatched{Category::Providers, Category::Configurators,
                                           Category::Routers};

// A ZooKeeper error as a failback error name: connection trouble is "disconnected" (retried),
// the server's own refusals "rejected".
std::string_view errorName(int code) noexcept {
  switch (code) {
    case ZCONNECTIONLOSS:
    case ZSESSIONEXPIRED:
    case ZSESSIONMOVED:
    case ZCLOSING:
    case ZINVALIDSTATE: return "disconnected";
    case ZOPERATIONTIMEOUT: return "timeout";
    default: return "rejected";
  }
}

CallResult failure(const zk::ZkResult& r) {
  return CallResult::failure(std::string(errorName(r.code)), r.message);
}

// One completion, called once: by the answer or by the request timeout, whichever comes first
// (the answer cancels the timeout, so none stays pending on the wheel).
class OnceDone {
public:
  explicit OnceDone(Completion done) : done_(std::move(done)) {}
  void setTimeout(core::Timeout timeout) {
    std::lock_guard lock(mutex_);
    timeout_ = timeout;
  }
  void operator()(const CallResult& result) {
    if (fired_.exchange(true)) return;
    core::Timeout timeout;
    {
      std::lock_guard lock(mutex_);
      timeout = std::exchange(timeout_, {});
    }
    timeout.cancel();
    if (done_) done_(result);
  }

private:
  Completion done_;
  std::atomic<bool> fired_{false};
  std::mutex mutex_;
  core::Timeout timeout_;
};

class ZkEngine final : public ZookeeperEngine {
public:
  ZkEngine(net::EventLoop& loop, core::HashedWheelTimer& timer, const RegistrySetup& setup)
      : loop_(loop),
        timer_(timer),
        group_(setup.registry.group),
        hosts_(fmt::format("{}:{}", setup.registry.address.host, setup.registry.address.port)),
        sessionTimeout_(
            std::chrono::duration_cast<std::chrono::milliseconds>(setup.registry.session)),
        connectTimeout_(setup.client.connectTimeout),
        requestTimeout_(setup.requestTimeout) {}

  ~ZkEngine() override = default;

  void start(std::shared_ptr<EngineEvents> events) override {
    events_ = std::move(events);
    onLoop([](ZkEngine& self) { self.open(); });
    // No session within the connect timeout: start() must not wait longer (check = true).
    std::weak_ptr<Engine> weak = weak_from_this();
    firstAttempt_ = timer_.newTimeout(
        [weak] {
          if (auto self = std::static_pointer_cast<ZkEngine>(weak.lock())) {
            self->onLoop([](ZkEngine& e) { e.firstAttemptOver(); });
          }
        },
        connectTimeout_);
  }

  void close() override {
    firstAttempt_.cancel();
    // On the loop: the session is the loop's. Subscribers still waiting for their first list
    // fail now; operations in flight fail with ZCLOSING ("disconnected").
    const bool ran = loop_.call([this] {
      closed_ = true;
      for (auto& [service, s] : services_) {
        for (const auto& [listener, once] : std::exchange(s.welcome, {})) {
          (*once)(CallResult::failure("disconnected", "zookeeper engine closed"));
        }
      }
      services_.clear();
      if (session_) session_->close();
      events_.reset();
    });
    if (!ran) events_.reset();  // the loop has stopped (and closed the session): nothing runs there
    connected_.store(false, std::memory_order_release);
  }

  [[nodiscard]] bool isConnected() const noexcept override {
    return connected_.load(std::memory_order_acquire);
  }

  [[nodiscard]] Stats stats() const noexcept override {
    std::lock_guard lock(statsMutex_);
    return stats_;
  }

  [[nodiscard]] std::int64_t sessionId() const noexcept override {
    return sessionId_.load(std::memory_order_acquire);
  }

  void doRegister(const std::string& url, Completion done) override {
    call(std::move(done), [url](ZkEngine& self, const std::shared_ptr<OnceDone>& once) {
      self.createNode(url, once);
    });
  }

  void doUnregister(const std::string& url, Completion done) override {
    call(std::move(done), [url](ZkEngine& self, const std::shared_ptr<OnceDone>& once) {
      self.session_->remove(self.nodePathOf(url), [once](const zk::ZkResult& r) {
        (*once)(r.ok() || r.code == ZNONODE ? CallResult::success() : failure(r));
      });
    });
  }

  void doSubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                   Completion done) override {
    call(std::move(done),
         [service, listener](ZkEngine& self, const std::shared_ptr<OnceDone>& once) {
           Service& s = self.services_[service];
           s.listeners.insert(listener);
           s.welcome.emplace_back(listener, once);
           self.watchAll(service);
         });
  }

  void doUnsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                     Completion done) override {
    // Local: the listener hears nothing more; ZooKeeper's one-shot watches simply lapse.
    onLoop([service, listener, done = std::move(done)](ZkEngine& self) {
      auto it = self.services_.find(service);
      if (it != self.services_.end()) {
        it->second.listeners.erase(listener);
        if (it->second.listeners.empty()) self.services_.erase(it);
      }
      if (done) done(CallResult::success());
    });
  }

private:
  struct Service {
    std::set<std::shared_ptr<NotifyListener>> listeners;
    // Subscribers waiting for their first list (and their subscribe's completion).
    std::vector<std::pair<std::shared_ptr<NotifyListener>, std::shared_ptr<OnceDone>>> welcome;
    std::vector<std::string> providers;  // the last list delivered
    bool delivered = false;
    std::uint64_t generation = 0;  // watches of older generations are ignored
  };

  // Runs fn on the loop with this engine, if it is still alive then.
  template <typename Fn>
  void onLoop(Fn fn) {
    std::weak_ptr<Engine> weak = weak_from_this();
    const bool posted = loop_.post([weak, fn = std::move(fn)]() mutable {
      if (auto self = std::static_pointer_cast<ZkEngine>(weak.lock())) fn(*self);
    });
    if (!posted) return;  // the loop is stopping: pending completions are dropped with it
  }

  // A do-call: on the loop, with a connected session, bounded by the request timeout.
  template <typename Fn>
  void call(Completion done, Fn fn) {
    auto once = std::make_shared<OnceDone>(std::move(done));
    once->setTimeout(timer_.newTimeout(
        [once, after = requestTimeout_, hosts = hosts_] {
          (*once)(CallResult::failure("timeout", fmt::format("zookeeper {}: no answer within {}",
                                                             hosts, core::human(after))));
        },
        requestTimeout_));
    std::weak_ptr<Engine> weak = weak_from_this();
    const bool posted = loop_.post([weak, once, fn = std::move(fn)]() mutable {
      auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
      if (!self || self->closed_) {
        (*once)(CallResult::failure("disconnected", "zookeeper engine closed"));
      } else if (!self->connected_.load(std::memory_order_acquire)) {
        (*once)(CallResult::failure("disconnected", self->notConnected()));
      } else {
        fn(*self, once);
      }
    });
    if (!posted) (*once)(CallResult::failure("disconnected", "event loop stopped"));
  }

  std::string notConnected() const {
    return fmt::format("zookeeper {}: {}", hosts_,
                       lastError_.empty() ? "not connected" : lastError_);
  }

  // The session (loop thread).
  void open() {
    if (closed_) return;
    zk::ZkSession::Options options;
    options.hosts = hosts_;
    options.sessionTimeout = sessionTimeout_;
    std::weak_ptr<Engine> weak = weak_from_this();
    session_ = std::make_unique<zk::ZkSession>(loop_, options, [weak](const zk::StateEvent& e) {
      if (auto self = std::static_pointer_cast<ZkEngine>(weak.lock())) self->onState(e);
    });
    if (!session_->connect()) {
      lastError_ = session_->lastError();
      core::log(core::LogLevel::Warn, "zookeeper {}: {}", hosts_, lastError_);
      firstAttemptOver();
    }
  }

  void onState(const zk::StateEvent& e) {
    if (closed_) return;
    switch (e.state) {
      case zk::SessionState::Connected: {
        sessionId_.store(e.sessionId, std::memory_order_release);
        lastError_.clear();
        {
          std::lock_guard lock(statsMutex_);
          ++stats_.connects;
          if (e.newSession) ++stats_.sessions;
        }
        up();
        break;
      }
      case zk::SessionState::Expired: {
        {
          std::lock_guard lock(statsMutex_);
          ++stats_.expirations;
        }
        lastError_ = zerror(ZSESSIONEXPIRED);
        sessionId_.store(0, std::memory_order_release);
        down();
        break;
      }
      case zk::SessionState::Connecting:
        // Also the first state after connect(): only a connection that was up is lost.
        if (connected_.load(std::memory_order_acquire)) lastError_ = zerror(ZCONNECTIONLOSS);
        down();
        break;
      default: break;
    }
  }

  // The link's state to the Registry: connected() once per connection, disconnected() once per
  // loss, and once for a first attempt that did not connect within the connect timeout.
  void up() {
    everConnected_ = true;
    if (!connected_.exchange(true, std::memory_order_acq_rel) && events_) events_->connected();
  }
  void down() {
    if (connected_.exchange(false, std::memory_order_acq_rel) && events_) events_->disconnected();
  }
  void firstAttemptOver() {
    if (closed_ || everConnected_ || std::exchange(firstAttemptReported_, true)) return;
    if (lastError_.empty()) {
      lastError_ = fmt::format("{} (no session within {})", zerror(ZCONNECTIONLOSS),
                               core::human(connectTimeout_));
    }
    if (events_) events_->disconnected();
  }

  // Registration (loop thread).
  std::string nodePathOf(const std::string& url) const {
    const dubbo::ParsedUrl parsed = dubbo::parseUrl(url);
    const Category category =
        parsed.url.param("category") == "consumers" ? Category::Consumers : Category::Providers;
    return dubbo::categoryPath(group_, parsed.url.serviceInterface(), category) + "/" +
           dubbo::encode(url);
  }

  // EPHEMERAL, parents as needed. A node of the same name that another (older) session of ours
  // still owns would vanish with that session: it is replaced.
  void createNode(const std::string& url, const std::shared_ptr<OnceDone>& once) {
    const std::string path = nodePathOf(url);
    zk::CreateOptions options;
    options.ephemeral = true;
    std::weak_ptr<Engine> weak = weak_from_this();
    session_->create(path, "", options,
                     [weak, path, once](const zk::ZkResult& r, const std::string&) {
                       auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
                       if (r.code != ZNODEEXISTS || !self || self->closed_) {
                         (*once)(r.ok() ? CallResult::success() : failure(r));
                         return;
                       }
                       self->replaceIfStale(path, once);
                     });
  }

  void replaceIfStale(const std::string& path, const std::shared_ptr<OnceDone>& once) {
    std::weak_ptr<Engine> weak = weak_from_this();
    session_->exists(
        path, {},
        [weak, path, once](const zk::ZkResult& r, const std::optional<zk::NodeStat>& stat) {
          auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
          if (!r.ok() || !self || self->closed_) {
            (*once)(r.ok() ? CallResult::failure("disconnected", "zookeeper engine closed")
                           : failure(r));
            return;
          }
          if (stat && stat->ephemeralOwner == self->session_->sessionId()) {
            (*once)(CallResult::success());  // ours already
            return;
          }
          self->session_->remove(path, [weak, path, once](const zk::ZkResult& removed) {
            auto again = std::static_pointer_cast<ZkEngine>(weak.lock());
            if ((!removed.ok() && removed.code != ZNONODE) || !again || again->closed_) {
              (*once)(removed.ok() ? CallResult::failure("disconnected", "zookeeper engine closed")
                                   : failure(removed));
              return;
            }
            zk::CreateOptions options;
            options.ephemeral = true;
            again->session_->create(
                path, "", options, [once](const zk::ZkResult& created, const std::string&) {
                  (*once)(created.ok() ? CallResult::success() : failure(created));
                });
          });
        });
  }

  // Subscriptions (loop thread). A new generation of watches on every category of `service`;
  // events of older generations are ignored, so a re-subscribe never doubles the watches' work.
  void watchAll(const std::string& service) {
    const std::uint64_t generation = ++services_[service].generation;
    for (const Category category : kWatched) {
      const std::string path = dubbo::categoryPath(group_, service, category);
      zk::CreateOptions parent;
      parent.existingIsOk = true;  // persistent; created as Dubbo does, so later providers show
      std::weak_ptr<Engine> weak = weak_from_this();
      session_->create(
          path, "", parent,
          [weak, service, category, generation](const zk::ZkResult&, const std::string&) {
            // Whatever the create said (e.g. no rights on a parent), the listing tells the truth.
            if (auto self = std::static_pointer_cast<ZkEngine>(weak.lock())) {
              self->watch(service, category, generation);
            }
          });
    }
  }

  bool current(const std::string& service, std::uint64_t generation) const {
    auto it = services_.find(service);
    return !closed_ && it != services_.end() && it->second.generation == generation;
  }

  void watch(const std::string& service, Category category, std::uint64_t generation) {
    if (!current(service, generation)) return;
    const std::string path = dubbo::categoryPath(group_, service, category);
    std::weak_ptr<Engine> weak = weak_from_this();
    auto rearm = [weak, service, category, generation](zk::WatchEvent event, const std::string&) {
      auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
      // Lost: the session expired or closed; recover() re-subscribes on the next session.
      if (self && event != zk::WatchEvent::Lost) self->watch(service, category, generation);
    };
    session_->getChildren(path, rearm,
                          [weak, service, category, generation, path](
                              const zk::ZkResult& r, const std::vector<std::string>& children) {
                            auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
                            if (!self || !self->current(service, generation)) return;
                            if (r.code == ZNONODE) {
                              self->watchCreation(service, category, generation, path);
                            } else if (!r.ok()) {
                              self->failWelcome(service, failure(r));
                            }
                            if (category == Category::Providers && (r.ok() || r.code == ZNONODE)) {
                              self->deliver(service,
                                            r.ok() ? children : std::vector<std::string>{});
                            }
                          });
  }

  // The category's node was deleted (or never created, e.g. no rights): wait for it to appear.
  void watchCreation(const std::string& service, Category category, std::uint64_t generation,
                     const std::string& path) {
    std::weak_ptr<Engine> weak = weak_from_this();
    session_->exists(
        path,
        [weak, service, category, generation](zk::WatchEvent event, const std::string&) {
          auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
          if (self && event == zk::WatchEvent::Created) self->watch(service, category, generation);
        },
        [weak, service, category, generation](const zk::ZkResult& r,
                                              const std::optional<zk::NodeStat>& stat) {
          auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
          // Created between the listing and this watch: list it now.
          if (self && r.ok() && stat) self->watch(service, category, generation);
        });
  }

  // A providers listing: every listener hears a changed list; new subscribers hear it anyway.
  void deliver(const std::string& service, const std::vector<std::string>& children) {
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

  void failWelcome(const std::string& service, const CallResult& why) {
    auto it = services_.find(service);
    if (it == services_.end()) return;
    for (const auto& [listener, once] : std::exchange(it->second.welcome, {})) (*once)(why);
  }

  net::EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const std::string group_;
  const std::string hosts_;
  const std::chrono::milliseconds sessionTimeout_;
  const std::chrono::nanoseconds connectTimeout_;
  const std::chrono::nanoseconds requestTimeout_;

  std::shared_ptr<EngineEvents> events_;  // set by start(), reset by close()
  core::Timeout firstAttempt_;
  std::atomic<bool> connected_{false};
  std::atomic<std::int64_t> sessionId_{0};

  // Loop thread only.
  std::unique_ptr<zk::ZkSession> session_;
  std::map<std::string, Service> services_;
  std::string lastError_;
  bool closed_ = false;
  bool everConnected_ = false;
  bool firstAttemptReported_ = false;

  mutable std::mutex statsMutex_;
  Stats stats_;
};

}  // namespace

std::unique_ptr<ZookeeperEngine> makeZookeeperEngine(net::EventLoop& loop,
                                                     core::HashedWheelTimer& timer,
                                                     const RegistrySetup& setup) {
  validate(setup);
  if (setup.registry.kind != RegistryKind::ZooKeeper) {
    throw std::invalid_argument(
        fmt::format("ZookeeperEngine: RegistryOptions.kind = {} (expected: zookeeper)",
                    registryKindName(setup.registry.kind)));
  }
  return std::make_unique<ZkEngine>(loop, timer, setup);
}

}  // namespace wheelbeat::registry
