// A bitmap over the slots of one wheel level with summary words, so "next non-empty slot" costs
// O(levels) word scans instead of a walk over empty slots (512 slots: one summary word).
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace wheelbeat::core::detail {

class SlotBitmap {
public:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};

  explicit SlotBitmap(std::uint64_t bits) {
    std::uint64_t words = (bits + 63) / 64;
    for (;;) {
      levels_.emplace_back(words, 0);
      if (words <= 1) break;
      words = (words + 63) / 64;
    }
  }

  void set(std::uint64_t i) noexcept {
    for (auto& words : levels_) {
      const bool wasEmpty = words[i >> 6] == 0;
      words[i >> 6] |= std::uint64_t{1} << (i & 63);
      if (!wasEmpty) return;
      i >>= 6;
    }
  }

  void clear(std::uint64_t i) noexcept {
    for (auto& words : levels_) {
      words[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
      if (words[i >> 6] != 0) return;
      i >>= 6;
    }
  }

  [[nodiscard]] bool any() const noexcept { return levels_.back()[0] != 0; }

  // First set bit at or after `from`, wrapping around; kNone when the bitmap is empty.
  [[nodiscard]] std::uint64_t nextCircular(std::uint64_t from) const noexcept {
    const std::uint64_t found = findFrom(0, from);
    return found != kNone ? found : findFrom(0, 0);
  }

private:
  [[nodiscard]] std::uint64_t findFrom(std::size_t level, std::uint64_t bit) const noexcept {
    const auto& words = levels_[level];
    const std::uint64_t w = bit >> 6;
    if (w >= words.size()) return kNone;
    const std::uint64_t masked = words[w] & (~std::uint64_t{0} << (bit & 63));
    if (masked != 0) return (w << 6) | static_cast<std::uint64_t>(std::countr_zero(masked));
    if (level + 1 == levels_.size()) return kNone;  // the top level is a single word
    const std::uint64_t next = findFrom(level + 1, w + 1);
    if (next == kNone) return kNone;
    return (next << 6) | static_cast<std::uint64_t>(std::countr_zero(words[next]));
  }

  std::vector<std::vector<std::uint64_t>> levels_;  // [0] = one bit per slot
};

}  // namespace wheelbeat::core::detail
