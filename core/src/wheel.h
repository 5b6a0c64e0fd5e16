// The wheel proper: a hierarchical timing wheel over absolute tick numbers, owned by the wheel
// thread (no synchronisation inside).
//
// Level 0 has `ticksPerWheel` slots of one tick; each higher level has 64 slots, each as wide as
// the whole level below. A timeout goes to the lowest level whose span covers its distance from
// the current tick; a higher-level slot is cascaded (its entries re-placed lower) when the wheel
// reaches the start of its block. So a due slot holds exactly the timeouts of that tick: unlike
// Netty, nothing that is not due is ever walked, and each entry moves at most once per level.
//
// A slot is a chain of segments holding references (generation << 32 | index), not a linked
// list through the entries: collecting a tick copies references sequentially instead of chasing
// one cache miss per timeout. A cancelled timeout is freed at once and leaves a stale reference
// (its generation no longer matches) that is skipped, or dropped by compact() once stale ones
// outnumber live ones.
//
// FIFO within a tick: references are appended in acceptance order; cascades run bottom-up and put
// the cascaded ones (accepted earlier: they were farther away) in front, in their own order.
#pragma once

#include "entry_pool.h"
#include "slot_bitmap.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace wheelbeat::core::detail {

// (generation << 32) | index: what a slot holds.
using Ref = std::uint64_t;
constexpr Ref makeRef(std::uint32_t index, std::uint32_t gen) {
  return static_cast<Ref>(gen) << 32 | index;
}
constexpr std::uint32_t refIndex(Ref ref) { return static_cast<std::uint32_t>(ref); }
constexpr std::uint32_t refGen(Ref ref) { return static_cast<std::uint32_t>(ref >> 32); }

class Wheel {
public:
  static constexpr std::int64_t kNoTick = std::numeric_limits<std::int64_t>::max();
  // Ticks stay below 2^kMaxTickBits (deadlines saturate before that), which bounds the levels.
  static constexpr int kMaxTickBits = 44;

  // wheelBits = log2(ticksPerWheel).
  Wheel(EntryPool& pool, int wheelBits);

  void setTickMath(std::int64_t startNs, std::int64_t tickNs) noexcept;
  // Tick whose time is the first >= deadlineNs.
  [[nodiscard]] std::int64_t tickOf(std::int64_t deadlineNs) const noexcept;

  // Places a pending entry at its deadline's tick (at least current()).
  void insert(std::uint32_t index, std::uint32_t gen);
  // A placed entry was freed (cancelled): its reference is now stale.
  void noteStale() noexcept { ++stale_; }
  // A stale reference handed out by collect() was dropped by the caller.
  void dropStale() noexcept;
  // Drops stale references once they outnumber live ones (call after noting some).
  void compactIfStale();

  // The next tick to process; every tick before it is done.
  [[nodiscard]] std::int64_t current() const noexcept { return cur_; }
  // The first tick >= current() at which a slot is due or a cascade is needed; kNoTick if empty.
  [[nodiscard]] std::int64_t nextEventTick() const noexcept;
  // Moves current() forward to `tick`; no event may lie before it.
  void skipTo(std::int64_t tick) noexcept {
    if (tick > cur_) cur_ = tick;
  }
  // Processes `tick` (== nextEventTick()): cascades, then appends the references of the tick to
  // `due` in FIFO order (stale ones included: the caller checks generations) and moves current()
  // past it.
  void collect(std::int64_t tick, std::vector<Ref>& due);
  // Empties the wheel (for stop()), appending every live reference to `out`.
  void removeAll(std::vector<Ref>& out);

private:
  static constexpr std::uint32_t kSegRefs = 31;  // 256-byte segments
  struct Segment {
    Ref refs[kSegRefs];
    std::uint32_t count;
    std::uint32_t next;
  };
  struct Chain {
    std::uint32_t head = kNil;
    std::uint32_t tail = kNil;
  };

  [[nodiscard]] bool isLive(Ref ref) const noexcept;
  [[nodiscard]] std::uint32_t slotFor(std::int64_t tick) const noexcept;
  void place(Ref ref, std::vector<Chain>& into);
  void append(Chain& chain, Ref ref);
  void attach(std::uint32_t slot, Chain front);  // puts `front` before the slot's chain
  Chain detach(std::uint32_t slot) noexcept;
  void cascade(int level, std::uint64_t slotInLevel);
  [[nodiscard]] std::int64_t nextCascadeTick(int level) const noexcept;
  [[nodiscard]] int shiftOf(int level) const noexcept {
    return level == 0 ? 0 : wheelBits_ + 6 * (level - 1);
  }
  [[nodiscard]] std::uint32_t slotIndex(int level, std::uint64_t slotInLevel) const noexcept {
    return level == 0 ? static_cast<std::uint32_t>(slotInLevel)
                      : static_cast<std::uint32_t>(
                            wheelSize_ + 64 * static_cast<std::uint64_t>(level - 1) + slotInLevel);
  }
  void markNonEmpty(std::uint32_t slot) noexcept;
  void markEmpty(std::uint32_t slot) noexcept;

  // Segment storage: blocks never move, so references to segments stay valid while it grows.
  [[nodiscard]] Segment& seg(std::uint32_t i) const noexcept { return blocks_[i >> 10][i & 1023]; }
  std::uint32_t newSegment();
  void freeChain(Chain chain) noexcept;

  EntryPool& pool_;
  int wheelBits_;
  std::uint64_t wheelSize_;
  int levels_;  // higher levels, each of 64 slots
  std::vector<Chain> slots_;
  std::vector<Chain> front_;            // cascade scratch: what goes in front of each slot
  std::vector<std::uint32_t> touched_;  // slots with a non-empty front_
  SlotBitmap level0_;
  std::vector<std::uint64_t> upper_;  // occupancy of the higher levels, one word per level
  std::vector<std::unique_ptr<Segment[]>> blocks_;
  std::uint32_t freeSeg_ = kNil;
  std::uint32_t segCount_ = 0;
  std::int64_t cur_ = 0;
  std::size_t size_ = 0;  // references held, live and stale
  std::size_t stale_ = 0;
  std::int64_t startNs_ = 0;
  std::int64_t tickNs_ = 1;
};

}  // namespace wheelbeat::core::detail
