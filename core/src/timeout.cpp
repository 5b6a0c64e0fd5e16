#include "timer_impl.h"

namespace wheelbeat::core {

bool Timeout::cancel() const noexcept {
  return timer_ != nullptr && timer_->impl_->cancel(index_, generation_);
}

TimeoutState Timeout::state() const noexcept {
  return timer_ == nullptr ? TimeoutState::Forgotten : timer_->impl_->state(index_, generation_);
}

TimerTask* Timeout::task() const noexcept {
  return timer_ == nullptr ? nullptr : timer_->impl_->task(index_, generation_);
}

TimeoutState HashedWheelTimer::Impl::state(std::uint32_t index, std::uint32_t gen) const noexcept {
  const detail::Entry& e = at(index);
  const std::uint32_t word = e.state.load(std::memory_order_acquire);
  if (detail::genOf(word) == (gen & detail::kGenMask)) {
    switch (detail::stOf(word)) {
      case detail::kPending: return TimeoutState::Pending;
      case detail::kExpired: return TimeoutState::Expired;
      case detail::kCancelled: return TimeoutState::Cancelled;
      default: return TimeoutState::Forgotten;
    }
  }
  // Finished and freed. Its outcome bit is valid while the slot's generation has moved on by at
  // most 31 (the free of generation gen + 32 rewrites it, after the generation reached gen + 32).
  const std::uint32_t history = e.history.load(std::memory_order_acquire);
  const std::uint32_t later = e.state.load(std::memory_order_acquire);
  if (((detail::genOf(later) - gen) & detail::kGenMask) > 31) return TimeoutState::Forgotten;
  return ((history >> (gen & 31)) & 1) != 0 ? TimeoutState::Cancelled : TimeoutState::Expired;
}

TimerTask* HashedWheelTimer::Impl::task(std::uint32_t index, std::uint32_t gen) const noexcept {
  detail::Entry& e = at(index);
  const std::uint32_t word = e.state.load(std::memory_order_acquire);
  if (detail::genOf(word) != (gen & detail::kGenMask) || !e.task) return nullptr;
  return &e.task;
}

}  // namespace wheelbeat::core
