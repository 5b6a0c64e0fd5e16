#include "request_tracker.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>

#include <fmt/chrono.h>

#include <exception>
#include <utility>
#include <vector>

namespace wheelbeat::net::detail {

std::uint64_t RequestTracker::add(ResponseCallback done, std::chrono::nanoseconds timeout) {
  const std::uint64_t id = nextId_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    pending_.emplace(id, Pending{std::move(done), {}});
  }
  core::Timeout handle;
  try {
    // Inserted before arming: the timeout can then always find its entry.
    handle = timer_.newTimeout(
        [weak = weak_from_this(), id, timeout] {
          if (auto self = weak.lock()) self->expire(id, timeout);
        },
        timeout);
  } catch (...) {
    drop(id);
    throw;
  }
  std::lock_guard lock(mutex_);
  if (auto it = pending_.find(id); it != pending_.end()) {
    it->second.timeout = handle;
  } else {
    handle.cancel();  // completed (or failed) before its timeout was stored
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

void RequestTracker::expire(std::uint64_t id, std::chrono::nanoseconds after) {
  ResponseCallback done;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // the response or the close came first
    done = std::move(it->second.done);
    pending_.erase(it);
  }
  // The wheel thread must not run application code: hand the callback to the loop. If the loop
  // is stopping, the callback is dropped (its channel is being closed anyway).
  loop_.post([done = std::move(done), id, after] {
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
