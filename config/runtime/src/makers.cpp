// Runtime's makers: each builds the real object from its configuration section, adds its collector
// (when it has metrics of its own) and its place in the stop order, and hands it out as a
// shared_ptr whose control block also keeps the runtime's Core (loops, wheel) alive.
#include "core.h"

#include <wheelbeat/runtime/runtime.h>

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace wheelbeat {
namespace {

using runtime::detail::Core;
using runtime::detail::Made;
using runtime::detail::Stage;

// What a returned shared_ptr owns. Members go in reverse order: the collector first (it reads
// the object), then the object, then what it uses (a registry), then the Core.
template <typename T>
struct Held {
  std::shared_ptr<Core> core;
  std::shared_ptr<void> uses;
  std::unique_ptr<T> object;
  core::MetricsRegistry::Registration collector;
};

// Servers and clients count into the runtime's one set of channel and task counters.
template <typename Options>
Options counted(Options options, const Core& core) {
  options.metrics = core.channelMetrics;
  options.taskMetrics = core.taskMetrics;
  return options;
}

[[noreturn]] void throwStopped(std::string_view what) {
  throw std::logic_error(fmt::format(
      "wheelbeat::Runtime::{}: the runtime is stopped (expected: objects made before stop())",
      what));
}

void checkRunning(Core& core, std::string_view what) {
  std::lock_guard lock(core.mutex);
  if (core.stopBegun) throwStopped(what);
}

// Hands `object` out, tracked in `stage` (its stop: `stop`), with `collect` (may be empty) added
// to the runtime's metrics while it lives. Throws std::logic_error (and destroys the object) when
// the stop began while it was being made.
template <typename T, typename Stop, typename Collect>
std::shared_ptr<T> handOut(const std::shared_ptr<Core>& core, std::string_view what, Stage stage,
                           std::unique_ptr<T> object, Stop stop, Collect collect,
                           std::shared_ptr<void> uses = {}) {
  auto held = std::make_shared<Held<T>>();
  held->core = core;
  held->uses = std::move(uses);
  held->object = std::move(object);
  T* raw = held->object.get();
  std::shared_ptr<T> out(held, raw);
  const bool tracked = core->track(
      stage, Made{std::weak_ptr<void>(out), [stop](void* p) { stop(*static_cast<T*>(p)); }});
  if (!tracked) throwStopped(what);
  if constexpr (!std::is_same_v<Collect, std::nullptr_t>) {
    held->collector =
        core->metrics.add([raw, collect](core::MetricsWriter& w) { collect(*raw, w); });
  }
  return out;
}

}  // namespace

std::shared_ptr<net::TcpServer> Runtime::server(net::ChannelHandler handler) {
  checkRunning(*core_, "server");
  auto server = std::make_unique<net::TcpServer>(
      core_->loops, core_->timer, counted(config_.server, *core_), std::move(handler));
  return handOut(
      core_, "server", Stage::Servers, std::move(server),
      [](net::TcpServer& s) {
        (void)s.shutdown();
        s.stop();  // no longer a user of the wheel: its stop need not name it
      },
      nullptr);
}

std::shared_ptr<net::TcpClient> Runtime::client(net::ChannelHandler handler) {
  return makeClient(config_.client, std::move(handler));
}

std::shared_ptr<net::TcpClient> Runtime::client(std::string host, std::uint16_t port,
                                                net::ChannelHandler handler) {
  net::ClientOptions options = config_.client;
  options.server = {std::move(host), port};
  return makeClient(std::move(options), std::move(handler));
}

std::shared_ptr<net::TcpClient> Runtime::makeClient(net::ClientOptions options,
                                                    net::ChannelHandler handler) {
  checkRunning(*core_, "client");
  auto client = std::make_unique<net::TcpClient>(
      core_->loops, core_->timer, counted(std::move(options), *core_), std::move(handler));
  return handOut(
      core_, "client", Stage::Clients, std::move(client),
      [](net::TcpClient& c) { c.close("runtime stopped"); }, nullptr);
}

std::shared_ptr<tasks::RetryRunner> Runtime::retry(std::string_view policy) {
  checkRunning(*core_, "retry");
  const tasks::RetryOptions& options = config_.retry(policy);
  auto budget = std::make_shared<tasks::RetryBudget>(config_.retryBudget);
  auto runner = std::make_unique<tasks::RetryRunner>(core_->timer, options,
                                                     tasks::RetryRunnerOptions{.budget = budget});
  // Nothing to close: runs waiting on the wheel end (TimerUnavailable) when it stops. Tracked
  // with the clients so that a stopped runtime refuses to make one.
  core::HashedWheelTimer* timer = &core_->timer;
  return handOut(
      core_, "retry", Stage::Clients, std::move(runner), [](tasks::RetryRunner&) {},
      [budget, timer](tasks::RetryRunner&, core::MetricsWriter& out) {
        budget->writeMetrics(out, timer->now());
      });
}

std::shared_ptr<registry::Registry> Runtime::registry() {
  std::lock_guard made(core_->registryMutex);
  {
    std::lock_guard lock(core_->mutex);
    if (core_->stopBegun) throwStopped("registry");
    if (core_->registry) return core_->registry;
  }
  registry::RegistrySetup setup;
  setup.registry = config_.registry;
  setup.client = config_.client;
  setup.failback = config_.failback;
  auto out = handOut(
      core_, "registry", Stage::Registry,
      registry::makeRegistry(core_->loops.next(), core_->timer, std::move(setup)),
      [](registry::Registry& r) { r.close(); },
      [](registry::Registry& r, core::MetricsWriter& w) { r.writeMetrics(w); });
  std::lock_guard lock(core_->mutex);
  if (core_->stopBegun) throwStopped("registry");
  core_->registry = out;
  return out;
}

std::shared_ptr<cluster::ServiceClient> Runtime::serviceClient(std::string service) {
  checkRunning(*core_, "serviceClient");
  std::shared_ptr<registry::Registry> over = registry();
  auto client = std::make_unique<cluster::ServiceClient>(core_->loops.next(), core_->timer, *over,
                                                         std::move(service), config_.cluster);
  return handOut(
      core_, "serviceClient", Stage::Clients, std::move(client),
      [](cluster::ServiceClient& c) { (void)c.close(); },
      [](cluster::ServiceClient& c, core::MetricsWriter& w) { c.writeMetrics(w); },
      std::move(over));
}

}  // namespace wheelbeat
