// The connection half of RedisBackend (see redis_backend.h): connect + handshake,
// teardown, reconnect with backoff, heartbeat and idle check, connect timeout.
#include "redis_backend.h"

#include <wheelbeat/core/log.h>

#include <random>
#include <utility>

namespace wheelbeat::registry {

namespace {

std::string randomToken() {
  std::random_device rd;
  const std::uint64_t v = (std::uint64_t{rd()} << 32) ^ rd();
  return fmt::format("{:016x}", v);
}

}  // namespace

RedisBackend::RedisBackend(net::EventLoop& loop, core::HashedWheelTimer& timer, Config config)
    : loop_(loop),
      timer_(timer),
      config_(std::move(config)),
      heartbeatChannel_(fmt::format("/{}/-heartbeat/{}", config_.group, randomToken())),
      cmd_(std::make_shared<detail::RedisLink>(loop, timer, "redis command link",
                                               config_.requestTimeout)),
      sub_(std::make_shared<detail::RedisLink>(loop, timer, "redis subscriber link",
                                               config_.requestTimeout)) {
  liveness_.period = config_.heartbeat.heartbeat / 3;
  liveness_.body = &RedisBackend::livenessCheck;
  sessionTask_.period = config_.session / 2;
  sessionTask_.body = &RedisBackend::sessionTick;
}

// A one-shot wheel timeout whose body runs on the loop thread (never on the wheel thread: every
// piece of state here is the loop's).
template <typename Fn>
core::Timeout RedisBackend::later(std::chrono::nanoseconds delay, Fn fn) {
  try {
    return timer_.newTimeout(
        [weak = weakSelf(), fn = std::move(fn)]() mutable {
          if (auto self = weak.lock()) self->post(std::move(fn));
        },
        delay);
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Warn, "wheelbeat: redis registry: wheel refused a task: {}",
              e.what());
    return {};
  }
}

void RedisBackend::start(std::shared_ptr<EngineEvents> events) {
  if (started_.exchange(true)) return;
  const bool posted = post([events](RedisBackend& self) {
    self.events_ = events;
    auto weak = self.weakSelf();
    const auto hooks = [weak] {
      return detail::RedisLink::Hooks{
          .onConnected =
              [weak] {
                if (auto s = weak.lock()) s->onLinkConnected();
              },
          .onLost =
              [weak](const std::string& why) {
                if (auto s = weak.lock()) s->teardown(why, "disconnected");
              },
          .onPush =
              [weak](const detail::RedisReply& r) {
                if (auto s = weak.lock()) s->onPush(r);
              },
      };
    };
    self.cmd_->setHooks(hooks());
    self.sub_->setHooks(hooks());
    self.retry_.emplace(self.config_.heartbeat.reconnectBackoff, self.timer_.now(),
                        self.config_.heartbeat.seed);
    self.arm(self.liveness_);
    self.arm(self.sessionTask_);
    self.connectNow();
  });
  // A loop that no longer runs: no attempt will be made (Registry::start() need not wait).
  if (!posted && events) events->disconnected();
}

void RedisBackend::close() {
  // A stopped loop already freed the connections (EventLoop::stop() → closeForShutdown).
  // call() waits for the function (or drops it): `this` outlives it.
  (void)loop_.call([this] { shutdown(); });
}

void RedisBackend::connectNow() {
  if (phase_ != Phase::Idle && phase_ != Phase::Waiting) return;
  ++generation_;
  phase_ = Phase::Connecting;
  handshakeLeft_ = 2;
  if (!cmd_->connect(config_.address)) return teardown(cmd_->lastError(), "disconnected");
  if (!sub_->connect(config_.address)) return teardown(sub_->lastError(), "disconnected");
  armConnectTimeout();
}

void RedisBackend::armConnectTimeout() {
  connectTimeout_.cancel();
  connectTimeout_ = later(config_.connectTimeout, [gen = generation_](RedisBackend& self) {
    if (self.generation_ != gen) return;
    if (self.phase_ == Phase::Connecting || self.phase_ == Phase::Handshake) {
      self.teardown("connect timeout", "disconnected");
    }
  });
}

// Both TCP connects done: PING proves the server answers (a SIGSTOPped server still completes
// TCP handshakes from its listen backlog), the heartbeat channel's ack that the subscriber link
// is in subscribe mode.
void RedisBackend::onLinkConnected() {
  if (phase_ != Phase::Connecting || !cmd_->isConnected() || !sub_->isConnected()) return;
  phase_ = Phase::Handshake;
  const std::uint64_t gen = generation_;
  const auto step = [this, gen](const tasks::CallResult& r, const detail::RedisReply&) {
    if (gen != generation_) return;
    if (!r.ok) return teardown(fmt::format("handshake: {}", r.message), "disconnected");
    handshakeStep(gen);
  };
  cmd_->command({"PING"}, step);
  sub_->subscribe(heartbeatChannel_, step);
}

