// HeapTimer: the baseline the benchmark compares the wheel against — the classic design of
// java.util.concurrent.ScheduledThreadPoolExecutor, boost::asio's timer queue and most hand-rolled
// timers: a binary min-heap of (deadline, sequence) under one std::mutex, one worker thread that
// sleeps on a std::condition_variable until the earliest deadline, and cancellation by a flag on
// an entry shared (std::shared_ptr) between the heap and the caller's handle.
//
// It is meant to be an honest baseline, not a straw man:
//  - no tick: a timeout fires at its exact deadline (plus the worker's wake-up latency);
//  - the worker is notified only when a new timeout becomes the earliest one;
//  - due entries are collected under the lock and run outside it;
//  - cancelled entries stay in the heap (lazy deletion, O(1) cancel) but are purged in one O(n)
//    pass whenever they are more than half of the heap, so cancel-heavy loads keep the heap small
//    (amortised O(1) per cancel, what ScheduledThreadPoolExecutor's removeOnCancel buys in O(n)).
// Costs: schedule O(log n) under the lock plus one allocation (the shared entry); cancel O(1).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace wheelbeat::bench {

class HeapTimer {
  static constexpr std::uint8_t kPending = 0;
  static constexpr std::uint8_t kFired = 1;
  static constexpr std::uint8_t kCancelled = 2;

public:
  using Task = std::function<void()>;

  // The entry shared by the heap and the handles. state: kPending -> kFired or kCancelled, once.
  struct Entry {
    explicit Entry(Task t) : task(std::move(t)) {}
    Task task;
    std::atomic<std::uint8_t> state{kPending};
  };

  class Handle {
  public:
    Handle() = default;
    // True only for the call that wins against firing and other cancels. Thread: any, while the
    // timer exists.
    bool cancel() const noexcept;
    [[nodiscard]] bool isPending() const noexcept;

  private:
    friend class HeapTimer;
    Handle(HeapTimer* timer, std::shared_ptr<Entry> entry)
        : timer_(timer), entry_(std::move(entry)) {}
    HeapTimer* timer_ = nullptr;
    std::shared_ptr<Entry> entry_;
  };

  HeapTimer() = default;
  ~HeapTimer();  // stops and joins
  HeapTimer(const HeapTimer&) = delete;
  HeapTimer& operator=(const HeapTimer&) = delete;
  HeapTimer(HeapTimer&&) = delete;
  HeapTimer& operator=(HeapTimer&&) = delete;

  // Starts the worker now rather than on the first schedule(). Thread: any.
  void start();
  // Runs `task` once, `delay` from now (delay <= 0: as soon as the worker gets to it), on the
  // worker thread. Throws std::logic_error after stop(). Thread: any.
  Handle schedule(Task task, std::chrono::nanoseconds delay);
  // Wakes and joins the worker; returns how many timeouts had neither run nor been cancelled
  // (they are marked cancelled and dropped). A second call returns 0. Not from inside a task.
  std::size_t stop();
  // Scheduled and neither fired nor cancelled. Thread: any.
  [[nodiscard]] std::uint64_t pending() const noexcept;

private:
  // Below this size a purge is not worth a pass over the heap.
  static constexpr std::size_t kPurgeMinSize = 1024;

  struct Node {
    std::int64_t deadlineNs;
    std::uint64_t seq;  // FIFO among equal deadlines
    std::shared_ptr<Entry> entry;
  };
  // std::priority_queue's ordering, on a vector we can purge (priority_queue hides its container).
  static bool later(const Node& a, const Node& b) noexcept {
    return a.deadlineNs != b.deadlineNs ? a.deadlineNs > b.deadlineNs : a.seq > b.seq;
  }

  void onCancelled() noexcept;
  void startLocked();
  void purgeCancelledLocked();
  void run();
  void collectDueLocked(std::int64_t nowNs, std::vector<std::shared_ptr<Entry>>& due);
  void runDue(std::vector<std::shared_ptr<Entry>>& due) noexcept;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Node> heap_;  // guarded by mutex_
  std::uint64_t nextSeq_ = 0;
  bool started_ = false;
  bool stopping_ = false;
  std::thread worker_;

  std::atomic<std::int64_t> pending_{0};
  std::atomic<std::int64_t> cancelledInHeap_{0};  // may dip below 0 briefly (cancel vs purge race)
  std::atomic<std::uint64_t> taskErrors_{0};
};

}  // namespace wheelbeat::bench
