// RedisBackend: the RedisEngine (redis_engine.h) over two RedisLinks (commands; subscribe mode).
// Private to the registry layer. Two halves:
//   redis_session.cpp  the connection: connect + handshake (PING on the command link, SUBSCRIBE
//                      of this client's heartbeat channel on the subscriber link), teardown,
//                      reconnect with backoff (RetryState), heartbeat / idle check, connect
//                      timeout — all on the shared wheel, acting on the loop thread.
//   redis_backend.cpp  the data model: register / unregister / subscribe / unsubscribe,
//                      notifications, renewal of this client's registrations, expiry sweeps.
// Every member except the Engine calls (do-calls, start(), close(), isConnected()) and the
// counters runs on the loop thread.
#pragma once

#include "redis_link.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/registry/redis_engine.h>
#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace wheelbeat::registry {

class RedisBackend final : public RedisEngine {
public:
  struct Config {
    net::Endpoint address;
    std::string group;
    std::chrono::nanoseconds session{0};
    std::chrono::nanoseconds connectTimeout{0};
    std::chrono::nanoseconds requestTimeout{0};
    tasks::HeartbeatOptions heartbeat;  // resolved()
  };

  RedisBackend(net::EventLoop& loop, core::HashedWheelTimer& timer, Config config);

  void doRegister(const std::string& url, tasks::Completion done) override;
  void doUnregister(const std::string& url, tasks::Completion done) override;
  void doSubscribe(const std::string& service, std::shared_ptr<tasks::NotifyListener> listener,
                   tasks::Completion done) override;
  void doUnsubscribe(const std::string& service, std::shared_ptr<tasks::NotifyListener> listener,
                     tasks::Completion done) override;

  // Any thread (Engine): start() posts the first connect and the periodic tasks; close() runs
  // shutdown() on the loop and returns once it ran (at once if the loop has stopped).
  void start(std::shared_ptr<EngineEvents> events) override;
  void close() override;

  [[nodiscard]] bool isConnected() const noexcept override {
    return up_.load(std::memory_order_acquire);
  }
  [[nodiscard]] Stats stats() const noexcept override;
  [[nodiscard]] std::chrono::nanoseconds removalBound() const noexcept override {
    return config_.session * 3 / 2;
  }

  [[nodiscard]] std::string keyOf(const std::string& service) const;

  // Engine::weak_from_this() as this type; empty unless owned by a shared_ptr (the Registry's).
  [[nodiscard]] std::weak_ptr<RedisBackend> weakSelf() noexcept {
    return std::static_pointer_cast<RedisBackend>(weak_from_this().lock());
  }

private:
  enum class Phase { Idle, Connecting, Handshake, Up, Waiting, Closed };
  struct Periodic {
    std::chrono::nanoseconds period{0};
    void (RedisBackend::*body)() = nullptr;
    core::Timeout timeout;
  };

  // redis_session.cpp
  void connectNow();
  void onLinkConnected();
  void handshakeStep(std::uint64_t generation);
  void becomeUp();
  void teardown(const std::string& reason, const char* errorName);
  void scheduleReconnect(const char* errorName);
  void armConnectTimeout();
  void arm(Periodic& p);
  void livenessCheck();
  // Loop thread: cancels the tasks, closes both links (pending calls fail "disconnected"). Final.
  void shutdown();
  template <typename Fn>
  bool post(Fn fn);
  template <typename Fn>
  core::Timeout later(std::chrono::nanoseconds delay, Fn fn);

  // redis_backend.cpp
  void onPush(const detail::RedisReply& reply);
  void publish(const std::string& key, const char* message, tasks::Completion done);
  void refresh(const std::string& service, std::shared_ptr<tasks::NotifyListener> forListener,
               tasks::Completion done);
  void deliver(const std::string& service, const std::vector<std::string>& live,
               const std::shared_ptr<tasks::NotifyListener>& forListener);
  void sessionTick();
  void renew();
  void sweep(const std::string& service);
  [[nodiscard]] std::string expiryFromNow() const;

  net::EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const Config config_;
  const std::string heartbeatChannel_;
  std::shared_ptr<detail::RedisLink> cmd_;
  std::shared_ptr<detail::RedisLink> sub_;

  // Loop thread.
  std::shared_ptr<EngineEvents> events_;  // from the first run of start()'s post until shutdown()
  Phase phase_ = Phase::Idle;
  std::uint64_t generation_ = 0;  // one per connect attempt: stale timeouts and replies drop
  int handshakeLeft_ = 0;
  bool everUp_ = false;
  std::optional<tasks::RetryState> retry_;
  core::Timeout connectTimeout_;
  core::Timeout reconnect_;
  Periodic liveness_;
  Periodic sessionTask_;
  std::chrono::nanoseconds lastBeat_{0};
  std::map<std::string, std::set<std::shared_ptr<tasks::NotifyListener>>> listeners_;
  std::map<std::string, std::string> serviceOfChannel_;
  std::map<std::string, std::vector<std::string>> lastNotified_;

  // Any thread.
  std::atomic<bool> up_{false};
  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> connects_{0};
  std::atomic<std::uint64_t> reconnects_{0};
  std::atomic<std::uint64_t> disconnects_{0};
};

// Runs fn(*this) on the loop thread unless the backend is gone or closed by then. False: the loop
// no longer accepts posts (fn dropped).
template <typename Fn>
bool RedisBackend::post(Fn fn) {
  return loop_.post([weak = weakSelf(), fn = std::move(fn)]() mutable {
    if (auto self = weak.lock(); self && self->phase_ != Phase::Closed) fn(*self);
  });
}

}  // namespace wheelbeat::registry
