// EventLoopGroup: N EventLoops, one thread each, so servers and clients use every core.
//
//   EventLoopGroup group;                        // hardware_concurrency() loops
//   TcpServer server(group, timer, options, handler);   // connections spread over the loops
//   TcpClient client(group, timer, clientOptions, handler);  // on group.next()
//
// The loops are named "wheelbeat-io-0", "wheelbeat-io-1", ... (thread names keep 15 characters)
// and built with the same LoopOptions (maxPartialBytes is a budget per loop). One shared
// core::HashedWheelTimer serves every loop: tasks post to their channel's own loop.
//
// Shutdown
//   stop() stops loop 0, then 1, ... (each EventLoop::stop(): posts are refused from its start,
//   channels still open close with CloseKind::LoopStopped) and returns the first non-zero
//   result (0 = every loop closed cleanly). Stop servers and clients first (the graceful order).
//   A second call returns the first call's result; the destructor calls stop(). After stop(),
//   size(), at() and next() still answer (with stopped loops, whose post() returns false).
//
// Threads
//   size(), at(), next(), isStopped(): any thread. stop(): any thread but one of the group's
//   loop threads (it joins them; std::logic_error there, nothing stopped).
#pragma once

#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/options.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace wheelbeat::net {

class EventLoopGroup {
public:
  // options.ioThreads loops (0 = hardware_concurrency(), at least 1). Throws
  // std::invalid_argument for ioThreads > kMaxIoThreads ("LoopOptions.ioThreads = 5000
  // (expected: 0 .. 1024)"), std::runtime_error if a loop cannot start (the ones started are
  // stopped again).
  explicit EventLoopGroup(LoopOptions options = {});
  // `count` loops (0 = hardware_concurrency()); options.ioThreads is ignored.
  explicit EventLoopGroup(std::size_t count, LoopOptions options = {});
  ~EventLoopGroup();

  EventLoopGroup(const EventLoopGroup&) = delete;
  EventLoopGroup& operator=(const EventLoopGroup&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return loops_.size(); }
  // Loop i, 0 <= i < size(); std::out_of_range otherwise.
  [[nodiscard]] EventLoop& at(std::size_t i) const;
  // Round robin: loop 0, 1, ..., size()-1, 0, ... in the order calls reach the shared counter
  // (one atomic increment; never blocks).
  [[nodiscard]] EventLoop& next() noexcept;
  // True if `loop` is one of this group's loops.
  [[nodiscard]] bool contains(const EventLoop& loop) const noexcept;
  // True if the calling thread is one of the group's loop threads.
  [[nodiscard]] bool isLoopThread() const noexcept;

  // See "Shutdown".
  int stop();
  [[nodiscard]] bool isStopped() const noexcept { return stopped_.load(std::memory_order_acquire); }

private:
  std::vector<std::unique_ptr<EventLoop>> loops_;
  std::atomic<std::size_t> next_{0};
  std::mutex stopMutex_;  // one stop() at a time; guards result_
  int result_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace wheelbeat::net
