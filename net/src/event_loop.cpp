#include "event_loop_impl.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/net/error.h>
#include <wheelbeat/net/event_loop.h>

#include <pthread.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstddef>
#include <exception>
#include <future>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace wheelbeat::net {

using core::log;
using core::LogLevel;

namespace {
// Posted functions run per poll of the loop (runBatch()). Measured on H1 (README).
constexpr std::size_t kPostedPerPoll = 32;

// postFlushNode()'s list once the loop is stopping: never a node's address (nor null).
detail::FlushNode kClosedNodesMark;
detail::FlushNode* const kClosedNodes = &kClosedNodesMark;

// A counter with one writer: a plain add, published for readers on other threads.
void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by = 1) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}
}  // namespace

using core::LogLevel;

EventLoop::Impl::Impl(std::string threadName, const LoopOptions& options)
    : name(std::move(threadName)), partialBudget(options.maxPartialBytes) {
  if (int rc = uv_loop_init(&loop); rc != 0) {
    throw std::runtime_error(fmt::format("wheelbeat: uv_loop_init failed: {}", NetError(rc)));
  }
  loop.data = this;
  uv_async_init(&loop, &async, &Impl::onAsync);  // cannot fail on an initialised loop
  async.data = this;
  std::promise<void> started;
  thread = std::thread([this, &started] {
    loopThread = std::this_thread::get_id();
    started.set_value();
    threadMain();
  });
  started.get_future().wait();
}

void EventLoop::Impl::threadMain() {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  uv_run(&loop, UV_RUN_DEFAULT);  // returns once stop() closed the async and every handle
  closeResult = uv_loop_close(&loop);
  if (closeResult != 0) {
    log(LogLevel::Error, "event loop '{}': uv_loop_close: {}", name, NetError(closeResult));
  }
}

bool EventLoop::Impl::post(std::function<void()>&& fn) {
  std::lock_guard lock(mutex);
  if (stopping) return false;
  const bool wake = queue.empty();
  queue.push_back(std::move(fn));
  // Sent under the lock: the loop closes the async only after it saw `stopping` under this lock,
  // so a send can never reach a closed handle. Only the first post of a batch needs to wake it.
  if (wake) uv_async_send(&async);
  return true;
}

// A push is one compare-and-swap; only the push that finds the list empty wakes the loop, under
// the lock (as post(): the async is never sent once the loop saw `stopping`).
bool EventLoop::Impl::postFlushNode(detail::FlushNode* node) noexcept {
  detail::FlushNode* head = nodes.load(std::memory_order_relaxed);
  do {
    if (head == kClosedNodes) return false;
    node->nextFlush = head;
  } while (!nodes.compare_exchange_weak(head, node, std::memory_order_release,
                                        std::memory_order_relaxed));
  if (head == nullptr) {
    std::lock_guard lock(mutex);
    if (!stopping) uv_async_send(&async);
  }
  return true;
}

void EventLoop::Impl::onAsync(uv_async_t* async) noexcept {
  auto* self = static_cast<Impl*>(async->data);
  self->runBatch();
}

// Runs posted functions in post order: what is left of the last batch first, then the queue as
// it is now. While the loop runs normally, at most kPostedPerPoll per call: with more left the
// async is sent again, so that libuv polls I/O before the next share. A wheel tick hands over
// one heartbeat per due channel (~450 in H1) at once; run in one go, their writes all went out
// before any answer was read, and each answer waited for the whole burst. In shares of 32,
// answers are read between shares: H1's heartbeat RTT p50 / p99 went from 22.8 / 38.3 ms to
// 14.0 / 30.1 ms (README, "Heartbeats at scale"); shares of 8 measured the same within noise.
// On a quiet machine the shares cost CPU per heartbeat (1.16-1.21 x the floor against 1.06-1.09
// before, two runs each): the server wakes per share rather than per burst. Still open (README).
// Why not spread a tick's sends over the tick instead: each send would then wake the peer's loop on
// its own (the server's epoll_wait returns ~150 ready sockets per call in a burst), a sleep and a
// wake-up per heartbeat on both sides, against a CPU budget of 1.10 × the floor. The poll between
// shares costs one epoll_wait that returns at once (the eventfd is ready), nothing per function.
void EventLoop::Impl::runBatch() noexcept {
  if (!takeQueue()) {
    runSome(kPostedPerPoll);
    const bool rest = !batchDone();
    if (!rest) dropRan();
    // The rest after the poll (the handle is open: not stopping). Also when the batch is done
    // but more was posted meanwhile: that post's wake-up found the async pending already and was
    // spent on a share of this batch.
    if (rest || queued()) uv_async_send(&async);
    return;
  }
  // Stopping: drain without bounds until nothing was accepted before `stopping`.
  do {
    const bool ranSome = !running.empty() || nodesTaken != nullptr;
    runSome(std::numeric_limits<std::size_t>::max());
    dropRan();
    if (!ranSome) break;
  } while (takeQueue());
  beginShutdown();
}

