#include "request_tracker.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>

#include <fmt/chrono.h>

#include <exception>
#include <string>
#include <utility>

namespace wheelbeat::net::detail {

// A request's timeout task must reach its tracker while the tracker lives, and do nothing after.
// A std::weak_ptr and the id made the task 32 bytes: TimerTask then put it on the heap, and the
// wheel thread freed it, so every request cost a cross-thread malloc/free pair (glibc's slow
// path, a large share of a pipelining client's CPU). The task is a counted reference to this small
// link plus the id: 16 bytes, inline in the wheel's entry.
class RequestTracker::Link {
public:
  Link(RequestTracker* tracker, EventLoop* loop) : tracker_(tracker), loop_(loop) {}
  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  // Wheel thread: hands the id to the loop, which owns the entries. While the tracker lives its
  // loop does (the lock keeps the tracker from going meanwhile); a stopping loop refuses the
  // post, and the request's channel is being closed anyway.
  void postExpiry(std::uint64_t id);
  // Loop thread. The entry is taken under the lock, so the tracker cannot be destroyed
  // meanwhile; the callback runs after it: a callback owning the last reference to the channel
  // may destroy the tracker, which takes this lock.
  void expire(std::uint64_t id) {
    ResponseCallback done;
    std::chrono::nanoseconds after{0};
    {
      std::lock_guard lock(mutex_);
      if (tracker_ == nullptr) return;
      const auto it = tracker_->find(id);
      if (it == tracker_->pending_.end()) return;  // the response or the close came first
      after = it->second.after;
      done = tracker_->release(it);
    }
    run(done, CallResult{CallStatus::Timeout,
                         id,
                         0,
                         0,
                         {},
                         fmt::format("no response within {}", core::human(after))});
  }
  void detach() noexcept {
    std::lock_guard lock(mutex_);
    tracker_ = nullptr;
  }

private:
  std::atomic<std::uint32_t> refs_{1};
  std::mutex mutex_;
  RequestTracker* tracker_;  // null once the tracker is gone
  EventLoop* loop_;
};

class RequestTracker::LinkRef {
public:
  explicit LinkRef(Link* link) noexcept : link_(link) { link_->retain(); }
  LinkRef(const LinkRef& other) noexcept : LinkRef(other.link_) {}  // std::function copies
  LinkRef(LinkRef&& other) noexcept : link_(std::exchange(other.link_, nullptr)) {}
  LinkRef& operator=(LinkRef&&) = delete;
  LinkRef& operator=(const LinkRef&) = delete;
  ~LinkRef() {
    if (link_ != nullptr) link_->release();
  }
  Link* operator->() const noexcept { return link_; }

private:
  Link* link_;
};

void RequestTracker::Link::postExpiry(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  if (tracker_ == nullptr) return;
  loop_->post([link = LinkRef(this), id] { link->expire(id); });
}

class RequestTracker::ExpiryTask {
public:
  ExpiryTask(Link* link, std::uint64_t id) noexcept : link_(link), id_(id) {}
  void operator()() { link_->postExpiry(id_); }

private:
  LinkRef link_;
  std::uint64_t id_;
};

RequestTracker::RequestTracker(EventLoop& loop, core::HashedWheelTimer& timer)
    : link_(new Link(this, &loop)), loop_(loop), timer_(timer) {
  static_assert(sizeof(ExpiryTask) <= core::TimerTask::kInlineBytes,
                "a request's timeout task must stay inline (no allocation per request)");
}

RequestTracker::~RequestTracker() {
  link_->detach();
  link_->release();
}

RequestTracker::Pending RequestTracker::arm(ResponseCallback done, std::uint64_t id,
                                            std::chrono::nanoseconds timeout) {
  return Pending{std::move(done), timer_.newTimeout(ExpiryTask(link_, id), timeout), timeout};
}

void RequestTracker::insert(std::uint64_t id, Pending entry) {
  try {
    if (spare_.empty()) {
      pending_.emplace(id, std::move(entry));
    } else {
      Map::node_type node = std::move(spare_.back());
      spare_.pop_back();
      node.key() = id;
      node.mapped() = std::move(entry);
      pending_.insert(std::move(node));
    }
  } catch (...) {
    entry.timeout.cancel();
    throw;
  }
  noteSize();
}

void RequestTracker::erase(std::uint64_t id) noexcept {
  if (const auto it = pending_.find(id); it != pending_.end()) {
    it->second.timeout.cancel();
    release(it);
  }
}

// Takes the callback and keeps the node for the next request (a pipelining channel then
// allocates nothing per request); a burst's extra nodes beyond kSpares are freed.
ResponseCallback RequestTracker::release(Map::iterator it) noexcept {
  constexpr std::size_t kSpares = 64;
  ResponseCallback done = std::move(it->second.done);
  it->second.done = nullptr;  // a moved-from std::function may keep its target
  Map::node_type node = pending_.extract(it);
  if (spare_.size() < kSpares) {
    try {
      spare_.push_back(std::move(node));
    } catch (...) {  // no room to keep it: freed with `node`
    }
  }
  noteSize();
  return done;
}

RequestTracker::Map::iterator RequestTracker::find(std::uint64_t id) {
  auto it = pending_.find(id);
  if (it != pending_.end()) return it;
  takeInbox();  // a request from another thread, perhaps still being sent: wait for it
  return pending_.find(id);
}

void RequestTracker::takeInbox() {
  std::lock_guard lock(inboxMutex_);
  for (auto& [id, entry] : inbox_) insert(id, std::move(entry));
  inbox_.clear();
  inboxSize_.store(0, std::memory_order_relaxed);
}

bool RequestTracker::complete(const FrameView& frame) {
  const auto it = find(frame.id);
  if (it == pending_.end()) return false;
  it->second.timeout.cancel();
  const ResponseCallback done = release(it);
  // One result per loop thread, its body's buffer reused (a 64-byte body is past the string's
  // inline capacity: a malloc and free per response otherwise). A callback that completes
  // another request inside (it cannot: reads do not nest) would get a fresh one.
  thread_local CallResult scratch;
  thread_local bool inUse = false;
  if (inUse) {
    run(done,
        CallResult{
            CallStatus::Ok, frame.id, frame.flags, frame.status, std::string(frame.body), {}});
    return true;
  }
  inUse = true;
  scratch.id = frame.id;
  scratch.flags = frame.flags;
  scratch.frameStatus = frame.status;
  scratch.body.assign(frame.body);
  run(done, scratch);
  constexpr std::size_t kKeepUpTo = 64 << 10;  // a large body's buffer is not kept
  if (scratch.body.capacity() > kKeepUpTo) std::string().swap(scratch.body);
  inUse = false;
  return true;
}

void RequestTracker::failAll(const std::string& error) {
  takeInbox();
  Map failed;
  failed.swap(pending_);
  noteSize();
  for (auto& [id, entry] : failed) {
    entry.timeout.cancel();
    run(entry.done, CallResult{CallStatus::Closed, id, 0, 0, {}, error});
  }
}

std::size_t RequestTracker::pending() const noexcept {
  return mapSize_.load(std::memory_order_relaxed) + inboxSize_.load(std::memory_order_relaxed);
}

void RequestTracker::run(const ResponseCallback& done, const CallResult& result) noexcept {
  if (!done) return;
  try {
    done(result);
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "request {} callback threw: {}", result.id, e.what());
  } catch (...) {
    core::log(core::LogLevel::Error, "request {} callback threw", result.id);
  }
}

}  // namespace wheelbeat::net::detail
