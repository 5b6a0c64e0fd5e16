// EventLoop's public calls (event_loop.h) and the detail functions of loop_internal.h, over
// EventLoop::Impl (event_loop_impl.h).
#include "event_loop_impl.h"

#include <csignal>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <utility>

namespace wheelbeat::net {

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
  users_.checkNoneLeft("EventLoop");
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

namespace {
EventLoop::Impl& implOf(uv_loop_t* loop) noexcept {
  return *static_cast<EventLoop::Impl*>(loop->data);
}
}  // namespace

// The public seam (loop_handle.h): the loop's list of open handles.
void registerHandle(uv_loop_t* loop, LoopHandle* handle) noexcept {
  auto& impl = implOf(loop);
  handle->prev_ = nullptr;
  handle->next_ = impl.handles;
  if (impl.handles != nullptr) impl.handles->prev_ = handle;
  impl.handles = handle;
}

void unregisterHandle(uv_loop_t* loop, LoopHandle* handle) noexcept {
  auto& impl = implOf(loop);
  if (handle->prev_ != nullptr) handle->prev_->next_ = handle->next_;
  if (handle->next_ != nullptr) handle->next_->prev_ = handle->prev_;
  if (impl.handles == handle) impl.handles = handle->next_;
  handle->prev_ = handle->next_ = nullptr;
}

namespace detail {

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
}  // namespace wheelbeat::net
