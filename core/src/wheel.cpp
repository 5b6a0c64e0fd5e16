#include "wheel.h"

#include <algorithm>
#include <bit>

namespace wheelbeat::core::detail {

Wheel::Wheel(EntryPool& pool, int wheelBits)
    : pool_(pool),
      wheelBits_(wheelBits),
      wheelSize_(std::uint64_t{1} << wheelBits),
      // Enough 64-slot levels above level 0 to span 2^kMaxTickBits ticks.
      levels_(std::max(1, (kMaxTickBits - wheelBits + 5) / 6)),
      slots_(wheelSize_ + 64 * static_cast<std::uint64_t>(levels_)),
      level0_(wheelSize_),
      upper_(static_cast<std::size_t>(levels_) + 1, 0) {}

void Wheel::setTickMath(std::int64_t startNs, std::int64_t tickNs) noexcept {
  startNs_ = startNs;
  tickNs_ = tickNs;
}

std::int64_t Wheel::tickOf(std::int64_t deadlineNs) const noexcept {
  const std::int64_t sinceStart = deadlineNs - startNs_;
  if (sinceStart <= 0) return 0;
  // Round up: a timeout may run late by part of a tick, never early.
  return sinceStart / tickNs_ + (sinceStart % tickNs_ != 0 ? 1 : 0);
}

void Wheel::place(std::uint32_t index, bool front) noexcept {
  Entry& e = pool_.at(index);
  const std::int64_t tick = std::max(tickOf(e.deadline), cur_);
  const auto delta = static_cast<std::uint64_t>(tick - cur_);
  if (delta < wheelSize_) {
    link(slotIndex(0, static_cast<std::uint64_t>(tick) & (wheelSize_ - 1)), index, front);
    return;
  }
  const int log2 = 63 - std::countl_zero(delta);
  const int level = std::min(levels_, (log2 - wheelBits_) / 6 + 1);
  const std::uint64_t slot = (static_cast<std::uint64_t>(tick) >> shiftOf(level)) & 63;
  link(slotIndex(level, slot), index, front);
}

void Wheel::link(std::uint32_t slot, std::uint32_t index, bool front) noexcept {
  Slot& s = slots_[slot];
  const bool wasEmpty = s.head == kNil;
  if (front) {
    pool_.prev(index) = kNil;
    pool_.next(index) = s.head;
    if (wasEmpty) s.tail = index; else pool_.prev(s.head) = index;
    s.head = index;
  } else {
    pool_.next(index) = kNil;
    pool_.prev(index) = s.tail;
    if (wasEmpty) s.head = index; else pool_.next(s.tail) = index;
    s.tail = index;
  }
  pool_.at(index).where = slot;
  ++size_;
  if (!wasEmpty) return;
  if (slot < wheelSize_) {
    level0_.set(slot);
  } else {
    const std::uint64_t upperSlot = slot - wheelSize_;
    upper_[upperSlot / 64 + 1] |= std::uint64_t{1} << (upperSlot % 64);
  }
}

void Wheel::remove(std::uint32_t index) noexcept {
  Entry& e = pool_.at(index);
  const std::uint32_t slot = e.where;
  Slot& s = slots_[slot];
  const std::uint32_t next = pool_.next(index);
  const std::uint32_t prev = pool_.prev(index);
  if (prev == kNil) s.head = next; else pool_.next(prev) = next;
  if (next == kNil) s.tail = prev; else pool_.prev(next) = prev;
  e.where = kDetached;
  --size_;
  if (s.head != kNil) return;
  if (slot < wheelSize_) {
    level0_.clear(slot);
  } else {
    const std::uint64_t upperSlot = slot - wheelSize_;
    upper_[upperSlot / 64 + 1] &= ~(std::uint64_t{1} << (upperSlot % 64));
  }
}

std::int64_t Wheel::nextCascadeTick(int level) const noexcept {
  // A level-k slot cascades at the start of its block: the first multiple of 2^shift at or
  // after cur_ whose index (mod 64) is the slot's.
  const int shift = shiftOf(level);
  const std::int64_t unit = std::int64_t{1} << shift;
  const std::int64_t firstBoundary = ((cur_ + unit - 1) >> shift) << shift;
  const auto firstIndex = static_cast<int>((firstBoundary >> shift) & 63);
  const std::uint64_t rotated = std::rotr(upper_[static_cast<std::size_t>(level)], firstIndex);
  return firstBoundary + (static_cast<std::int64_t>(std::countr_zero(rotated)) << shift);
}

std::int64_t Wheel::nextEventTick() const noexcept {
  std::int64_t best = kNoTick;
  if (level0_.any()) {
    const std::uint64_t mask = wheelSize_ - 1;
    const std::uint64_t pos = static_cast<std::uint64_t>(cur_) & mask;
    const std::uint64_t due = level0_.nextCircular(pos);
    best = cur_ + static_cast<std::int64_t>((due - pos) & mask);
  }
  for (int level = 1; level <= levels_; ++level) {
    if (upper_[static_cast<std::size_t>(level)] != 0) best = std::min(best, nextCascadeTick(level));
  }
  return best;
}

void Wheel::cascade(int level, std::uint64_t slotInLevel) noexcept {
  Slot& s = slots_[slotIndex(level, slotInLevel)];
  std::uint32_t index = s.tail;
  s = Slot{};
  upper_[static_cast<std::size_t>(level)] &= ~(std::uint64_t{1} << slotInLevel);
  // Back to front, each put in front: the batch keeps its order ahead of later arrivals.
  while (index != kNil) {
    const std::uint32_t prev = pool_.prev(index);
    --size_;
    place(index, true);
    index = prev;
  }
}

void Wheel::collect(std::int64_t tick, std::vector<std::uint32_t>& due) {
  cur_ = tick;
  const auto t = static_cast<std::uint64_t>(tick);
  for (int level = 1; level <= levels_; ++level) {
    const int shift = shiftOf(level);
    if ((t & ((std::uint64_t{1} << shift) - 1)) != 0) break;  // not a block start of this level
    const std::uint64_t slot = (t >> shift) & 63;
    if (((upper_[static_cast<std::size_t>(level)] >> slot) & 1) != 0) cascade(level, slot);
  }
  const std::uint64_t slot0 = t & (wheelSize_ - 1);
  Slot& s = slots_[slotIndex(0, slot0)];
  // The walk reads only the compact link array; the entries are prefetched for runDue().
  for (std::uint32_t index = s.head; index != kNil; index = pool_.next(index)) {
    pool_.prefetch(index);
    due.push_back(index);
    --size_;
  }
  if (s.head != kNil) level0_.clear(slot0);
  s = Slot{};
  cur_ = tick + 1;
}

void Wheel::removeAll(std::vector<std::uint32_t>& out) {
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) {
    for (std::uint32_t index = slots_[slot].head; index != kNil; index = pool_.next(index)) {
      pool_.prefetch(index);
      out.push_back(index);
    }
    slots_[slot] = Slot{};
  }
  for (int level = 1; level <= levels_; ++level) upper_[static_cast<std::size_t>(level)] = 0;
  level0_ = SlotBitmap(wheelSize_);
  size_ = 0;
}

}  // namespace wheelbeat::core::detail