// Takes the queue and the nodes if the last batch is done; returns `stopping`.
bool EventLoop::Impl::takeQueue() noexcept {
  std::lock_guard lock(mutex);
  if (batchDone()) {
    running.clear();  // empty already (dropRan): keeps its capacity
    next = 0;
    running.swap(queue);
    // After the queue: a node pushed before a function was posted is in this hand-over too.
    takeNodes();
    // A hand-over: everything posted since the last one. The loop's own resumptions between
    // shares of a batch are not counted.
    if (!running.empty() || nodesTaken != nullptr) bump(wakeups);
  }
  return stopping;
}

// Under the lock. Once stopping, the list is closed: what was pushed before is run, nothing after.
void EventLoop::Impl::takeNodes() noexcept {
  detail::FlushNode* taken =
      nodes.exchange(stopping ? kClosedNodes : nullptr, std::memory_order_acquire);
  if (taken == kClosedNodes) taken = nullptr;
  detail::FlushNode* oldestFirst = nullptr;
  while (taken != nullptr) {
    detail::FlushNode* older = taken->nextFlush;
    taken->nextFlush = oldestFirst;
    oldestFirst = taken;
    taken = older;
  }
  nodesTaken = oldestFirst;
}

// Runs up to `limit` taken nodes; returns how many ran. A node may be pushed again from its own
// run (its link is read first).
std::size_t EventLoop::Impl::runNodes(std::size_t limit) noexcept {
  std::size_t ran = 0;
  while (ran < limit && nodesTaken != nullptr) {
    detail::FlushNode* node = std::exchange(nodesTaken, nodesTaken->nextFlush);
    node->nextFlush = nullptr;
    detail::runFlushNode(node);
    ++ran;
  }
  return ran;
}

// The batch's nodes first, then its functions: at most `limit` in all.
void EventLoop::Impl::runSome(std::size_t limit) noexcept {
  const std::size_t nodesRan = runNodes(limit);
  limit -= nodesRan;
  const std::size_t first = next;
  const std::size_t end = running.size() - next <= limit ? running.size() : next + limit;
  for (; next < end; ++next) {
    try {
      running[next]();
    } catch (const std::exception& e) {
      taskErrors.fetch_add(1, std::memory_order_relaxed);
      log(LogLevel::Error, "event loop '{}': a posted function threw: {}", name, e.what());
    } catch (...) {
      taskErrors.fetch_add(1, std::memory_order_relaxed);
      log(LogLevel::Error, "event loop '{}': a posted function threw", name);
    }
  }
  bump(tasksRun, nodesRan + (next - first));
}

bool EventLoop::Impl::queued() noexcept {
  std::lock_guard lock(mutex);
  const detail::FlushNode* head = nodes.load(std::memory_order_relaxed);
  return !queue.empty() || (head != nullptr && head != kClosedNodes);
}

// Destroys the closures of a finished batch (and what they captured) on the loop thread,
// outside the lock: a destructor may post.
void EventLoop::Impl::dropRan() noexcept {
  running.clear();
  next = 0;
}

void EventLoop::Impl::beginShutdown() noexcept {
  if (shutdownBegun) return;
  shutdownBegun = true;
  detail::closeRegisteredHandles(&loop);
  uv_walk(
      &loop,
      [](uv_handle_t* h, void* arg) {
        auto* self = static_cast<Impl*>(arg);
        if (uv_is_closing(h) != 0 || h == detail::asHandle(&self->async)) return;
        log(LogLevel::Warn, "event loop '{}': closing a foreign {} handle at stop()", self->name,
            uv_handle_type_name(uv_handle_get_type(h)));
        uv_close(h, nullptr);
      },
      this);
  uv_close(detail::asHandle(&async), nullptr);
}

int EventLoop::Impl::stop() {
  if (std::this_thread::get_id() == loopThread) {
    throw std::logic_error("wheelbeat: EventLoop::stop() called on the loop thread");
  }
  std::lock_guard stopLock(stopMutex);
  if (joined) return closeResult;
  {
    std::lock_guard lock(mutex);
    stopping = true;
    uv_async_send(&async);
  }
  thread.join();
  joined = true;
  stopped.store(true, std::memory_order_release);
  return closeResult;
}

}  // namespace wheelbeat::net
