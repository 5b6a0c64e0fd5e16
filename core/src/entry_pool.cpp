#include "entry_pool.h"

#include <stdexcept>

namespace wheelbeat::core::detail {
namespace {

// Each thread keeps a private free list for the pool it used last, so allocate() and release()
// touch no shared cache line in the steady state; the pool's mutex is taken once per kBatch.
struct ThreadCache {
  std::shared_ptr<EntryPool> pool;
  EntryPool::List list;

  ThreadCache() = default;
  ThreadCache(const ThreadCache&) = delete;
  ThreadCache& operator=(const ThreadCache&) = delete;
  ~ThreadCache() { flush(); }

  void flush() noexcept {
    if (pool && list.count > 0) pool->giveBatch(list);
    list = {};
    pool.reset();
  }
  void bind(EntryPool& p) {
    if (pool.get() == &p) return;
    flush();
    pool = p.shared_from_this();
  }
};

thread_local ThreadCache tlCache;

}  // namespace

EntryPool::EntryPool() : chunks_(std::make_unique<std::atomic<Entry*>[]>(kMaxChunks)) {}

EntryPool::~EntryPool() {
  for (std::uint32_t c = 0; c < chunkCount_; ++c) delete[] chunks_[c].load();
}

std::uint32_t EntryPool::allocate() {
  ThreadCache& cache = tlCache;
  cache.bind(*this);
  if (cache.list.count == 0) cache.list = takeBatch();
  const std::uint32_t index = cache.list.head;
  cache.list.head = at(index).next;
  --cache.list.count;
  return index;
}

void EntryPool::release(std::uint32_t index) noexcept {
  ThreadCache& cache = tlCache;
  if (cache.pool.get() != this) {
    // A thread that frees into a pool it never allocated from (the wheel thread, usually):
    // bind to it. shared_from_this() cannot fail: pools are always owned by a shared_ptr.
    cache.flush();
    cache.pool = shared_from_this();
  }
  at(index).next = cache.list.head;
  cache.list.head = index;
  if (++cache.list.count < 2 * kBatch) return;
  // Spill one batch so a thread that only frees does not hoard the pool.
  List batch{cache.list.head, kBatch};
  std::uint32_t last = cache.list.head;
  for (std::uint32_t i = 1; i < kBatch; ++i) last = at(last).next;
  cache.list.head = at(last).next;
  cache.list.count -= kBatch;
  at(last).next = kNil;
  giveBatch(batch);
}

// Free batches are chained through their head entries: prev = next batch, where = count.
EntryPool::List EntryPool::takeBatch() {
  std::lock_guard lock(mutex_);
  if (freeBatchHead_ == kNil) return newChunkLocked();
  Entry& head = at(freeBatchHead_);
  List list{freeBatchHead_, head.where};
  freeBatchHead_ = head.prev;
  head.prev = kNil;
  return list;
}

void EntryPool::giveBatch(List list) noexcept {
  if (list.count == 0) return;
  std::lock_guard lock(mutex_);
  Entry& head = at(list.head);
  head.prev = freeBatchHead_;
  head.where = list.count;
  freeBatchHead_ = list.head;
}

EntryPool::List EntryPool::newChunkLocked() {
  if (chunkCount_ == kMaxChunks) {
    throw std::length_error("wheelbeat: timeout capacity exhausted (2^28 timeouts in use)");
  }
  auto* chunk = new Entry[kChunkSize];
  const std::uint32_t base = chunkCount_ << kChunkBits;
  for (std::uint32_t i = 0; i + 1 < kChunkSize; ++i) chunk[i].next = base + i + 1;
  chunks_[chunkCount_].store(chunk, std::memory_order_release);
  ++chunkCount_;
  return List{base, kChunkSize};
}

}  // namespace wheelbeat::core::detail
