#include "loop_internal.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/net/loop_wheel.h>

#include <uv.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace wheelbeat::net {

using core::log;
using core::LogLevel;

// The libuv timer that calls advance(). Held by the public object and, while its handle is
// open, by itself (self_), so it outlives the close callback.
class LoopWheel::Core final : public detail::LoopHandle,
                              public std::enable_shared_from_this<LoopWheel::Core> {
public:
  Core(uv_loop_t* loop, core::HashedWheelTimer& timer) : loop_(loop), timer_(timer) {}

  // Loop thread: opens the handle and arms it for now (the first advance() starts the timer).
  void start() noexcept {
    uv_timer_init(loop_, &handle_);  // cannot fail on an initialised loop
    handle_.data = this;
    detail::registerHandle(loop_, this);
    open_ = true;
    self_ = shared_from_this();
    uv_timer_start(&handle_, &Core::onTimer, 0, 0);
  }

  // Loop thread; idempotent.
  void close() noexcept {
    if (!open_) return;
    open_ = false;
    uv_timer_stop(&handle_);
    uv_close(detail::asHandle(&handle_), &Core::onClosed);
  }
  void closeForShutdown() noexcept override { close(); }

  // Any thread but the loop's, once the loop no longer runs calls (stopping or stopped): no
  // advance() starts after this returns, and one in progress has finished.
  void detach() noexcept {
    detached_.store(true);
    const std::lock_guard wait(driveMutex_);
  }

  std::atomic<std::uint64_t> advances{0};

private:
  static void onTimer(uv_timer_t* handle) noexcept { static_cast<Core*>(handle->data)->tick(); }

  static void onClosed(uv_handle_t* handle) noexcept {
    auto* self = static_cast<Core*>(handle->data);
    detail::unregisterHandle(self->loop_, self);
    const std::shared_ptr<Core> last = std::move(self->self_);  // may be the last reference
  }

  void tick() noexcept {
    {
      const std::lock_guard drive(driveMutex_);
      if (detached_.load()) return;
      try {
        timer_.advance();  // tasks run under safe-run: only the timer's own state throws here
      } catch (const core::TimerStoppedError&) {
        close();  // timer.stop(): nothing more to drive
        return;
      } catch (const std::exception& e) {
        log(LogLevel::Error, "LoopWheel: advance() failed, the wheel is no longer driven: {}",
            e.what());
        close();
        return;
      }
      advances.fetch_add(1, std::memory_order_relaxed);
    }
    if (open_) arm();  // a task may have closed us
  }

  // Arms the handle for the next tick boundary. libuv counts in whole milliseconds from its
  // cached loop time: refreshed first, and rounded up, so the handle never fires before the
  // boundary by more than the rounding; a call before it processes nothing and re-arms.
  void arm() noexcept {
    const auto left = timer_.nextTickTime() - timer_.now();
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    uv_update_time(loop_);
    uv_timer_start(&handle_, &Core::onTimer, static_cast<std::uint64_t>(ms > 0 ? ms : 0), 0);
  }

  uv_loop_t* loop_;
  core::HashedWheelTimer& timer_;
  uv_timer_t handle_{};
  bool open_ = false;           // loop thread
  std::shared_ptr<Core> self_;  // while the handle is open
  std::mutex driveMutex_;       // held by tick() around advance(); see detach()
  std::atomic<bool> detached_{false};
};

LoopWheel::LoopWheel(EventLoop& loop, core::HashedWheelTimer& timer) : loop_(loop) {
  if (timer.drive() != core::Drive::Manual) {
    throw std::invalid_argument(
        "LoopWheel: timer.drive() = Thread (expected: Manual, set in TimerHooks::drive)");
  }
  if (timer.isStopped()) throw core::TimerStoppedError();
  core_ = std::make_shared<Core>(loop.native(), timer);
  if (!loop.call([core = core_] { core->start(); })) {
    throw std::runtime_error("LoopWheel: the event loop is stopping or stopped");
  }
  loopUse_ = loop.use("LoopWheel");
  timerUse_ = timer.use("LoopWheel");
  timerUse_.quiet();
}

LoopWheel::~LoopWheel() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory posting the close; the loop's
                   // shutdown still closes the handle
    core_->detach();
  }
}

void LoopWheel::close() {
  if (loop_.call([core = core_] { core->close(); })) return;
  core_->detach();  // the loop is stopping: its shutdown closes the handle
}

std::uint64_t LoopWheel::advances() const noexcept {
  return core_->advances.load(std::memory_order_relaxed);
}

}  // namespace wheelbeat::net
