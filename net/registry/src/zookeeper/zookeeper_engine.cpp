// ZkEngine (zk_engine.h): the session and the link's state reported to the Registry, the
// do-calls that register and unregister (ephemeral nodes, a stale one replaced), and
// makeZookeeperEngine(). Watches and provider lists: zk_subscriptions.cpp.
#include "zk_engine.h"

#include <wheelbeat/core/log.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <zookeeper/zookeeper.h>

#include <stdexcept>
#include <utility>

namespace wheelbeat::registry {
namespace zk {

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

CallResult failure(const ZkResult& r) {
  return CallResult::failure(std::string(errorName(r.code)), r.message);
}

void ZkEngine::start(std::shared_ptr<EngineEvents> events) {
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

void ZkEngine::close() {
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
  loopUse_.reset();  // nothing of the engine is left on the loop
}

void ZkEngine::doRegister(const std::string& url, Completion done) {
  call(std::move(done), [url](ZkEngine& self, const std::shared_ptr<OnceDone>& once) {
    self.createNode(url, once);
  });
}

void ZkEngine::doUnregister(const std::string& url, Completion done) {
  call(std::move(done), [url](ZkEngine& self, const std::shared_ptr<OnceDone>& once) {
    self.session_->remove(self.nodePathOf(url), [once](const ZkResult& r) {
      (*once)(r.ok() || r.code == ZNONODE ? CallResult::success() : failure(r));
    });
  });
}

void ZkEngine::doUnsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                             Completion done) {
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

std::string ZkEngine::notConnected() const {
  return fmt::format("zookeeper {}: {}", hosts_, lastError_.empty() ? "not connected" : lastError_);
}

void ZkEngine::open() {
  if (closed_) return;
  ZkSession::Options options;
  options.hosts = hosts_;
  options.sessionTimeout = sessionTimeout_;
  std::weak_ptr<Engine> weak = weak_from_this();
  session_ = std::make_unique<ZkSession>(loop_, options, [weak](const StateEvent& e) {
    if (auto self = std::static_pointer_cast<ZkEngine>(weak.lock())) self->onState(e);
  });
  if (!session_->connect()) {
    lastError_ = session_->lastError();
    core::log(core::LogLevel::Warn, "zookeeper {}: {}", hosts_, lastError_);
    firstAttemptOver();
  }
}

void ZkEngine::onState(const StateEvent& e) {
  if (closed_) return;
  switch (e.state) {
    case SessionState::Connected: {
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
    case SessionState::Expired: {
      {
        std::lock_guard lock(statsMutex_);
        ++stats_.expirations;
      }
      lastError_ = zerror(ZSESSIONEXPIRED);
      sessionId_.store(0, std::memory_order_release);
      down();
      break;
    }
    case SessionState::Connecting:
      // Also the first state after connect(): only a connection that was up is lost.
      if (connected_.load(std::memory_order_acquire)) lastError_ = zerror(ZCONNECTIONLOSS);
      down();
      break;
    default: break;
  }
}

void ZkEngine::up() {
  everConnected_ = true;
  if (!connected_.exchange(true, std::memory_order_acq_rel) && events_) events_->connected();
}

void ZkEngine::down() {
  if (connected_.exchange(false, std::memory_order_acq_rel) && events_) events_->disconnected();
}

void ZkEngine::firstAttemptOver() {
  if (closed_ || everConnected_ || std::exchange(firstAttemptReported_, true)) return;
  if (lastError_.empty()) {
    lastError_ = fmt::format("{} (no session within {})", zerror(ZCONNECTIONLOSS),
                             core::human(connectTimeout_));
  }
  if (events_) events_->disconnected();
}

std::string ZkEngine::nodePathOf(const std::string& url) const {
  const dubbo::ParsedUrl parsed = dubbo::parseUrl(url);
  const Category category =
      parsed.url.param("category") == "consumers" ? Category::Consumers : Category::Providers;
  return dubbo::categoryPath(group_, parsed.url.serviceInterface(), category) + "/" +
         dubbo::encode(url);
}

void ZkEngine::createNode(const std::string& url, const std::shared_ptr<OnceDone>& once) {
  const std::string path = nodePathOf(url);
  CreateOptions options;
  options.ephemeral = true;
  std::weak_ptr<Engine> weak = weak_from_this();
  session_->create(path, "", options, [weak, path, once](const ZkResult& r, const std::string&) {
    auto self = std::static_pointer_cast<ZkEngine>(weak.lock());
    if (r.code != ZNODEEXISTS || !self || self->closed_) {
      (*once)(r.ok() ? CallResult::success() : failure(r));
      return;
    }
    self->replaceIfStale(path, once);
  });
}

void ZkEngine::replaceIfStale(const std::string& path, const std::shared_ptr<OnceDone>& once) {
  std::weak_ptr<Engine> weak = weak_from_this();
  session_->exists(
      path, {}, [weak, path, once](const ZkResult& r, const std::optional<NodeStat>& stat) {
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
        self->session_->remove(path, [weak, path, once](const ZkResult& removed) {
          auto again = std::static_pointer_cast<ZkEngine>(weak.lock());
          if ((!removed.ok() && removed.code != ZNONODE) || !again || again->closed_) {
            (*once)(removed.ok() ? CallResult::failure("disconnected", "zookeeper engine closed")
                                 : failure(removed));
            return;
          }
          CreateOptions options;
          options.ephemeral = true;
          again->session_->create(
              path, "", options, [once](const ZkResult& created, const std::string&) {
                (*once)(created.ok() ? CallResult::success() : failure(created));
              });
        });
      });
}

}  // namespace zk

std::unique_ptr<ZookeeperEngine> makeZookeeperEngine(net::EventLoop& loop,
                                                     core::HashedWheelTimer& timer,
                                                     const RegistrySetup& setup) {
  validate(setup);
  if (setup.registry.kind != RegistryKind::ZooKeeper) {
    throw std::invalid_argument(
        fmt::format("ZookeeperEngine: RegistryOptions.kind = {} (expected: zookeeper)",
                    registryKindName(setup.registry.kind)));
  }
  return std::make_unique<zk::ZkEngine>(loop, timer, setup);
}

}  // namespace wheelbeat::registry
