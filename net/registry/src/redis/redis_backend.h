// RedisRegistry::Backend: the tasks::RegistryBackend over two RedisLinks (commands; subscribe
// mode). Private to net/. Two halves:
//   redis_session.cpp  the connection: connect + handshake (PING on the command link, SUBSCRIBE
//                      of this client's heartbeat channel on the subscriber link), teardown,
//                      reconnect with backoff (RetryState), heartbeat / idle check, connect
//                      timeout — all on the shared wheel, acting on the loop thread.
//   redis_backend.cpp  the data model: register / unregister / subscribe / unsubscribe,
//                      notifications, renewal of this client's registrations, expiry sweeps.
// Every member except the RegistryBackend calls, start(), waitFirstAttempt() and the counters
// runs on the loop thread.
#pragma once

#include "redis_link.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/net/redis_registry.h>
#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace wheelbeat::net {

class RedisRegistry::Backend final : public tasks::RegistryBackend,
                                     public std::enable_shared_from_this<Backend> {
public:
  struct Config {
    Endpoint address;
    std::string group;
    std::chrono::nanoseconds session{0};
    std::chrono::nanoseconds connectTimeout{0};
    std::chrono::nanoseconds requestTimeout{0};
    tasks::HeartbeatOptions heartbeat;  // resolved()
  };

  Backend(EventLoop& loop, core::HashedWheelTimer& timer, Config config);

  void doRegister(const std::string& url, tasks::Completion done) override;
  void doUnregister(const std::string& url, tasks::Completion done) override;
  void doSubscribe(const std::string& service, std::shared_ptr<tasks::NotifyListener> listener,
                   tasks::Completion done) override;
  void doUnsubscribe(const std::string& service, std::shared_ptr<tasks::NotifyListener> listener,
                     tasks::Completion done) override;

  // Any thread. start(): first connect and the periodic tasks (once). waitFirstAttempt(): until
  // the first attempt connected or failed, at most `bound`.
  void start();
  void waitFirstAttempt(std::chrono::nanoseconds bound);
  // Loop thread: cancels the tasks, closes both links (pending calls fail "disconnected"). Final.
  void shutdown();

  [[nodiscard]] bool isConnected() const noexcept { return up_.load(std::memory_order_acquire); }
  [[nodiscard]] RedisRegistry::Stats stats() const noexcept;

  // Set once, before start(): recover() after each reconnect, and the urls to renew.
  std::function<void()> onReconnected;
  std::function<std::vector<std::string>()> wanted;

  [[nodiscard]] std::string keyOf(const std::string& service) const;

private:
  enum class Phase { Idle, Connecting, Handshake, Up, Waiting, Closed };
  struct Periodic {
    std::chrono::nanoseconds period{0};
    void (Backend::*body)() = nullptr;
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
  void markFirstAttemptOver();
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

  EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const Config config_;
  const std::string heartbeatChannel_;
  std::shared_ptr<detail::RedisLink> cmd_;
  std::shared_ptr<detail::RedisLink> sub_;

  // Loop thread.
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
  std::mutex mutex_;
  std::condition_variable attempted_;
  bool firstAttemptOver_ = false;  // guarded by mutex_
};

// Runs fn(*this) on the loop thread unless the backend is gone or closed by then. False: the loop
// no longer accepts posts (fn dropped).
template <typename Fn>
bool RedisRegistry::Backend::post(Fn fn) {
  return loop_.post([weak = weak_from_this(), fn = std::move(fn)]() mutable {
    if (auto self = weak.lock(); self && self->phase_ != Phase::Closed) fn(*self);
  });
}

}  // namespace wheelbeat::net
