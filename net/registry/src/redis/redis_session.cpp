// The connection half of RedisBackend (see redis_backend.h): connect + handshake within the
// connect timeout, teardown, and the two links as one tasks::Channel (Links) for the heartbeat
// and reconnect tasks, which decide heartbeats, half-open detection and the reconnect backoff
// exactly as for a TcpClient.
#include "redis_backend.h"

#include <wheelbeat/core/log.h>

#include <algorithm>
#include <random>
#include <utility>

namespace wheelbeat::registry {

namespace {

std::string randomToken() {
  std::random_device rd;
  const std::uint64_t v = (std::uint64_t{rd()} << 32) ^ rd();
  return fmt::format("{:016x}", v);
}

// What the tasks decide that the engine has no other way to tell: a give-up (the engine then
// stays down), a body or channel action that threw.
class TaskLog final : public tasks::TaskListener {
public:
  explicit TaskLog(std::string target) : target_(std::move(target)) {}
  void onGiveUp(tasks::Channel& /*channel*/, tasks::GiveUp reason) override {
    core::log(core::LogLevel::Error, "redis registry {}: reconnect given up ({})", target_,
              tasks::giveUpName(reason));
  }
  void onTaskError(std::exception_ptr error) override {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      core::log(core::LogLevel::Warn, "redis registry {}: task failed: {}", target_, e.what());
    } catch (...) {
      core::log(core::LogLevel::Warn, "redis registry {}: task failed", target_);
    }
  }

private:
  const std::string target_;
};

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
  loopUse_ = loop.use(fmt::format("RedisEngine {}:{}", config_.address.host, config_.address.port));
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
    core::log(core::LogLevel::Warn, "redis registry: wheel refused a task: {}", e.what());
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
                if (auto s = weak.lock()) s->lost(why);
              },
          .onPush =
              [weak](const detail::RedisReply& r) {
                if (auto s = weak.lock()) s->onPush(r);
              },
      };
    };
    self.cmd_->setHooks(hooks());
    self.sub_->setHooks(hooks());
    self.startTasks();
    self.connectNow();
  });
  // A loop that no longer runs: no attempt will be made (Registry::start() need not wait).
  if (!posted && events) events->disconnected();
}

// The connection's tasks, as a TcpClient starts them (first checks one interval from now), and
// the periodic renewal and sweep: each body only posts its work to the loop.
void RedisBackend::startTasks() {
  const std::shared_ptr<RedisBackend> self = weakSelf().lock();
  if (!self) return;  // not owned by a shared_ptr: nothing could hold the tasks' weak_ptrs
  const std::weak_ptr<tasks::Channel> channel = std::shared_ptr<tasks::Channel>(self, &links_);
  const auto log =
      std::make_shared<TaskLog>(fmt::format("{}:{}", config_.address.host, config_.address.port));
  const std::chrono::nanoseconds period = config_.session / 2;
  const auto periodic = [this, period, &log](void (RedisBackend::*work)()) {
    return tasks::PeriodicTask::create(
        timer_, weakSelf(),
        [period, work](RedisBackend& backend, std::chrono::nanoseconds /*now*/) {
          backend.post([work](RedisBackend& b) { (b.*work)(); });
          return period;
        },
        log);
  };
  try {
    heartbeatTask_ =
        std::make_shared<tasks::HeartbeatTimerTask>(timer_, channel, config_.heartbeat, log);
    reconnectTask_ =
        std::make_shared<tasks::ReconnectTimerTask>(timer_, channel, config_.heartbeat, log);
    renewTask_ = periodic(&RedisBackend::renew);
    sweepTask_ = periodic(&RedisBackend::sweepAll);
    heartbeatTask_->start(heartbeatTask_->checkInterval());
    reconnectTask_->start(reconnectTask_->checkInterval());
    renewTask_->start(period);
    sweepTask_->start(period);
  } catch (const std::exception& e) {  // the timer is stopped or full: nothing would run anyway
    core::log(core::LogLevel::Error, "redis registry: wheel refused a task: {}", e.what());
  }
}

void RedisBackend::close() {
  // A stopped loop already freed the connections (EventLoop::stop() → closeForShutdown).
  // call() waits for the function (or drops it): `this` outlives it.
  (void)loop_.call([this] { shutdown(); });
  loopUse_.reset();  // nothing of the engine is left on the loop
}

void RedisBackend::connectNow() {
  const Phase now = phase();
  if (now != Phase::Idle && now != Phase::Waiting) return;
  ++generation_;
  phase_.store(Phase::Connecting, std::memory_order_release);
  handshakeLeft_ = 2;
  if (!cmd_->connect(config_.address)) return lost(cmd_->lastError());
  if (!sub_->connect(config_.address)) return lost(sub_->lastError());
  armConnectTimeout();
}

// The reconnect task's decision (Links::reconnect): a half-open pair is torn down and connected
// again at once; after a loss, the attempt the backoff granted.
void RedisBackend::reconnectNow(const std::string& reason) {
  switch (phase()) {
    case Phase::Connecting:
    case Phase::Handshake:  // in flight: its connect timeout bounds it
    case Phase::Closed: return;
    case Phase::Up: (void)dropLinks(reason); break;
    case Phase::Idle:
    case Phase::Waiting: break;
  }
  connectNow();
}

