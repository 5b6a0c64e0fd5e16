// EventLoop::Impl: the loop's state, shared by event_loop.cpp (the loop thread, posting,
// stopping) and event_loop_api.cpp (EventLoop's public calls, the detail functions of
// loop_internal.h). Private to net/.
#pragma once

#include "loop_internal.h"

#include <wheelbeat/net/event_loop.h>

#include <uv.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace wheelbeat::net {

class EventLoop::Impl {
public:
  Impl(std::string name, const LoopOptions& options);
  void threadMain();
  bool post(std::function<void()>&& fn);
  bool postFlushNode(detail::FlushNode* node) noexcept;
  void takeNodes() noexcept;
  std::size_t runNodes(std::size_t limit) noexcept;
  [[nodiscard]] bool batchDone() const noexcept {
    return next == running.size() && nodesTaken == nullptr;
  }
  int stop();
  static void onAsync(uv_async_t* async) noexcept;
  void runBatch() noexcept;
  bool takeQueue() noexcept;
  void runSome(std::size_t limit) noexcept;
  void dropRan() noexcept;
  bool queued() noexcept;
  void beginShutdown() noexcept;

  uv_loop_t loop{};
  uv_async_t async{};
  std::string name;
  std::thread::id loopThread;  // written before the constructor returns, then read-only
  std::thread thread;

  std::mutex mutex;  // guards queue and stopping
  std::vector<std::function<void()>> queue;
  bool stopping = false;
  std::vector<std::function<void()>> running;  // loop thread: the batch being run
  std::size_t next = 0;                        // loop thread: running[next] runs next
  // postFlushNode()'s list, newest first; kClosedNodes once the loop is stopping (pushes refused).
  std::atomic<detail::FlushNode*> nodes{nullptr};
  detail::FlushNode* nodesTaken = nullptr;  // loop thread: the batch's nodes, oldest first

  std::mutex stopMutex;  // one stop() at a time; guards joined / closeResult
  bool joined = false;
  int closeResult = 0;
  std::atomic<bool> stopped{false};

  // Written by the loop thread alone (bump(): no locked instruction per posted function).
  std::atomic<std::uint64_t> wakeups{0};
  std::atomic<std::uint64_t> tasksRun{0};
  std::atomic<std::uint64_t> taskErrors{0};
  std::unique_ptr<char[]> readBuffer{new char[detail::kReadBufferSize]};
  PartialFrameBudget partialBudget;       // loop thread
  detail::ReadOutbox readOutbox;          // loop thread
  detail::LoopHandle* handles = nullptr;  // registered open handles (loop thread)
  bool shutdownBegun = false;             // loop thread
};

}  // namespace wheelbeat::net