void RedisBackend::handshakeStep(std::uint64_t generation) {
  if (generation != generation_ || phase_ != Phase::Handshake) return;
  if (--handshakeLeft_ == 0) becomeUp();
}

void RedisBackend::becomeUp() {
  phase_ = Phase::Up;
  connectTimeout_.cancel();
  lastBeat_ = timer_.now();
  retry_->reset(timer_.now());
  up_.store(true, std::memory_order_release);
  connects_.fetch_add(1, std::memory_order_relaxed);
  const bool reconnected = everUp_;
  everUp_ = true;
  if (reconnected) {
    reconnects_.fetch_add(1, std::memory_order_relaxed);
    core::log(core::LogLevel::Info, "wheelbeat: redis registry {}:{}: reconnected, recovering",
              config_.address.host, config_.address.port);
  }
  // After a reconnect, the Registry recover()s.
  if (events_) events_->connected();
}

void RedisBackend::teardown(const std::string& reason, const char* errorName) {
  if (phase_ == Phase::Idle || phase_ == Phase::Waiting || phase_ == Phase::Closed) return;
  const bool wasUp = phase_ == Phase::Up;
  phase_ = Phase::Waiting;
  ++generation_;
  up_.store(false, std::memory_order_release);
  connectTimeout_.cancel();
  if (wasUp) disconnects_.fetch_add(1, std::memory_order_relaxed);
  core::log(wasUp ? core::LogLevel::Warn : core::LogLevel::Debug,
            "wheelbeat: redis registry {}:{}: {}", config_.address.host, config_.address.port,
            reason);
  cmd_->close(reason);
  sub_->close(reason);
  if (events_) events_->disconnected();
  scheduleReconnect(errorName);
}

void RedisBackend::scheduleReconnect(const char* errorName) {
  const tasks::Decision d = retry_->next(timer_.now(), errorName);
  if (!d.retry) {
    core::log(core::LogLevel::Error, "wheelbeat: redis registry {}:{}: reconnect given up ({})",
              config_.address.host, config_.address.port, tasks::giveUpName(d.reason));
    return;
  }
  reconnect_ = later(d.delay, [](RedisBackend& self) { self.connectNow(); });
}

// Self-re-arming on the wheel; the body runs on the loop thread, then arms the next run.
void RedisBackend::arm(Periodic& p) {
  p.timeout = later(p.period, [&p](RedisBackend& self) {
    (self.*p.body)();
    if (self.phase_ != Phase::Closed) self.arm(p);
  });
}

void RedisBackend::livenessCheck() {
  if (phase_ != Phase::Up) return;
  const auto now = timer_.now();
  const auto idle = std::max(now - cmd_->lastRead(), now - sub_->lastRead());
  if (idle >= config_.heartbeat.idleTimeout) {
    const auto ms = [](std::chrono::nanoseconds d) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    };
    return teardown(fmt::format("read idle {}ms >= idleTimeout {}ms", ms(idle),
                                ms(config_.heartbeat.idleTimeout)),
                    "read-idle");
  }
  if (now - lastBeat_ < config_.heartbeat.heartbeat) return;
  lastBeat_ = now;
  // The reply stamps the command link, the message (our own) the subscriber link; a failure
  // needs no action: silence is what the idle check above acts on.
  cmd_->command({"PUBLISH", heartbeatChannel_, "ping"},
                [](const tasks::CallResult&, const detail::RedisReply&) {});
}

void RedisBackend::shutdown() {
  if (phase_ == Phase::Closed) return;
  phase_ = Phase::Closed;
  ++generation_;
  up_.store(false, std::memory_order_release);
  connectTimeout_.cancel();
  reconnect_.cancel();
  liveness_.timeout.cancel();
  sessionTask_.timeout.cancel();
  cmd_->close("registry closed");
  sub_->close("registry closed");
  listeners_.clear();
  events_.reset();
}

RedisEngine::Stats RedisBackend::stats() const noexcept {
  return {connects_.load(std::memory_order_relaxed), reconnects_.load(std::memory_order_relaxed),
          disconnects_.load(std::memory_order_relaxed)};
}

}  // namespace wheelbeat::registry
