// Registry: what every engine shares — the URL checks, the FailbackRegistry, start()'s wait for
// the first attempt, recover() after each reconnect — and makeRegistry(), which picks the engine.
#include "service_url.h"

#include <wheelbeat/registry/embedded_engine.h>
#include <wheelbeat/registry/registry.h>
// WHEELBEAT_WITH_REDIS / WHEELBEAT_WITH_ZOOKEEPER (1 or 0) come from net/registry/CMakeLists.txt.
#if WHEELBEAT_WITH_REDIS
#include <wheelbeat/registry/redis_engine.h>
#endif
#if WHEELBEAT_WITH_ZOOKEEPER
#include <wheelbeat/registry/zookeeper_engine.h>
#endif

#include <fmt/format.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace wheelbeat::registry {

// The EngineEvents of one Registry: the first-attempt latch of start(), and recover() on every
// connect after the first. Shared with the engine (which may report from its loop thread while
// the Registry closes): once closed, every event is ignored.
// Final and owned through shared_ptr<Link>, never deleted through EngineEvents (whose
// destructor is protected): clang-tidy 14 does not take `final` into account.
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor)
class Registry::Link final : public EngineEvents {
public:
  Link(core::HashedWheelTimer& timer, std::shared_ptr<FailbackRegistry> failback)
      : timer_(timer), failback_(std::move(failback)) {}

  void connected() override {
    {
      std::lock_guard lock(mutex_);
      firstAttemptOver_ = true;
      healthySince_ = timer_.now();
      // Held across recover() (it only queues entries on the wheel): close() cannot stop the
      // FailbackRegistry in between, which would make recover() throw.
      if (everConnected_ && failback_) failback_->recover();
      everConnected_ = true;
    }
    attempted_.notify_all();
  }

  void disconnected() override {
    {
      std::lock_guard lock(mutex_);
      healthySince_.reset();
    }
    endFirstAttempt();
  }

  std::optional<std::chrono::nanoseconds> healthySince() const {
    std::lock_guard lock(mutex_);
    return healthySince_;
  }

  std::vector<std::string> registered() const override {
    std::lock_guard lock(mutex_);
    return failback_ ? failback_->registered() : std::vector<std::string>{};
  }

  // Bounded by `bound`: the engine's connect timeout, plus a margin.
  void waitFirstAttempt(std::chrono::nanoseconds bound) {
    std::unique_lock lock(mutex_);
    attempted_.wait_for(lock, bound, [this] { return firstAttemptOver_; });
  }

  // Every event after this is ignored; a start() still waiting returns.
  void close() {
    {
      std::lock_guard lock(mutex_);
      failback_.reset();
      closed_ = true;
    }
    endFirstAttempt();
  }

  // False after close(); true once per Registry (the first start()).
  bool beginStart() {
    std::lock_guard lock(mutex_);
    if (closed_) throw std::logic_error("Registry: start() after close()");
    return !std::exchange(started_, true);
  }

private:
  void endFirstAttempt() {
    {
      std::lock_guard lock(mutex_);
      firstAttemptOver_ = true;
    }
    attempted_.notify_all();
  }

  core::HashedWheelTimer& timer_;
  mutable std::mutex mutex_;
  std::condition_variable attempted_;
  std::optional<std::chrono::nanoseconds> healthySince_;
  std::shared_ptr<FailbackRegistry> failback_;  // null once closed
  bool firstAttemptOver_ = false;
  bool everConnected_ = false;
  bool started_ = false;
  bool closed_ = false;
};

namespace {

// A malformed url or service is the caller's bug: refused at once, never queued for retries.
template <typename Check>
void checked(Check check) {
  try {
    check();
  } catch (const RegistryProtocolError& e) {
    throw std::invalid_argument(e.what());
  }
}

std::shared_ptr<Engine> checkedEngine(std::unique_ptr<Engine> engine, const RegistrySetup& setup) {
  if (!engine) throw std::invalid_argument("Registry: engine = null (expected: an engine)");
  validate(setup);
  return engine;
}

}  // namespace

Registry::Registry(core::HashedWheelTimer& timer, std::unique_ptr<Engine> engine,
                   RegistrySetup setup)
    : connectTimeout_(setup.client.connectTimeout),
      kind_(setup.registry.kind),
      // Always counted: writeMetrics() reports retries and give-ups without the caller's object.
      failbackMetrics_(setup.metrics ? setup.metrics : std::make_shared<tasks::FailbackMetrics>()),
      engine_(checkedEngine(std::move(engine), setup)),
      failback_(std::make_shared<FailbackRegistry>(timer, engine_, std::move(setup.failback),
                                                   std::move(setup.listener), failbackMetrics_)),
      link_(std::make_shared<Link>(timer, failback_)) {
  const net::Endpoint& at = setup.registry.address;
  timerUse_ = timer.use(fmt::format("Registry {} {}:{}", registryKindName(kind_), at.host, at.port),
                        [this] { close(); });
}

