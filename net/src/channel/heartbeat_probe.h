// HeartbeatProbe: a channel's heartbeat probe stage — sending our heartbeat request (through the
// outbox's fast path), timing it (the wait from the wheel's decision to the write, the round trip
// from the write to the answer) and the φ-accrual detector fed by every read. Private to net/.
//
// Thread rule: the loop thread, except send() (any thread: the id is taken under the outbox's
// lock) and the getters (atomics, any thread; detector(): its own rules).
#pragma once

#include "outbox.h"

#include <wheelbeat/tasks/failure_detector.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace wheelbeat::net::detail {

class HeartbeatProbe {
public:
  // Keeps a φ-accrual detector when `heartbeat.detector` is Phi.
  explicit HeartbeatProbe(const tasks::HeartbeatOptions& heartbeat);

  // Queues our next heartbeat request in `outbox` (Outbox::enqueueHeartbeat()), decided at
  // `decidedAt` (timer clock, ns). Any thread.
  template <typename Hold>
  Enqueued send(Outbox& outbox, std::int64_t decidedAt, bool inRead, Hold&& hold) {
    return outbox.enqueueHeartbeat(
        decidedAt, inRead, [this] { return id_.fetch_add(1, std::memory_order_relaxed) + 1; },
        std::forward<Hold>(hold));
  }
  // The flush wrote the last heartbeat request queued, decided at `decidedAt`, at `now`. Loop.
  void written(std::int64_t now, std::int64_t decidedAt) noexcept {
    writtenAt_ = now;
    writeWait_ = now - decidedAt;
    timed_ = false;
  }
  // A heartbeat response `id` came in the read stamped `readAt`: its round trip (ns), if it
  // answers the last request written and none was timed since (an answer to an older request, or
  // to none of ours, is not). Without the outbox's lock: the peer can only answer the last
  // request once this loop wrote it. Loop.
  [[nodiscard]] std::optional<std::int64_t> answered(std::uint64_t id,
                                                     std::int64_t readAt) noexcept;
  // A read arrived at `now`: the φ detector's heartbeat. Loop.
  void fed(std::chrono::nanoseconds now) noexcept {
    if (detector_) detector_->heartbeat(now);
  }
  // A new connection at `now`: the detector's history starts again. Loop.
  void restart(std::chrono::nanoseconds now) noexcept;

  [[nodiscard]] std::chrono::nanoseconds lastRtt() const noexcept {
    return std::chrono::nanoseconds(rtt_.load(std::memory_order_relaxed));
  }
  [[nodiscard]] std::chrono::nanoseconds lastSendWait() const noexcept {
    return std::chrono::nanoseconds(sendWait_.load(std::memory_order_relaxed));
  }
  [[nodiscard]] std::uint64_t lastId() const noexcept {
    return id_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] const tasks::PhiAccrualDetector* detector() const noexcept {
    return detector_.get();
  }

private:
  const std::unique_ptr<tasks::PhiAccrualDetector> detector_;  // Phi only
  std::atomic<std::uint64_t> id_{0};                           // the last request queued
  std::atomic<std::int64_t> rtt_{0};
  std::atomic<std::int64_t> sendWait_{0};
  std::int64_t writtenAt_ = 0;  // loop: the write of the last request
  std::int64_t writeWait_ = 0;  // loop: its wait from send() to that write
  bool timed_ = true;           // loop: the last request written was answered (or none was)
};

}  // namespace wheelbeat::net::detail
