#include "request_tracker.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>

#include <fmt/chrono.h>

#include <exception>
#include <optional>
#include <utility>
#include <vector>

namespace wheelbeat::net::detail {

// A request's timeout task must reach its tracker while the tracker lives, and do nothing after.
// A std::weak_ptr and the id made the task 32 bytes: TimerTask then put it on the heap, and the
// wheel thread freed it, so every request cost a cross-thread malloc/free pair (glibc's slow
// path: 15 % of an R1 client's CPU, perf). The task is a counted reference to this small link
// plus the id: 16 bytes, inline in the wheel's entry.
class RequestTracker::Link {
public:
  explicit Link(RequestTracker* tracker) : tracker_(tracker) {}
  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  // Wheel thread. The entry is taken under the link's lock, so the tracker cannot be destroyed
  // meanwhile; the callback is posted (or, the loop stopping, destroyed) after it: a callback
  // owning the last reference to the channel may destroy the tracker, which takes this lock.
  void expire(std::uint64_t id) {
    std::optional<Expired> expired;
    {
      std::lock_guard lock(mutex_);
      if (tracker_ != nullptr) expired = tracker_->take(id);
    }
    if (expired) postTimeout(std::move(*expired), id);
  }
  void detach() noexcept {
    std::lock_guard lock(mutex_);
    tracker_ = nullptr;
  }

private:
  std::atomic<std::uint32_t> refs_{1};
  std::mutex mutex_;
  RequestTracker* tracker_;  // null once the tracker is gone
};

class RequestTracker::LinkRef {
public:
  explicit LinkRef(Link* link) noexcept : link_(link) { link_->retain(); }
  LinkRef(LinkRef&& other) noexcept : link_(std::exchange(other.link_, nullptr)) {}
  LinkRef& operator=(LinkRef&&) = delete;
  LinkRef(const LinkRef&) = delete;
  LinkRef& operator=(const LinkRef&) = delete;
  ~LinkRef() {
    if (link_ != nullptr) link_->release();
  }
  Link* operator->() const noexcept { return link_; }

private:
  Link* link_;
};

class RequestTracker::ExpiryTask {
public:
  ExpiryTask(Link* link, std::uint64_t id) noexcept : link_(link), id_(id) {}
  void operator()() { link_->expire(id_); }

private:
  LinkRef link_;
  std::uint64_t id_;
};

RequestTracker::RequestTracker(EventLoop& loop, core::HashedWheelTimer& timer)
    : link_(new Link(this)), loop_(loop), timer_(timer) {
  static_assert(sizeof(ExpiryTask) <= core::TimerTask::kInlineBytes,
                "a request's timeout task must stay inline (no allocation per request)");
}

RequestTracker::~RequestTracker() {
  link_->detach();
  link_->release();
}

// One lock section: the entry is in the map before its timeout exists, and the timeout's
// expire() takes the same lock, so it always finds the entry with its handle stored (newTimeout
// runs nothing inline and takes no lock of ours).
std::uint64_t RequestTracker::add(ResponseCallback done, std::chrono::nanoseconds timeout) {
  const std::uint64_t id = nextId_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  const auto it = pending_.emplace(id, Pending{std::move(done), {}, timeout}).first;
  try {
    it->second.timeout = timer_.newTimeout(ExpiryTask(link_, id), timeout);
  } catch (...) {
    pending_.erase(it);
    throw;
  }
  return id;
}

void RequestTracker::drop(std::uint64_t id) noexcept {
  std::lock_guard lock(mutex_);
  if (auto it = pending_.find(id); it != pending_.end()) {
    it->second.timeout.cancel();
    pending_.erase(it);
  }
}

bool RequestTracker::complete(const FrameView& frame) {
  ResponseCallback done;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(frame.id);
    if (it == pending_.end()) return false;
    it->second.timeout.cancel();
    done = std::move(it->second.done);
    pending_.erase(it);
  }
  run(done,
      CallResult{CallStatus::Ok, frame.id, frame.flags, frame.status, std::string(frame.body), {}});
  return true;
}

void RequestTracker::failAll(const std::string& error) {
  std::unordered_map<std::uint64_t, Pending> failed;
  {
    std::lock_guard lock(mutex_);
    failed.swap(pending_);
  }
  for (auto& [id, entry] : failed) {
    entry.timeout.cancel();
    run(entry.done, CallResult{CallStatus::Closed, id, 0, 0, {}, error});
  }
}

std::size_t RequestTracker::pending() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

std::optional<RequestTracker::Expired> RequestTracker::take(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = pending_.find(id);
  if (it == pending_.end()) return std::nullopt;  // the response or the close came first
  Expired expired{std::move(it->second.done), it->second.after, &loop_};
  pending_.erase(it);
  return expired;
}

// The wheel thread must not run application code: hand the callback to the loop. If the loop
// is stopping, the callback is dropped (its channel is being closed anyway).
void RequestTracker::postTimeout(Expired expired, std::uint64_t id) {
  expired.loop->post([done = std::move(expired.done), id, after = expired.after] {
    run(done, CallResult{CallStatus::Timeout,
                         id,
                         0,
                         0,
                         {},
                         fmt::format("no response within {}", core::human(after))});
  });
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
