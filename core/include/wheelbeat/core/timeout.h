// Timeout: the handle HashedWheelTimer::newTimeout() returns (Netty's io.netty.util.Timeout).
//
// A Timeout is a small value (16 bytes, trivially copyable): the timer, a slot index and the
// generation of that slot. Every query checks the generation, so a handle stays safe to use after
// its timeout fired, was cancelled, or its slot was reused by a later timeout — it never reaches
// another timeout's state. A default-constructed handle refers to nothing: cancel() returns false
// and state() is Forgotten.
//
// Lifetime: a handle may be copied and destroyed anywhere, at any time, also after its timer is
// gone; *calling a member* after the timer was destroyed is undefined (like any C++ iterator).
//
// Outcome memory: the outcome (expired or cancelled) of a finished timeout is remembered until
// its slot has been reused by 30 later timeouts; after that state() answers Forgotten and both
// isExpired() and isCancelled() return false. Pending state is always exact. (An exact answer
// forever would need a reference count per handle: an atomic on every copy, and memory that
// outlives the timer; a handle this cheap was judged worth the bounded memory.)
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <cstdint>

namespace wheelbeat::core {

class HashedWheelTimer;
class TimerTask;

enum class TimeoutState : std::uint8_t {
  Pending,    // scheduled, not yet run and not cancelled
  Expired,    // its tick came: the task has run, is running, or was handed to the executor
  Cancelled,  // cancel() won, or stop() handed it back
  Forgotten,  // finished long ago (see "Outcome memory" above), or an empty handle
};

class Timeout {
public:
  Timeout() noexcept = default;

  // Cancels the timeout if it is still pending. Returns true only for the one call that wins;
  // false if it already expired, was cancelled, or the handle is empty. A cancelled task is
  // destroyed (its captures released) on the wheel thread within one tick.
  // Thread: any, including from inside any task of this timer.
  bool cancel() const noexcept;

  // Thread: any. Exact while pending; see "Outcome memory" once finished.
  [[nodiscard]] TimeoutState state() const noexcept;
  [[nodiscard]] bool isPending() const noexcept { return state() == TimeoutState::Pending; }
  [[nodiscard]] bool isExpired() const noexcept { return state() == TimeoutState::Expired; }
  [[nodiscard]] bool isCancelled() const noexcept { return state() == TimeoutState::Cancelled; }

  // The timer that created this handle (nullptr for an empty handle). Thread: any.
  [[nodiscard]] HashedWheelTimer* timer() const noexcept { return timer_; }

  // The task of this timeout, or nullptr once it is released (and for an empty handle). A task
  // is released after it ran (with an executor: when it was handed over), or on the wheel thread
  // after it was cancelled; the tasks of the timeouts stop() returned are kept until the timer
  // is destroyed, so the caller of stop() can run or inspect them.
  // Thread: the timer's wheel thread (e.g. inside a task, for its own or another timeout), or
  // any thread once the timer is stopped. Elsewhere the task may be released concurrently.
  [[nodiscard]] TimerTask* task() const noexcept;

  [[nodiscard]] explicit operator bool() const noexcept { return timer_ != nullptr; }
  friend bool operator==(const Timeout&, const Timeout&) noexcept = default;

private:
  friend class HashedWheelTimer;
  Timeout(HashedWheelTimer* timer, std::uint32_t index, std::uint32_t generation) noexcept
      : timer_(timer), index_(index), generation_(generation) {}

  HashedWheelTimer* timer_ = nullptr;
  std::uint32_t index_ = 0;
  std::uint32_t generation_ = 0;
};

}  // namespace wheelbeat::core
