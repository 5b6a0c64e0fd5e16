// Storage for timeouts: fixed 56-byte entries in chunks that live as long as the pool, addressed
// by 32-bit index, recycled through per-thread caches so that newTimeout() neither locks nor
// allocates once warm.
#pragma once

#include <wheelbeat/core/timer_task.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace wheelbeat::core::detail {

inline constexpr std::uint32_t kNil = 0xFFFFFFFFu;

// Entry::state = generation << 2 | one of these. The generation changes when an entry is freed,
// so a Timeout handle (index, generation) never reaches a later timeout in the same slot.
enum : std::uint32_t { kPending = 0, kExpired = 1, kCancelled = 2, kFree = 3 };
inline constexpr std::uint32_t kGenMask = (1u << 30) - 1;
constexpr std::uint32_t stateWord(std::uint32_t gen, std::uint32_t st) {
  return (gen & kGenMask) << 2 | st;
}
constexpr std::uint32_t genOf(std::uint32_t word) { return word >> 2; }
constexpr std::uint32_t stOf(std::uint32_t word) { return word & 3u; }

// Entry::where, wheel thread only (a free entry's `where` counts its free batch).
inline constexpr std::uint32_t kInSubmit = 0xFFFFFFFFu;            // in the submission stack
inline constexpr std::uint32_t kInSubmitCancelSeen = 0xFFFFFFFEu;  // ... and its cancel was seen
inline constexpr std::uint32_t kDetached = 0xFFFFFFFDu;            // in no list (due, or dropped)
inline constexpr std::uint32_t kInWheel = 0xFFFFFFFCu;             // referenced by a wheel slot

struct Entry {
  TimerTask task;             // 24 B; empty once released
  std::int64_t deadline = 0;  // ns on the timer's clock: schedule time + delay
  std::atomic<std::uint32_t> state{stateWord(0, kFree)};
  std::atomic<std::uint32_t> history{0};  // bit (gen % 32) set = that generation was cancelled
  std::uint32_t clink = kNil;             // cancel stack; free list while the entry is free
  std::uint32_t where = kInSubmit;
};
static_assert(sizeof(Entry) == 48, "an entry is 48 bytes (+4 of link, +8 in its wheel slot)");

// The `next` links of the submission stack live apart from the entries, in a compact array:
// reversing the submission stack touches 4-byte links that mostly sit in cache.
struct ChunkRef {
  Entry* entries = nullptr;        // kChunkSize entries
  std::uint32_t* links = nullptr;  // next[kChunkSize]
};

class EntryPool : public std::enable_shared_from_this<EntryPool> {
public:
  static constexpr std::uint32_t kChunkBits = 15;  // 32768 timeouts per chunk
  static constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr std::uint32_t kMaxChunks = 1u << 13;  // 2^28 timeouts at most
  static constexpr std::uint32_t kBatch = 256;           // entries moved per cache refill/spill

  EntryPool();
  ~EntryPool();
  EntryPool(const EntryPool&) = delete;
  EntryPool& operator=(const EntryPool&) = delete;

  [[nodiscard]] Entry& at(std::uint32_t index) const noexcept {
    return chunks_[index >> kChunkBits].entries[index & (kChunkSize - 1)];
  }
  [[nodiscard]] std::uint32_t& next(std::uint32_t index) const noexcept {
    return chunks_[index >> kChunkBits].links[index & (kChunkSize - 1)];
  }
  void prefetch(std::uint32_t index) const noexcept { __builtin_prefetch(&at(index), 1); }

  // A free entry (state kFree, task empty). Any thread. Throws std::length_error when 2^28
  // entries are in use, std::bad_alloc when memory is exhausted.
  std::uint32_t allocate();
  // Returns a free entry (state already kFree with a new generation). Any thread.
  void release(std::uint32_t index) noexcept;

  // Calls f(Entry&) for every entry ever handed out. Only when no other thread uses the pool.
  template <typename F>
  void forEachEntry(F&& f) {
    std::lock_guard lock(mutex_);
    for (std::uint32_t i = 0; i < constructed_; ++i) f(at(i));
  }

  struct List {
    std::uint32_t head = kNil;
    std::uint32_t count = 0;
  };
  // Used by the per-thread caches.
  List takeBatch();
  void giveBatch(List list) noexcept;

private:
  // A free entry's link lives in the entry: the thread that frees or takes an entry touches its
  // line anyway, where a link in next() would cost a second cache miss.
  [[nodiscard]] std::uint32_t& freeLink(std::uint32_t index) const noexcept {
    return at(index).clink;
  }
  List freshBatchLocked();
  void addChunkLocked();

  // Readers index it without a lock: an index reaches another thread only through a
  // synchronising hand-over, after its chunk was published under mutex_.
  std::unique_ptr<ChunkRef[]> chunks_;
  std::mutex mutex_;
  std::uint32_t chunkCount_ = 0;        // guarded by mutex_
  std::uint32_t constructed_ = 0;       // entries [0, constructed_) exist; guarded by mutex_
  std::uint32_t freeBatchHead_ = kNil;  // guarded by mutex_
  std::vector<std::pair<void*, std::size_t>> arenas_;  // guarded by mutex_
  std::byte* entryArena_ = nullptr;                    // current arenas being carved into chunks
  std::size_t entryArenaLeft_ = 0;
  std::byte* linkArena_ = nullptr;
  std::size_t linkArenaLeft_ = 0;
};

}  // namespace wheelbeat::core::detail
