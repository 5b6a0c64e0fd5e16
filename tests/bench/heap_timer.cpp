#include "heap_timer.h"

#include <algorithm>
#include <stdexcept>

namespace wheelbeat::bench {
namespace {

std::int64_t nowNs() noexcept {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

std::chrono::steady_clock::time_point timePointOf(std::int64_t ns) noexcept {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

}  // namespace

bool HeapTimer::Handle::cancel() const noexcept {
  if (!entry_) return false;
  std::uint8_t expected = kPending;
  if (!entry_->state.compare_exchange_strong(expected, kCancelled, std::memory_order_acq_rel)) {
    return false;
  }
  timer_->onCancelled();
  return true;
}

bool HeapTimer::Handle::isPending() const noexcept {
  return entry_ && entry_->state.load(std::memory_order_acquire) == kPending;
}

HeapTimer::~HeapTimer() { stop(); }

void HeapTimer::start() {
  std::lock_guard lock(mutex_);
  if (stopping_) throw std::logic_error("HeapTimer: start() after stop()");
  startLocked();
}

void HeapTimer::startLocked() {
  if (started_) return;
  started_ = true;
  worker_ = std::thread([this] { run(); });
}

HeapTimer::Handle HeapTimer::schedule(Task task, std::chrono::nanoseconds delay) {
  auto entry = std::make_shared<Entry>(std::move(task));
  const std::int64_t deadline = nowNs() + std::max<std::int64_t>(delay.count(), 0);
  bool becameEarliest = false;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw std::logic_error("HeapTimer: schedule() after stop()");
    startLocked();
    if (heap_.size() >= kPurgeMinSize &&
        2 * cancelledInHeap_.load(std::memory_order_relaxed) > std::ssize(heap_)) {
      purgeCancelledLocked();
    }
    heap_.push_back(Node{deadline, nextSeq_++, entry});
    std::push_heap(heap_.begin(), heap_.end(), later);
    becameEarliest = heap_.front().entry == entry;
  }
  pending_.fetch_add(1, std::memory_order_relaxed);
  // The worker sleeps until the earliest deadline: only a new earliest one changes its plan.
  if (becameEarliest) cv_.notify_one();
  return {this, std::move(entry)};
}

void HeapTimer::onCancelled() noexcept {
  pending_.fetch_sub(1, std::memory_order_relaxed);
  cancelledInHeap_.fetch_add(1, std::memory_order_relaxed);
}

void HeapTimer::purgeCancelledLocked() {
  const auto removed = std::erase_if(heap_, [](const Node& n) {
    return n.entry->state.load(std::memory_order_acquire) == kCancelled;
  });
  std::make_heap(heap_.begin(), heap_.end(), later);
  cancelledInHeap_.fetch_sub(static_cast<std::int64_t>(removed), std::memory_order_relaxed);
}

std::size_t HeapTimer::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return 0;
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  std::size_t unrun = 0;
  std::vector<Node> nodes;
  {
    std::lock_guard lock(mutex_);
    nodes.swap(heap_);
  }
  for (const Node& n : nodes) {
    std::uint8_t expected = kPending;
    if (n.entry->state.compare_exchange_strong(expected, kCancelled)) ++unrun;
  }
  pending_.fetch_sub(static_cast<std::int64_t>(unrun), std::memory_order_relaxed);
  return unrun;
}

std::uint64_t HeapTimer::pending() const noexcept {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(pending_.load(), 0));
}

void HeapTimer::run() {
  std::vector<std::shared_ptr<Entry>> due;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (heap_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const std::int64_t now = nowNs();
    if (heap_.front().deadlineNs > now) {
      cv_.wait_until(lock, timePointOf(heap_.front().deadlineNs));
      continue;
    }
    collectDueLocked(now, due);
    lock.unlock();
    runDue(due);
    lock.lock();
  }
}

void HeapTimer::collectDueLocked(std::int64_t nowNs, std::vector<std::shared_ptr<Entry>>& due) {
  while (!heap_.empty() && heap_.front().deadlineNs <= nowNs) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Node node = std::move(heap_.back());
    heap_.pop_back();
    if (node.entry->state.load(std::memory_order_acquire) == kCancelled) {
      cancelledInHeap_.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    due.push_back(std::move(node.entry));
  }
}

void HeapTimer::runDue(std::vector<std::shared_ptr<Entry>>& due) noexcept {
  for (const auto& entry : due) {
    std::uint8_t expected = kPending;
    if (!entry->state.compare_exchange_strong(expected, kFired, std::memory_order_acq_rel)) {
      // Cancelled after it was collected: it was counted as "in the heap", and no longer is.
      cancelledInHeap_.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    pending_.fetch_sub(1, std::memory_order_relaxed);
    try {
      entry->task();
    } catch (...) {
      taskErrors_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  due.clear();  // drops the entries (and their tasks) outside the lock
}

}  // namespace wheelbeat::bench
