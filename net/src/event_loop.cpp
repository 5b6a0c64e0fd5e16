#include "loop_internal.h"

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
// Posted functions run per poll of the loop (runBatch(): why shares, and why 32).
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
// answers are read between shares, which keeps benchmark H1's heartbeat RTT within its target
// (shares of 8 and of 128 measured the same within noise). The shares cost a few percent of CPU
// per heartbeat (the server wakes per share rather than per burst): an open question
// (docs/performance.md).
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

// EventLoop

namespace {

// libuv writes to sockets with write(2), so a write to a connection the peer just reset raises
// SIGPIPE, whose default action kills the process (a provider died of its consumer's SIGKILL).
// Ignored once per process, and only while it has the default action: a handler or an explicit
// disposition the application installed is left alone.
void ignoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      // The result is ignored on purpose: signal() fails only for an invalid signal number.
      (void)::signal(SIGPIPE, SIG_IGN);
    }
  });
}

}  // namespace

EventLoop::EventLoop(std::string name, LoopOptions options)
    : impl_((ignoreSigpipeOnce(), std::make_unique<Impl>(std::move(name), options))) {}

EventLoop::~EventLoop() {
  try {
    impl_->stop();
  } catch (
      ...) {  // NOLINT(bugprone-empty-catch): logged by threadMain; a destructor must not throw
  }
}

bool EventLoop::post(std::function<void()> fn) { return impl_->post(std::move(fn)); }

bool EventLoop::call(const std::function<void()>& fn) {
  if (isLoopThread()) {
    fn();
    return true;
  }
  // The exception object itself never crosses threads (libstdc++ shares it through reference
  // counts TSan cannot see): its message does, and the caller throws a fresh exception.
  std::promise<void> done;
  auto result = done.get_future();
  std::string failure;
  bool failed = false;
  const bool posted = impl_->post([&fn, &done, &failure, &failed] {
    try {
      fn();
    } catch (const std::exception& e) {
      failed = true;
      failure = e.what();
    } catch (...) {
      failed = true;
      failure = "unknown exception";
    }
    done.set_value();
  });
  if (!posted) return false;
  result.get();
  if (failed) throw std::runtime_error(failure);
  return true;
}

bool EventLoop::isLoopThread() const noexcept {
  return std::this_thread::get_id() == impl_->loopThread;
}
bool EventLoop::isStopped() const noexcept {
  return impl_->stopped.load(std::memory_order_acquire);
}
int EventLoop::stop() { return impl_->stop(); }

std::uint64_t EventLoop::wakeups() const noexcept {
  return impl_->wakeups.load(std::memory_order_relaxed);
}
std::uint64_t EventLoop::tasksRun() const noexcept {
  return impl_->tasksRun.load(std::memory_order_relaxed);
}
std::uint64_t EventLoop::taskErrors() const noexcept {
  return impl_->taskErrors.load(std::memory_order_relaxed);
}
uv_loop_s* EventLoop::native() const noexcept { return &impl_->loop; }

// detail

namespace detail {

namespace {
EventLoop::Impl& implOf(uv_loop_t* loop) noexcept {
  return *static_cast<EventLoop::Impl*>(loop->data);
}
}  // namespace

void closeRegisteredHandles(uv_loop_t* loop) noexcept {
  // closeForShutdown() starts a uv_close (the handle unregisters itself later, in its close
  // callback), but it may also run callbacks that close, unregister or free OTHER handles (a
  // ZooKeeper session's final callbacks, say). So `next` is read after the call, from h's links
  // as they are then; if h itself left the list meanwhile, the walk starts over from the head,
  // skipping the handles already asked.
  auto& impl = implOf(loop);
  LoopHandle* h = impl.handles;
  while (h != nullptr) {
    if (h->shutdownAsked_) {
      h = h->next_;
      continue;
    }
    h->shutdownAsked_ = true;
    h->closeForShutdown();
    const bool listed = h == impl.handles || h->prev_ != nullptr;
    h = listed ? h->next_ : impl.handles;
  }
}

char* readBuffer(uv_loop_t* loop) noexcept { return implOf(loop).readBuffer.get(); }

PartialFrameBudget& partialBudget(uv_loop_t* loop) noexcept { return implOf(loop).partialBudget; }
ReadOutbox& readOutbox(uv_loop_t* loop) noexcept { return implOf(loop).readOutbox; }
bool postFlushNode(uv_loop_t* loop, FlushNode* node) noexcept {
  return implOf(loop).postFlushNode(node);
}

}  // namespace detail

// The public seam (loop_handle.h): the loop's list of open handles.
void registerHandle(uv_loop_t* loop, LoopHandle* handle) noexcept {
  auto& impl = *static_cast<EventLoop::Impl*>(loop->data);
  handle->prev_ = nullptr;
  handle->next_ = impl.handles;
  if (impl.handles != nullptr) impl.handles->prev_ = handle;
  impl.handles = handle;
}

void unregisterHandle(uv_loop_t* loop, LoopHandle* handle) noexcept {
  auto& impl = *static_cast<EventLoop::Impl*>(loop->data);
  if (handle->prev_ != nullptr) handle->prev_->next_ = handle->next_;
  if (handle->next_ != nullptr) handle->next_->prev_ = handle->prev_;
  if (impl.handles == handle) impl.handles = handle->next_;
  handle->prev_ = handle->next_ = nullptr;
}

}  // namespace wheelbeat::net
