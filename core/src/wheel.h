// The wheel proper: a hierarchical timing wheel over absolute tick numbers, owned by the wheel
// thread (no synchronisation inside).
//
// Level 0 has `ticksPerWheel` slots of one tick; each higher level has 64 slots, each as wide as
// the whole level below. A timeout goes to the lowest level whose span covers its distance from
// the current tick; a higher-level slot is cascaded (its entries re-placed lower) when the wheel
// reaches the start of its block. So a due slot holds exactly the timeouts of that tick: unlike
// Netty, nothing that is not due is ever walked, and each entry moves at most once per level.
//
// FIFO within a tick: entries are appended in acceptance order; cascades run bottom-up and put
// the cascaded entries (accepted earlier: they were farther away) in front, in their own order.
#pragma once

#include "entry_pool.h"
#include "slot_bitmap.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace wheelbeat::core::detail {

class Wheel {
public:
  static constexpr std::int64_t kNoTick = std::numeric_limits<std::int64_t>::max();
  // Ticks stay below 2^kMaxTickBits (deadlines saturate before that), which bounds the levels.
  static constexpr int kMaxTickBits = 44;

  // wheelBits = log2(ticksPerWheel). `tickOf` maps an entry's deadline to its tick.
  Wheel(EntryPool& pool, int wheelBits);

  void setTickMath(std::int64_t startNs, std::int64_t tickNs) noexcept;
  // Tick whose time is the first >= deadlineNs.
  [[nodiscard]] std::int64_t tickOf(std::int64_t deadlineNs) const noexcept;

  // Places an entry (where == not in a slot) at its deadline's tick, at least current().
  void insert(std::uint32_t index) noexcept { place(index, false); }
  // Unlinks an entry from its slot; where becomes kDetached.
  void remove(std::uint32_t index) noexcept;

  // The next tick to process; every tick before it is done.
  [[nodiscard]] std::int64_t current() const noexcept { return cur_; }
  // The first tick >= current() at which a slot is due or a cascade is needed; kNoTick if empty.
  [[nodiscard]] std::int64_t nextEventTick() const noexcept;
  // Moves current() forward to `tick`; no event may lie before it.
  void skipTo(std::int64_t tick) noexcept {
    if (tick > cur_) cur_ = tick;
  }
  // Processes `tick` (== nextEventTick()): cascades, then appends the tick's entries to `due`
  // in FIFO order (where = kDetached) and moves current() past it.
  void collect(std::int64_t tick, std::vector<std::uint32_t>& due);
  // Empties the wheel (for stop()), appending every entry to `out`; their `where` is stale.
  void removeAll(std::vector<std::uint32_t>& out);
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
  struct Slot {
    std::uint32_t head = kNil;
    std::uint32_t tail = kNil;
  };

  void place(std::uint32_t index, bool front) noexcept;
  void link(std::uint32_t slot, std::uint32_t index, bool front) noexcept;
  void cascade(int level, std::uint64_t slotInLevel) noexcept;
  [[nodiscard]] std::int64_t nextCascadeTick(int level) const noexcept;
  [[nodiscard]] int shiftOf(int level) const noexcept { return level == 0 ? 0 : wheelBits_ + 6 * (level - 1); }
  [[nodiscard]] std::uint32_t slotIndex(int level, std::uint64_t slotInLevel) const noexcept {
    return level == 0 ? static_cast<std::uint32_t>(slotInLevel)
                      : static_cast<std::uint32_t>(wheelSize_ + 64 * static_cast<std::uint64_t>(level - 1) + slotInLevel);
  }

  EntryPool& pool_;
  int wheelBits_;
  std::uint64_t wheelSize_;
  int levels_;  // higher levels, each of 64 slots
  std::vector<Slot> slots_;
  SlotBitmap level0_;
  std::vector<std::uint64_t> upper_;  // occupancy of the higher levels, one word per level
  std::int64_t cur_ = 0;
  std::size_t size_ = 0;
  std::int64_t startNs_ = 0;
  std::int64_t tickNs_ = 1;
};

}  // namespace wheelbeat::core::detail