void RedisBackend::armConnectTimeout() {
  connectTimeout_.cancel();
  connectTimeout_ = later(config_.connectTimeout, [gen = generation_](RedisBackend& self) {
    if (self.generation_ != gen) return;
    const Phase now = self.phase();
    if (now == Phase::Connecting || now == Phase::Handshake) self.lost("connect timeout");
  });
}

// Both TCP connects done: PING proves the server answers (a SIGSTOPped server still completes
// TCP handshakes from its listen backlog), the heartbeat channel's ack that the subscriber link
// is in subscribe mode.
void RedisBackend::onLinkConnected() {
  if (phase() != Phase::Connecting || !cmd_->isConnected() || !sub_->isConnected()) return;
  phase_.store(Phase::Handshake, std::memory_order_release);
  const std::uint64_t gen = generation_;
  const auto step = [this, gen](const tasks::CallResult& r, const detail::RedisReply&) {
    if (gen != generation_) return;
    if (!r.ok) return lost(fmt::format("handshake: {}", r.message));
    handshakeStep(gen);
  };
  cmd_->command({"PING"}, step);
  sub_->subscribe(heartbeatChannel_, step);
}

void RedisBackend::handshakeStep(std::uint64_t generation) {
  if (generation != generation_ || phase() != Phase::Handshake) return;
  if (--handshakeLeft_ == 0) becomeUp();
}

void RedisBackend::becomeUp() {
  connectTimeout_.cancel();
  phase_.store(Phase::Up, std::memory_order_release);
  connects_.fetch_add(1, std::memory_order_relaxed);
  const bool reconnected = everUp_;
  everUp_ = true;
  if (reconnected) {
    reconnects_.fetch_add(1, std::memory_order_relaxed);
    core::log(core::LogLevel::Info, "redis registry {}:{}: reconnected, recovering",
              config_.address.host, config_.address.port);
  }
  // After a reconnect, the Registry recover()s.
  if (events_) events_->connected();
}

// A link dropped, or an attempt failed (refused, handshake error, connect timeout).
void RedisBackend::lost(const std::string& reason) {
  if (!dropLinks(reason)) return;
  // The reconnect task counts the first backoff from now, not from its next check.
  if (reconnectTask_) reconnectTask_->wake();
}

// Closes both links and reports the loss; false if there was nothing to drop.
bool RedisBackend::dropLinks(const std::string& reason) {
  const Phase was = phase();
  if (was == Phase::Idle || was == Phase::Waiting || was == Phase::Closed) return false;
  const bool wasUp = was == Phase::Up;
  phase_.store(Phase::Waiting, std::memory_order_release);
  ++generation_;
  connectTimeout_.cancel();
  if (wasUp) disconnects_.fetch_add(1, std::memory_order_relaxed);
  core::log(wasUp ? core::LogLevel::Warn : core::LogLevel::Debug, "redis registry {}:{}: {}",
            config_.address.host, config_.address.port, reason);
  cmd_->close(reason);
  sub_->close(reason);
  if (events_) events_->disconnected();
  return true;
}

void RedisBackend::heartbeat() {
  if (phase() != Phase::Up) return;
  // A failure needs no action: the silence is what the reconnect task acts on.
  cmd_->command({"PUBLISH", heartbeatChannel_, "ping"},
                [](const tasks::CallResult&, const detail::RedisReply&) {});
}

void RedisBackend::shutdown() {
  if (phase() == Phase::Closed) return;
  phase_.store(Phase::Closed, std::memory_order_release);
  ++generation_;
  connectTimeout_.cancel();
  const std::shared_ptr<tasks::TimerChain> chains[] = {heartbeatTask_, reconnectTask_, renewTask_,
                                                       sweepTask_};
  for (const auto& task : chains) {
    if (task) task->cancel();  // null if the wheel refused them (startTasks())
  }
  cmd_->close("registry closed");
  sub_->close("registry closed");
  listeners_.clear();
  events_.reset();
}

RedisEngine::Stats RedisBackend::stats() const noexcept {
  return {connects_.load(std::memory_order_relaxed), reconnects_.load(std::memory_order_relaxed),
          disconnects_.load(std::memory_order_relaxed)};
}

// Links

std::chrono::nanoseconds RedisBackend::Links::lastRead() const noexcept {
  return std::min(backend_.cmd_->lastRead(), backend_.sub_->lastRead());
}

std::chrono::nanoseconds RedisBackend::Links::lastWrite() const noexcept {
  return backend_.cmd_->lastWrite();
}

bool RedisBackend::Links::isConnected() const noexcept { return backend_.phase() == Phase::Up; }

bool RedisBackend::Links::isConnecting() const noexcept {
  const Phase now = backend_.phase();
  return now == Phase::Connecting || now == Phase::Handshake;
}

bool RedisBackend::Links::isClosed() const noexcept { return backend_.phase() == Phase::Closed; }

bool RedisBackend::Links::hasUnreadInput() const noexcept {
  return backend_.cmd_->hasUnreadInput() || backend_.sub_->hasUnreadInput();
}

void RedisBackend::Links::sendHeartbeat() {
  backend_.post([](RedisBackend& self) { self.heartbeat(); });
}

void RedisBackend::Links::reconnect(std::string_view reason) {
  backend_.post([why = std::string(reason)](RedisBackend& self) { self.reconnectNow(why); });
}

void RedisBackend::Links::close(std::string_view reason) {
  backend_.post([why = std::string(reason)](RedisBackend& self) {
    (void)self.dropLinks(why);
    self.shutdown();
  });
}

}  // namespace wheelbeat::registry
