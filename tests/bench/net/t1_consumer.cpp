// T0 / T1's consumer (t1_consumer.h): the named cluster settings and one run's client side.
#include "t1_consumer.h"

#include "child_process.h"

#include <fmt/format.h>

#include <stdexcept>
#include <thread>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;
using tasks::cluster::BalancerKind;
using tasks::cluster::Mode;

// Neither a failure count nor a failure share ejects, and nothing is suspected.
void noEjection(tasks::cluster::OutlierOptions& o) {
  o.consecutiveFailures = 0;
  o.failurePercent = 0;
  o.suspectFactor = 0;
}

cluster::ClusterOptions base(const T1Config& c) {
  cluster::ClusterOptions o;
  o.deadline = std::chrono::milliseconds(c.deadlineMs);
  o.balancer = BalancerKind::RoundRobin;
  o.hedge = false;
  noEjection(o.outlier);
  return o;
}

// Failover's extras are bounded by the retry budget alone (its defaults: 20 % of the calls of
// the last 10 s, 10 a second in reserve); the load cap is opened wide so that it does not
// decide in its place.
cluster::ClusterOptions failover(const T1Config& c) {
  cluster::ClusterOptions o = base(c);
  o.mode = Mode::Failover;
  o.retries = 2;
  o.maxExtraPercent = 100;
  return o;
}

// Everything on. Ejection: 5 failures in a row (a stopped provider's timeouts), or over 20 % of
// at least 20 outcomes in a 1 s interval (a provider failing 30 % of its calls), for 5 s at
// first, up to 30 s on repeats. Suspicion (the library's defaults, set here so that the line's
// meaning does not move with them): a call waiting 10 x the provider's latency estimate, at least
// 20 ms, keeps new calls off it. Hedging at the service's p95 (at least 1 ms, 100 samples). The
// budget's defaults, and a load cap of 10 % extra attempts (retries + hedges) per second.
cluster::ClusterOptions full(const T1Config& c) {
  cluster::ClusterOptions o = failover(c);
  o.balancer = BalancerKind::P2C;
  o.outlier.consecutiveFailures = 5;
  o.outlier.failurePercent = 20;
  o.outlier.minimumVolume = 20;
  o.outlier.interval = 1s;
  o.outlier.baseEjectionTime = 5s;
  o.outlier.maxEjectionTime = 30s;
  o.outlier.suspectFactor = 10;
  o.outlier.suspectFloor = 20ms;
  o.hedge = true;
  o.hedgeDelay.fixed = 0ns;
  o.hedgeDelay.percentile = 95;
  o.hedgeDelay.floor = 1ms;
  o.maxExtraPercent = 10;
  return o;
}

}  // namespace

const std::vector<std::string>& t1ConfigNames() {
  static const std::vector<std::string> names{"round_robin", "failover", "full",
                                              std::string(kT1RawConfig)};
  return names;
}

cluster::ClusterOptions t1ClusterOptions(std::string_view name, const T1Config& c) {
  cluster::ClusterOptions o;
  if (name == "round_robin") {
    o = base(c);
    o.mode = Mode::Failfast;
    o.retries = 0;
  } else if (name == "failover") {
    o = failover(c);
  } else if (name == "full") {
    o = full(c);
  } else {
    throw std::invalid_argument(
        fmt::format("--config: \"{}\" (expected: round_robin, failover or full; {} has no "
                    "cluster options)",
                    name, kT1RawConfig));
  }
  cluster::validate(o);
  return o;
}

namespace {
core::TimerHooks manualDrive() {
  core::TimerHooks hooks;
  hooks.drive = core::Drive::Manual;
  return hooks;
}
}  // namespace

T1Consumer::T1Consumer()
    : timer_(core::WheelOptions{.tickDuration = 1ms}, manualDrive()),
      loop_("t1-consumer"),
      wheel_(std::make_unique<net::LoopWheel>(loop_, timer_)) {
  net::ServerOptions o;
  o.listen = net::Endpoint{"127.0.0.1", 0};
  node_ = std::make_unique<registry::RegistryServer>(loop_, timer_, o);
  registryPort_ = node_->start();
}

T1Consumer::~T1Consumer() {
  try {
    close();
  } catch (...) {  // a destructor cleans up; it cannot report
  }
}

void T1Consumer::connect(cluster::ClusterOptions options, int providers) {
  registry::RegistrySetup setup;
  setup.registry.address = net::Endpoint{"127.0.0.1", registryPort_};
  registry_ = registry::makeRegistry(loop_, timer_, setup);
  registry_->start();
  client_ = std::make_unique<cluster::ServiceClient>(loop_, timer_, *registry_, kT1Service,
                                                     std::move(options));
  client_->start();
  // The directory connects to each provider as the node lists it: a setup wait, bounded and
  // interruptible, checked every 10 ms (no event tells "all connected").
  const auto deadline = Clock::now() + 20s;
  const auto wanted = static_cast<std::size_t>(providers);
  while (client_->available() < wanted) {
    if (interrupted()) throw Interrupted();
    if (Clock::now() >= deadline) {
      throw std::runtime_error(
          fmt::format("the cluster client has {} of {} providers available after 20 s ({} listed)",
                      client_->available(), providers, client_->providers()));
    }
    std::this_thread::sleep_for(10ms);
  }
}

void T1Consumer::close() {
  if (closed_) return;
  closed_ = true;
  if (client_) client_->close();
  if (registry_) registry_->close();
  if (node_) node_->stop();
  wheel_.reset();
  (void)loop_.stop();
  timer_.stop();
}

}  // namespace wheelbeat::bench::netbench
