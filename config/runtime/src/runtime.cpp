// Runtime's construction, run and the ordered stop (the makers are in makers.cpp).
#include "core.h"
#include "signals.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/runtime/runtime.h>

#include <stdexcept>
#include <utility>

namespace wheelbeat {
namespace runtime::detail {

Core::Core(const config::Config& config) : timer(config.wheel), loops(config.loop) {
  // First task of the wheel: every task that could call stop() runs after it, on the same worker.
  (void)timer.newTimeout([this] { wheelThread = std::this_thread::get_id(); },
                         std::chrono::nanoseconds(0));
  ownCollectors.push_back(metrics.add([this](core::MetricsWriter& out) {
    timer.writeMetrics(out);
    net::writeMetrics(*channelMetrics, out);
    tasks::writeMetrics(*taskMetrics, out);
  }));
  if (config.metrics) {
    endpoint = net::MetricsEndpoint::start(loops.at(0), *config.metrics,
                                           [this] { return metrics.prometheusText(); });
    const std::string& listen = config.metrics->listen;
    core::log(core::LogLevel::Info, "metrics on http://{}:{}/metrics",
              listen.substr(0, listen.rfind(':')), endpoint->port());
  }
}

Core::~Core() {
  // Normally stopped by the Runtime already; this is the constructor's failure path (an endpoint
  // that could not listen) and the last object made here going.
  if (endpoint) endpoint->close();
  loops.stop();
  timer.stop();
}

bool Core::track(Stage stage, Made entry) {
  std::lock_guard lock(mutex);
  if (stopBegun) return false;
  auto& list = made[static_cast<std::size_t>(stage)];
  std::erase_if(list, [](const Made& m) { return m.object.expired(); });
  list.push_back(std::move(entry));
  return true;
}

bool Core::onOwnThread() const noexcept {
  return loops.isLoopThread() || wheelThread.load() == std::this_thread::get_id();
}

void Core::stop(bool wait) {
  {
    std::lock_guard lock(mutex);
    if (!stopBegun) {
      stopBegun = true;
      stopper = std::thread([this] { stopAll(); });
    }
  }
  if (wait) waitStopped();
}

void Core::waitStopped() {
  std::unique_lock lock(mutex);
  stopped.wait(lock, [this] { return stopDone; });
}

namespace {

// Locks every object of `list` still alive and runs its stop; the references go at the end of the
// step (an object the caller dropped meanwhile is destroyed here, already stopped).
void stopEach(const std::vector<Made>& list) {
  for (const Made& m : list) {
    if (std::shared_ptr<void> object = m.object.lock()) {
      try {
        m.stop(object.get());
      } catch (const std::exception& e) {
        core::log(core::LogLevel::Error, "wheelbeat::Runtime: stopping an object: {}", e.what());
      }
    }
  }
}

}  // namespace

void Core::stopAll() {
  std::array<std::vector<Made>, kStages> lists;
  std::shared_ptr<registry::Registry> ownRegistry;
  {
    std::lock_guard lock(mutex);
    lists = made;  // makers add nothing more: stopBegun is set
    ownRegistry = std::move(registry);
  }
  stopEach(lists[static_cast<std::size_t>(Stage::Servers)]);
  stopEach(lists[static_cast<std::size_t>(Stage::Clients)]);
  stopEach(lists[static_cast<std::size_t>(Stage::Registry)]);
  ownRegistry.reset();
  if (endpoint) endpoint->close();
  loops.stop();
  timer.stop();
  std::lock_guard lock(mutex);
  stopDone = true;
  stopped.notify_all();
}

}  // namespace runtime::detail

Runtime::Runtime() : Runtime(config::Config{}) {}

Runtime::Runtime(config::Config config) : config_(std::move(config)) {
  config::applyLogging(config_);
  core_ = std::make_shared<runtime::detail::Core>(config_);
}

Runtime Runtime::fromJson(std::string_view json) { return Runtime(config::loadString(json)); }

Runtime Runtime::fromFile(const std::filesystem::path& path) { return Runtime(config::load(path)); }

Runtime::~Runtime() {
  core_->stop(true);
  {
    std::lock_guard lock(signalsMutex_);
    signals_.reset();
  }
  if (core_->stopper.joinable()) core_->stopper.join();
}

core::MetricsRegistry& Runtime::metrics() noexcept { return core_->metrics; }

std::uint16_t Runtime::metricsPort() const noexcept {
  return core_->endpoint ? core_->endpoint->port() : 0;
}

net::EventLoopGroup& Runtime::loops() noexcept { return core_->loops; }

core::HashedWheelTimer& Runtime::timer() noexcept { return core_->timer; }

void Runtime::run() {
  if (core_->onOwnThread()) {
    throw std::logic_error(
        "wheelbeat::Runtime::run: called on one of the runtime's own loop or wheel threads "
        "(expected: main's, or another thread of the application)");
  }
  core_->waitStopped();
}

void Runtime::stop() { core_->stop(!core_->onOwnThread()); }

bool Runtime::isStopped() const noexcept {
  std::lock_guard lock(core_->mutex);
  return core_->stopBegun;
}

void Runtime::stopOnSignals() {
  std::lock_guard lock(signalsMutex_);
  if (signals_) return;
  try {
    signals_ =
        std::make_unique<runtime::detail::SignalWatcher>([core = core_] { core->stop(true); });
  } catch (const std::logic_error&) {
    throw std::logic_error(
        "wheelbeat::Runtime::stopOnSignals: another runtime or net::ShutdownSignal of this "
        "process has the SIGTERM / SIGINT handlers (expected: one at a time)");
  }
}

}  // namespace wheelbeat
