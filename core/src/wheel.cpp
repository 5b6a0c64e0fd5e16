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
      front_(slots_.size()),
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

bool Wheel::isLive(Ref ref) const noexcept {
  return genOf(pool_.at(refIndex(ref)).state.load(std::memory_order_relaxed)) == refGen(ref);
}

std::uint32_t Wheel::slotFor(std::int64_t tick) const noexcept {
  tick = std::max(tick, cur_);
  const auto delta = static_cast<std::uint64_t>(tick - cur_);
  if (delta < wheelSize_) return slotIndex(0, static_cast<std::uint64_t>(tick) & (wheelSize_ - 1));
  const int log2 = 63 - std::countl_zero(delta);
  const int level = std::min(levels_, (log2 - wheelBits_) / 6 + 1);
  return slotIndex(level, (static_cast<std::uint64_t>(tick) >> shiftOf(level)) & 63);
}

void Wheel::insert(std::uint32_t index, std::uint32_t gen) {
  const std::uint32_t slot = slotFor(tickOf(pool_.at(index).deadline));
  append(slots_[slot], makeRef(index, gen));
  markNonEmpty(slot);
  ++size_;
}

void Wheel::append(Chain& chain, Ref ref) {
  if (chain.tail == kNil || seg(chain.tail).count == kSegRefs) {
    const std::uint32_t s = newSegment();
    if (chain.tail == kNil)
      chain.head = s;
    else
      seg(chain.tail).next = s;
    chain.tail = s;
  }
  Segment& tail = seg(chain.tail);
  tail.refs[tail.count++] = ref;
}

void Wheel::attach(std::uint32_t slot, Chain front) {
  Chain& chain = slots_[slot];
  if (chain.head == kNil) {
    chain = front;
  } else {
    seg(front.tail).next = chain.head;
    chain.head = front.head;
  }
  markNonEmpty(slot);
}

Wheel::Chain Wheel::detach(std::uint32_t slot) noexcept {
  const Chain chain = slots_[slot];
  slots_[slot] = Chain{};
  markEmpty(slot);
  return chain;
}

void Wheel::markNonEmpty(std::uint32_t slot) noexcept {
  if (slot < wheelSize_) {
    level0_.set(slot);
  } else {
    const std::uint64_t upperSlot = slot - wheelSize_;
    upper_[upperSlot / 64 + 1] |= std::uint64_t{1} << (upperSlot % 64);
  }
}

void Wheel::markEmpty(std::uint32_t slot) noexcept {
  if (slot < wheelSize_) {
    level0_.clear(slot);
  } else {
    const std::uint64_t upperSlot = slot - wheelSize_;
    upper_[upperSlot / 64 + 1] &= ~(std::uint64_t{1} << (upperSlot % 64));
  }
}

std::uint32_t Wheel::newSegment() {
  std::uint32_t s = freeSeg_;
  if (s != kNil) {
    freeSeg_ = seg(s).next;
  } else {
    if ((segCount_ >> 10) == blocks_.size()) blocks_.push_back(std::make_unique<Segment[]>(1024));
    s = segCount_++;
  }
  seg(s).count = 0;
  seg(s).next = kNil;
  return s;
}

void Wheel::freeChain(Chain chain) noexcept {
  if (chain.head == kNil) return;
  seg(chain.tail).next = freeSeg_;
  freeSeg_ = chain.head;
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

void Wheel::cascade(int level, std::uint64_t slotInLevel) {
  const Chain source = detach(slotIndex(level, slotInLevel));
  for (std::uint32_t s = source.head; s != kNil; s = seg(s).next) {
    const Segment& segment = seg(s);
    for (std::uint32_t i = 0; i < segment.count; ++i) {
      const Ref ref = segment.refs[i];
      if (!isLive(ref)) {  // cancelled meanwhile: drop the stale reference here
        --size_;
        dropStale();
        continue;
      }
      const std::uint32_t slot = slotFor(tickOf(pool_.at(refIndex(ref)).deadline));
      if (front_[slot].head == kNil) touched_.push_back(slot);
      append(front_[slot], ref);
    }
  }
  freeChain(source);
  // Each batch goes in front of what its slot holds: those were accepted later.
  for (const std::uint32_t slot : touched_) {
    attach(slot, front_[slot]);
    front_[slot] = Chain{};
  }
  touched_.clear();
}

void Wheel::collect(std::int64_t tick, std::vector<Ref>& due) {
  cur_ = tick;
  const auto t = static_cast<std::uint64_t>(tick);
  for (int level = 1; level <= levels_; ++level) {
    const int shift = shiftOf(level);
    if ((t & ((std::uint64_t{1} << shift) - 1)) != 0) break;  // not a block start of this level
    const std::uint64_t slot = (t >> shift) & 63;
    if (((upper_[static_cast<std::size_t>(level)] >> slot) & 1) != 0) cascade(level, slot);
  }
  const auto slot0 = static_cast<std::uint32_t>(t & (wheelSize_ - 1));
  if (slots_[slot0].head != kNil) {
    const Chain chain = detach(slot0);
    for (std::uint32_t s = chain.head; s != kNil; s = seg(s).next) {
      const Segment& segment = seg(s);
      due.insert(due.end(), segment.refs, segment.refs + segment.count);
      size_ -= segment.count;
    }
    freeChain(chain);
  }
  cur_ = tick + 1;
}

void Wheel::dropStale() noexcept {
  if (stale_ > 0) --stale_;  // compaction may already have recounted it
}

void Wheel::compactIfStale() {
  // Amortised O(1) per cancel: a full pass only once stale references outnumber live ones.
  if (stale_ < 4096 || stale_ * 2 < size_) return;
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (slots_[slot].head == kNil) continue;
    const Chain old = detach(slot);
    Chain kept;
    for (std::uint32_t s = old.head; s != kNil; s = seg(s).next) {
      const Segment& segment = seg(s);
      for (std::uint32_t i = 0; i < segment.count; ++i) {
        if (isLive(segment.refs[i]))
          append(kept, segment.refs[i]);
        else
          --size_;
      }
    }
    freeChain(old);
    if (kept.head != kNil) attach(slot, kept);
  }
  stale_ = 0;
}

void Wheel::removeAll(std::vector<Ref>& out) {
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (slots_[slot].head == kNil) continue;
    const Chain chain = detach(slot);
    for (std::uint32_t s = chain.head; s != kNil; s = seg(s).next) {
      const Segment& segment = seg(s);
      for (std::uint32_t i = 0; i < segment.count; ++i) {
        if (isLive(segment.refs[i])) out.push_back(segment.refs[i]);
      }
    }
    freeChain(chain);
  }
  size_ = 0;
  stale_ = 0;
}

}  // namespace wheelbeat::core::detail
