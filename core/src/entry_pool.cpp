#include "entry_pool.h"

#include <sys/mman.h>

#include <new>
#include <stdexcept>

namespace wheelbeat::core::detail {
namespace {

// Each thread keeps a private free list for the pool it used last, so allocate() and release()
// touch no shared cache line in the steady state; the pool's mutex is taken once per kBatch.
//
// The hot state is a trivially destructible thread_local (no TLS guard on access, and still
// readable after the thread's destructors ran); a separate owner object holds the pool alive and
// flushes the list when the thread ends. A timer destroyed after that (a static timer at exit)
// finds the cache closed and takes the pool's mutex instead.
struct CacheState {
  EntryPool* pool = nullptr;
  EntryPool::List list;
  bool closed = false;
};
thread_local constinit CacheState tlState;

struct CacheOwner {
  std::shared_ptr<EntryPool> pool;
  CacheOwner() = default;
  CacheOwner(const CacheOwner&) = delete;
  CacheOwner& operator=(const CacheOwner&) = delete;
  ~CacheOwner() {
    flush();
    tlState.closed = true;
  }
  void flush() noexcept {
    if (pool && tlState.list.count > 0) pool->giveBatch(tlState.list);
    tlState.list = {};
    tlState.pool = nullptr;
    pool.reset();
  }
};
thread_local CacheOwner tlOwner;

// Makes `pool` this thread's cached pool; false once the thread's cache is closed.
bool bindCache(EntryPool& pool) {
  if (tlState.pool == &pool) return true;
  if (tlState.closed) return false;
  tlOwner.flush();
  tlOwner.pool = pool.shared_from_this();  // cannot fail: pools are owned by a shared_ptr
  tlState.pool = &pool;
  return true;
}

// Chunks are carved from 2 MiB-aligned arenas: 4 chunks of entries fill 6 MiB (3 huge pages),
// 16 chunks of links fill 2 MiB, so huge pages hold nothing but timeouts.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kEntryBytes = sizeof(Entry) * EntryPool::kChunkSize;
constexpr std::size_t kLinkBytes = sizeof(std::uint32_t) * EntryPool::kChunkSize;
constexpr std::size_t kEntryArenaBytes = 4 * kEntryBytes;
constexpr std::size_t kLinkArenaBytes = 16 * kLinkBytes;
static_assert(kEntryArenaBytes % kHugePage == 0 && kLinkArenaBytes % kHugePage == 0);
// The first arenas use normal pages (a small timer costs only the pages it touches); a pool
// that outgrows them asks for transparent huge pages: one fault per 2 MiB instead of 512.
constexpr std::uint32_t kSmallChunks = 4;

// Arenas of destroyed pools are kept (up to kArenaCacheBytes) for the next pool: a process that
// recreates timers — or a benchmark — reuses memory the kernel has already faulted in and
// zeroed, instead of paying a page fault and a page clear per 64 timeouts.
constexpr std::size_t kArenaCacheBytes = std::size_t{256} << 20;

struct ArenaCache {
  std::mutex mutex;
  std::vector<std::pair<void*, std::size_t>> arenas;
  std::size_t bytes = 0;
};
ArenaCache& arenaCache() {
  static auto* cache = new ArenaCache;  // never destroyed: pools may die during static teardown
  return *cache;
}

void* takeCachedArena(std::size_t bytes) {
  ArenaCache& cache = arenaCache();
  std::lock_guard lock(cache.mutex);
  for (auto it = cache.arenas.begin(); it != cache.arenas.end(); ++it) {
    if (it->second != bytes) continue;
    void* arena = it->first;
    cache.arenas.erase(it);
    cache.bytes -= bytes;
    return arena;
  }
  return nullptr;
}

void releaseArena(void* arena, std::size_t bytes) noexcept {
  ArenaCache& cache = arenaCache();
  {
    std::lock_guard lock(cache.mutex);
    if (cache.bytes + bytes <= kArenaCacheBytes) {
      try {
        cache.arenas.emplace_back(arena, bytes);
        cache.bytes += bytes;
        return;
      } catch (...) {
        // No room to remember it: give it back to the kernel below.
      }
    }
  }
  ::munmap(arena, bytes);
}

void* mapArena(std::size_t bytes, bool huge) {
  if (void* cached = takeCachedArena(bytes)) return cached;
  const std::size_t span = bytes + kHugePage;
  void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  // Pointer arithmetic on the mapping itself (no integer-to-pointer casts): trim the head up
  // to the first huge-page boundary and the tail beyond `bytes`.
  char* const start = static_cast<char*>(raw);
  const std::size_t misalign = reinterpret_cast<std::uintptr_t>(raw) % kHugePage;
  const std::size_t head = misalign == 0 ? 0 : kHugePage - misalign;
  char* const aligned = start + head;
  if (head > 0) ::munmap(start, head);
  if (span > head + bytes) ::munmap(aligned + bytes, span - head - bytes);
  if (huge) ::madvise(aligned, bytes, MADV_HUGEPAGE);
  return aligned;
}

}  // namespace

EntryPool::EntryPool() : chunks_(std::make_unique<ChunkRef[]>(kMaxChunks)) {}

EntryPool::~EntryPool() {
  for (std::uint32_t i = 0; i < constructed_; ++i) at(i).~Entry();
  for (const auto& [base, bytes] : arenas_) releaseArena(base, bytes);
}

std::uint32_t EntryPool::allocate() {
  if (!bindCache(*this)) {  // thread ending: one entry at a time under the mutex
    List batch = takeBatch();
    const std::uint32_t index = batch.head;
    batch.head = freeLink(index);
    --batch.count;
    giveBatch(batch);
    return index;
  }
  EntryPool::List& list = tlState.list;
  if (list.count == 0) list = takeBatch();
  const std::uint32_t index = list.head;
  list.head = freeLink(index);
  --list.count;
  return index;
}

void EntryPool::release(std::uint32_t index) noexcept {
  if (!bindCache(*this)) {
    freeLink(index) = kNil;
    giveBatch(List{index, 1});
    return;
  }
  EntryPool::List& list = tlState.list;
  freeLink(index) = list.head;
  list.head = index;
  if (++list.count < 2 * kBatch) return;
  // Spill one batch so a thread that only frees does not hoard the pool.
  List batch{list.head, kBatch};
  std::uint32_t last = list.head;
  for (std::uint32_t i = 1; i < kBatch; ++i) last = freeLink(last);
  list.head = freeLink(last);
  list.count -= kBatch;
  freeLink(last) = kNil;
  giveBatch(batch);
}

// Free batches are chained through their heads: next() = next batch, where = count (both unused
// while an entry is free; batches move rarely, so their link may miss the cache).
EntryPool::List EntryPool::takeBatch() {
  std::lock_guard lock(mutex_);
  if (freeBatchHead_ == kNil) return freshBatchLocked();
  const List list{freeBatchHead_, at(freeBatchHead_).where};
  freeBatchHead_ = std::exchange(next(list.head), kNil);
  return list;
}

void EntryPool::giveBatch(List list) noexcept {
  if (list.count == 0) return;
  std::lock_guard lock(mutex_);
  next(list.head) = freeBatchHead_;
  at(list.head).where = list.count;
  freeBatchHead_ = list.head;
}

// Entries are constructed a batch at a time, by the thread that will use them: memory is
// touched (and faulted in) only as the pool really grows.
EntryPool::List EntryPool::freshBatchLocked() {
  if (constructed_ == chunkCount_ * kChunkSize) addChunkLocked();
  const std::uint32_t first = constructed_;
  for (std::uint32_t i = first; i < first + kBatch; ++i) {
    ::new (static_cast<void*>(&at(i))) Entry();
    freeLink(i) = i + 1 < first + kBatch ? i + 1 : kNil;
  }
  constructed_ += kBatch;
  return List{first, kBatch};
}

void EntryPool::addChunkLocked() {
  if (chunkCount_ == kMaxChunks) {
    throw std::length_error("wheelbeat: timeout capacity exhausted (2^28 timeouts in use)");
  }
  const bool huge = chunkCount_ >= kSmallChunks;
  if (entryArenaLeft_ == 0) {
    entryArena_ = static_cast<std::byte*>(mapArena(kEntryArenaBytes, huge));
    arenas_.emplace_back(entryArena_, kEntryArenaBytes);
    entryArenaLeft_ = kEntryArenaBytes;
  }
  if (linkArenaLeft_ == 0) {
    linkArena_ = static_cast<std::byte*>(mapArena(kLinkArenaBytes, huge));
    arenas_.emplace_back(linkArena_, kLinkArenaBytes);
    linkArenaLeft_ = kLinkArenaBytes;
  }
  ChunkRef& chunk = chunks_[chunkCount_];
  chunk.entries = reinterpret_cast<Entry*>(entryArena_ + (kEntryArenaBytes - entryArenaLeft_));
  chunk.links = reinterpret_cast<std::uint32_t*>(linkArena_ + (kLinkArenaBytes - linkArenaLeft_));
  entryArenaLeft_ -= kEntryBytes;
  linkArenaLeft_ -= kLinkBytes;
  ++chunkCount_;
}

}  // namespace wheelbeat::core::detail
