// ZkEngine, the ZooKeeper engine (contract in zookeeper_engine.h): Dubbo's layout (dubbo_url.h)
// over one ZkSession (zk_session.h) on the loop thread. Every do-call hops to the loop; its
// completion is guarded (OnceDone) so that exactly one of the answer and the request timeout
// reaches the caller. The class is shared by zookeeper_engine.cpp (the session, the link's state,
// registrations) and zk_subscriptions.cpp (watches and provider lists). Private to the registry
// layer.
#pragma once

#include "dubbo_url.h"
#include "zk_session.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/zookeeper_engine.h>
#include <wheelbeat/tasks/failback.h>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelbeat::registry::zk {

using tasks::CallResult;
using tasks::Completion;
using Category = dubbo::Category;

// The categories a subscription watches (Dubbo's consumer: providers, configurators, routers).
inline constexpr std::array<Category, 3> kWatched{Category::Providers, Category::Configurators,
                                                  Category::Routers};

// A ZooKeeper error as a failback error name: connection trouble is "disconnected" (retried),
// the server's own refusals "rejected".
[[nodiscard]] std::string_view errorName(int code) noexcept;
// The failure of a ZooKeeper answer, named by errorName().
[[nodiscard]] CallResult failure(const ZkResult& r);

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
        requestTimeout_(setup.requestTimeout),
        loopUse_(loop.use("ZookeeperEngine " + hosts_)) {}

  ~ZkEngine() override = default;

  void start(std::shared_ptr<EngineEvents> events) override;
  void close() override;

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

  void doRegister(const std::string& url, Completion done) override;
  void doUnregister(const std::string& url, Completion done) override;
  void doSubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                   Completion done) override;

  void doUnsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                     Completion done) override;

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

  std::string notConnected() const;

  // The session (loop thread).
  void open();
  void onState(const StateEvent& e);

  // The link's state to the Registry: connected() once per connection, disconnected() once per
  // loss, and once for a first attempt that did not connect within the connect timeout.
  void up();
  void down();
  void firstAttemptOver();

  // Registration (loop thread).
  std::string nodePathOf(const std::string& url) const;

  // EPHEMERAL, parents as needed. A node of the same name that another (older) session of ours
  // still owns would vanish with that session: it is replaced.
  void createNode(const std::string& url, const std::shared_ptr<OnceDone>& once);
  void replaceIfStale(const std::string& path, const std::shared_ptr<OnceDone>& once);

  // Subscriptions (loop thread). A new generation of watches on every category of `service`;
  // events of older generations are ignored, so a re-subscribe never doubles the watches' work.
  void watchAll(const std::string& service);
  bool current(const std::string& service, std::uint64_t generation) const;
  void watch(const std::string& service, Category category, std::uint64_t generation);

  // The category's node was deleted (or never created, e.g. no rights): wait for it to appear.
  void watchCreation(const std::string& service, Category category, std::uint64_t generation,
                     const std::string& path);

  // A providers listing: every listener hears a changed list; new subscribers hear it anyway.
  void deliver(const std::string& service, const std::vector<std::string>& children);
  void failWelcome(const std::string& service, const CallResult& why);
  net::EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const std::string group_;
  const std::string hosts_;
  const std::chrono::milliseconds sessionTimeout_;
  const std::chrono::nanoseconds connectTimeout_;
  const std::chrono::nanoseconds requestTimeout_;
  // The loop must outlive the engine until close() (core/users.h): the session lives there.
  core::Users::Use loopUse_;

  std::shared_ptr<EngineEvents> events_;  // set by start(), reset by close()
  core::Timeout firstAttempt_;
  std::atomic<bool> connected_{false};
  std::atomic<std::int64_t> sessionId_{0};

  // Loop thread only.
  std::unique_ptr<ZkSession> session_;
  std::map<std::string, Service> services_;
  std::string lastError_;
  bool closed_ = false;
  bool everConnected_ = false;
  bool firstAttemptReported_ = false;

  mutable std::mutex statsMutex_;
  Stats stats_;
};

}  // namespace wheelbeat::registry::zk
