#include <wheelbeat/core/log.h>
#include <wheelbeat/net/event_loop_group.h>

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <thread>

namespace wheelbeat::net {
namespace {

std::size_t loopCount(std::size_t requested) {
  if (requested > kMaxIoThreads) {
    throw std::invalid_argument(
        fmt::format("LoopOptions.ioThreads = {} (expected: 0 .. {})", requested, kMaxIoThreads));
  }
  if (requested != 0) return requested;
  const unsigned cores = std::thread::hardware_concurrency();  // 0 when unknown
  return cores == 0 ? 1 : cores;
}

}  // namespace

EventLoopGroup::EventLoopGroup(LoopOptions options) : EventLoopGroup(options.ioThreads, options) {}

EventLoopGroup::EventLoopGroup(std::size_t count, LoopOptions options) {
  const std::size_t n = loopCount(count);
  loops_.reserve(n);
  // A loop that fails to start throws; the ones already started stop in their destructors.
  for (std::size_t i = 0; i < n; ++i) {
    loops_.push_back(std::make_unique<EventLoop>(fmt::format("wheelbeat-io-{}", i), options));
  }
}

EventLoopGroup::~EventLoopGroup() {
  try {
    if (const int rc = stop(); rc != 0) {
      core::log(core::LogLevel::Error, "event loop group: stop: {}", rc);
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
}

EventLoop& EventLoopGroup::at(std::size_t i) const {
  if (i >= loops_.size()) {
    throw std::out_of_range(
        fmt::format("EventLoopGroup::at: i = {} (expected: < {})", i, loops_.size()));
  }
  return *loops_[i];
}

EventLoop& EventLoopGroup::next() noexcept {
  return *loops_[next_.fetch_add(1, std::memory_order_relaxed) % loops_.size()];
}

bool EventLoopGroup::contains(const EventLoop& loop) const noexcept {
  for (const auto& l : loops_) {
    if (l.get() == &loop) return true;
  }
  return false;
}

bool EventLoopGroup::isLoopThread() const noexcept {
  for (const auto& l : loops_) {
    if (l->isLoopThread()) return true;
  }
  return false;
}

int EventLoopGroup::stop() {
  if (isLoopThread()) {
    throw std::logic_error("wheelbeat: EventLoopGroup::stop() called on one of its loop threads");
  }
  std::lock_guard lock(stopMutex_);
  if (stopped_.load(std::memory_order_acquire)) return result_;
  for (auto& loop : loops_) {
    const int rc = loop->stop();
    if (result_ == 0) result_ = rc;
  }
  stopped_.store(true, std::memory_order_release);
  return result_;
}

}  // namespace wheelbeat::net