Registry::~Registry() { close(); }

void Registry::writeMetrics(core::MetricsWriter& out) const {
  const std::string_view engine = registryKindName(kind_);
  auto d = [](auto v) { return static_cast<double>(v); };
  out.gauge("wheelbeat_registry_registered", d(failback_->registered().size()), {engine});
  out.gauge("wheelbeat_registry_subscribed", d(failback_->subscribed().size()), {engine});
  out.gauge("wheelbeat_registry_failback_pending", d(failback_->pendingRetryCount()), {engine});
  const tasks::FailbackMetricsSnapshot f = failbackMetrics_->snapshot();
  out.counter("wheelbeat_registry_failback_retried_total", d(f.retriesScheduled), {engine});
  out.counter("wheelbeat_registry_failback_given_up_total", d(f.giveUps), {engine});
}

void Registry::start() {
  if (link_->beginStart()) engine_->start(link_);
  // The connect timeout bounds the attempt; the margin covers the wheel's tick and the loop.
  link_->waitFirstAttempt(connectTimeout_ + std::chrono::seconds(1));
}

void Registry::close() {
  // Once, and a concurrent caller returns only when it is done.
  std::call_once(closeOnce_, [this] {
    timerUse_.quiet();  // closed: a timer stopped from now on has nothing to tell it
    link_->close();
    failback_->stop();
    engine_->close();
  });
}

void Registry::registerUrl(const std::string& url, tasks::Completion done) {
  checked([&] { (void)serviceOfUrl(url); });
  failback_->registerUrl(url, std::move(done));
}

void Registry::unregisterUrl(const std::string& url, tasks::Completion done) {
  checked([&] { (void)serviceOfUrl(url); });
  failback_->unregisterUrl(url, std::move(done));
}

void Registry::subscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                         tasks::Completion done) {
  checked([&] { checkServiceName(service); });
  failback_->subscribe(service, std::move(listener), std::move(done));
}

void Registry::unsubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                           tasks::Completion done) {
  checked([&] { checkServiceName(service); });
  failback_->unsubscribe(service, std::move(listener), std::move(done));
}

void Registry::recover() { failback_->recover(); }
FailbackRegistry& Registry::failback() noexcept { return *failback_; }
bool Registry::isConnected() const noexcept { return engine_->isConnected(); }

std::optional<std::chrono::nanoseconds> Registry::healthySince() const {
  return link_->healthySince();
}
Engine& Registry::engine() noexcept { return *engine_; }

namespace {

// An engine this build left out (WHEELBEAT_WITH_<option>=OFF): the setup is valid, the library
// cannot serve it.
[[noreturn, maybe_unused]] void notBuiltIn(std::string_view kind, std::string_view option) {
  throw std::invalid_argument(fmt::format(
      "RegistryOptions.kind = {}: this wheelbeat was built without the {} engine ({}=OFF)", kind,
      kind, option));
}

std::unique_ptr<Engine> makeEngine(net::EventLoop& loop, core::HashedWheelTimer& timer,
                                   const RegistrySetup& setup) {
  switch (setup.registry.kind) {
    case RegistryKind::Embedded: return makeEmbeddedEngine(loop, timer, setup);
    case RegistryKind::Redis:
#if WHEELBEAT_WITH_REDIS
      return makeRedisEngine(loop, timer, setup);
#else
      notBuiltIn("redis", "WHEELBEAT_WITH_REDIS");
#endif
    case RegistryKind::ZooKeeper:
#if WHEELBEAT_WITH_ZOOKEEPER
      return makeZookeeperEngine(loop, timer, setup);
#else
      notBuiltIn("zookeeper", "WHEELBEAT_WITH_ZOOKEEPER");
#endif
  }
  throw std::invalid_argument(
      fmt::format("RegistryOptions.kind = {} (expected: embedded, redis or zookeeper)",
                  static_cast<int>(setup.registry.kind)));
}

}  // namespace

std::unique_ptr<Registry> makeRegistry(net::EventLoop& loop, core::HashedWheelTimer& timer,
                                       RegistrySetup setup) {
  validate(setup, timer.tickDuration());
  auto engine = makeEngine(loop, timer, setup);
  return std::make_unique<Registry>(timer, std::move(engine), std::move(setup));
}

std::unique_ptr<Registry> makeRegistry(net::EventLoop& loop, core::HashedWheelTimer& timer,
                                       std::string_view url, RegistrySetup setup) {
  const RegistryOptions parsed = parseRegistryUrl(url);
  setup.registry.kind = parsed.kind;
  setup.registry.address = parsed.address;
  return makeRegistry(loop, timer, std::move(setup));
}

std::unique_ptr<Registry> makeRegistry(net::EventLoop& loop, core::HashedWheelTimer& timer,
                                       std::string_view url) {
  return makeRegistry(loop, timer, url, RegistrySetup{});
}

}  // namespace wheelbeat::registry
