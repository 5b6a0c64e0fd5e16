// Runtime's shared part: the loop group, the wheel, the metrics registry and endpoint, the list of
// what was made (for the ordered stop) and the stop's own state. Every object a maker returns
// holds a reference to it, so the loops and the wheel (stopped) outlive the last such object.
#pragma once

#include <wheelbeat/config/config.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/metrics.h>
#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/event_loop_group.h>
#include <wheelbeat/net/metrics_endpoint.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/tasks/task_listener.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace wheelbeat::runtime::detail {

// The stop order's steps that hold objects made by the makers (the registry comes after).
enum class Stage : std::size_t { Servers, Clients, Registry };
inline constexpr std::size_t kStages = 3;

// One object made here: alive while `object` can be locked; `stop` closes it (on the stopping
// thread, with the lock's pointer).
struct Made {
  std::weak_ptr<void> object;
  std::function<void(void*)> stop;
};

struct Core {
  explicit Core(const config::Config& config);
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  // Adds `made` to `stage` unless the stop began (then false). Drops the entries whose object
  // is gone. Any thread.
  bool track(Stage stage, Made made);
  // True on one of the loop threads or the wheel thread.
  [[nodiscard]] bool onOwnThread() const noexcept;
  // Begins the stop (once: a thread of its own runs stopAll()); waits for its end unless
  // `wait` is false.
  void stop(bool wait);
  // Waits until stopAll() has finished.
  void waitStopped();
  // The ordered stop (the file comment of runtime.h).
  void stopAll();

  core::MetricsRegistry metrics;  // first: destroyed last (registrations may outlive it anyway)
  core::HashedWheelTimer timer;
  net::EventLoopGroup loops;
  std::shared_ptr<net::ChannelMetrics> channelMetrics = std::make_shared<net::ChannelMetrics>();
  std::shared_ptr<tasks::TaskMetrics> taskMetrics = std::make_shared<tasks::TaskMetrics>();
  std::vector<core::MetricsRegistry::Registration> ownCollectors;  // wheel, channels, tasks
  std::unique_ptr<net::MetricsEndpoint> endpoint;
  // The wheel's worker, learnt from a task scheduled first thing (so before any task that could
  // call stop()).
  std::atomic<std::thread::id> wheelThread{};

  std::mutex mutex;  // guards what follows
  std::array<std::vector<Made>, kStages> made;
  std::shared_ptr<registry::Registry> registry;  // registry(): kept until the stop closes it
  bool stopBegun = false;
  bool stopDone = false;
  std::condition_variable stopped;
  std::thread stopper;  // runs stopAll(); joined by the Runtime's destructor

  std::mutex registryMutex;  // one registry() construction at a time
};

}  // namespace wheelbeat::runtime::detail
