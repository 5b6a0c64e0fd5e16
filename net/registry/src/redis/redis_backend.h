// RedisBackend: the RedisEngine (redis_engine.h) over two RedisLinks (commands; subscribe mode).
// Private to the registry layer. Two halves:
//   redis_session.cpp  the connection: connect + handshake (PING on the command link, SUBSCRIBE
//                      of this client's heartbeat channel on the subscriber link) bounded by the
//                      connect timeout, and teardown. The two links are one tasks::Channel
//                      (Links), watched by the same HeartbeatTimerTask and ReconnectTimerTask as a
//                      TcpClient's channel: heartbeats, half-open detection and the reconnect
//                      backoff are theirs.
//   redis_backend.cpp  the data model: register / unregister / subscribe / unsubscribe,
//                      notifications, renewal of this client's registrations and expiry sweeps
//                      (each a tasks::PeriodicTask whose body posts the work to the loop).
// Every member except the Engine calls (do-calls, start(), close(), isConnected()), the counters
// and Links' queries and actions runs on the loop thread.
#pragma once

#include "redis_link.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/registry/redis_engine.h>
#include <wheelbeat/tasks/channel.h>
#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>
#include <wheelbeat/tasks/periodic_task.h>
#include <wheelbeat/tasks/task_listener.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
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
  void doSubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                   tasks::Completion done) override;
  void doUnsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                     tasks::Completion done) override;

  // Any thread (Engine): start() posts the first connect and the periodic tasks; close() runs
  // shutdown() on the loop and returns once it ran (at once if the loop has stopped).
  void start(std::shared_ptr<EngineEvents> events) override;
  void close() override;

  [[nodiscard]] bool isConnected() const noexcept override { return phase() == Phase::Up; }
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
  // Idle → Connecting (TCP connects) → Handshake (PING, SUBSCRIBE) → Up; a loss, a failed attempt
  // → Waiting (the reconnect task decides when to connect again); shutdown() → Closed (final).
  enum class Phase { Idle, Connecting, Handshake, Up, Waiting, Closed };

  // Both links as one tasks::Channel, so the heartbeat and reconnect tasks treat the pair as a
  // TcpClient's connection. A member, handed to the tasks through an aliasing weak_ptr of the
  // backend: a task's run keeps the whole backend alive, and the tasks end ("channel gone") with
  // it. Queries: any thread (atomics of the backend and the links); actions are posted to the
  // loop and return at once.
  class Links final : public tasks::Channel {
  public:
    explicit Links(RedisBackend& backend) noexcept : backend_(backend) {}
    // The older of the two links' last reads: "alive" needs both (a quiet subscriber link is what
    // the heartbeat's message refreshes).
    [[nodiscard]] std::chrono::nanoseconds lastRead() const noexcept override;
    // The command link's: the only one that writes after its handshake (Redis does not time out
    // a client in subscribe mode).
    [[nodiscard]] std::chrono::nanoseconds lastWrite() const noexcept override;
    // Both links connected and the handshake done (Phase::Up).
    [[nodiscard]] bool isConnected() const noexcept override;
    // An attempt in flight (Connecting, Handshake): bounded by ClientOptions::connectTimeout.
    [[nodiscard]] bool isConnecting() const noexcept override;
    [[nodiscard]] bool isClosed() const noexcept override;
    [[nodiscard]] bool hasUnreadInput() const noexcept override;
    // PUBLISH on this client's heartbeat channel: the reply stamps the command link, the message
    // (our own) the subscriber link.
    void sendHeartbeat() override;
    // Tears both links down if up (the loss is reported and counted), then connects again; an
    // attempt in flight is left alone.
    void reconnect(std::string_view reason) override;
    // Tears both links down and shuts the backend down for good (no task of ours calls it).
    void close(std::string_view reason) override;

  private:
    RedisBackend& backend_;
  };

  [[nodiscard]] Phase phase() const noexcept { return phase_.load(std::memory_order_acquire); }

  // redis_session.cpp
  void startTasks();
  void connectNow();
  void reconnectNow(const std::string& reason);
  void onLinkConnected();
  void handshakeStep(std::uint64_t generation);
  void becomeUp();
  void lost(const std::string& reason);
  bool dropLinks(const std::string& reason);
  void armConnectTimeout();
  void heartbeat();
  // Loop thread: cancels the tasks, closes both links (pending calls fail "disconnected"). Final.
  void shutdown();
  template <typename Fn>
  bool post(Fn fn);
  template <typename Fn>
  core::Timeout later(std::chrono::nanoseconds delay, Fn fn);

  // redis_backend.cpp
  void onPush(const detail::RedisReply& reply);
  void publish(const std::string& key, const char* message, tasks::Completion done);
  void refresh(const std::string& service, const std::shared_ptr<NotifyListener>& forListener,
               const tasks::Completion& done);
  void deliver(const std::string& service, const std::vector<std::string>& live,
               const std::shared_ptr<NotifyListener>& forListener);
  void renew();
  void sweepAll();
  void sweep(const std::string& service);
  [[nodiscard]] std::string expiryFromNow() const;

  net::EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const Config config_;
  // The loop must outlive the engine until close() (core/users.h): its connections live there.
  core::Users::Use loopUse_;
  const std::string heartbeatChannel_;
  std::shared_ptr<detail::RedisLink> cmd_;
  std::shared_ptr<detail::RedisLink> sub_;

  Links links_{*this};

  // Loop thread.
  std::shared_ptr<EngineEvents> events_;  // from the first run of start()'s post until shutdown()
  std::uint64_t generation_ = 0;  // one per connect attempt: stale timeouts and replies drop
  int handshakeLeft_ = 0;
  bool everUp_ = false;
  core::Timeout connectTimeout_;
  // Created by start()'s post, cancelled by shutdown().
  std::shared_ptr<tasks::HeartbeatTimerTask> heartbeatTask_;
  std::shared_ptr<tasks::ReconnectTimerTask> reconnectTask_;
  std::shared_ptr<tasks::PeriodicTask> renewTask_;
  std::shared_ptr<tasks::PeriodicTask> sweepTask_;
  std::map<std::string, std::set<std::shared_ptr<NotifyListener>>> listeners_;
  std::map<std::string, std::string> serviceOfChannel_;
  std::map<std::string, std::vector<std::string>> lastNotified_;

  // Written on the loop thread, read anywhere (Links, isConnected()).
  std::atomic<Phase> phase_{Phase::Idle};

  // Any thread.
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
    if (auto self = weak.lock(); self && self->phase() != Phase::Closed) fn(*self);
  });
}

}  // namespace wheelbeat::registry
