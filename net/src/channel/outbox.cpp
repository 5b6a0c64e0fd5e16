#include "outbox.h"

#include <new>

namespace wheelbeat::net::detail {

std::shared_ptr<void> Outbox::cancelPost() noexcept {
  std::lock_guard lock(mutex_);
  flushPosted_ = false;
  return std::move(flushHold_);
}

void Outbox::written(std::size_t bytes, bool ok, std::int64_t now) noexcept {
  countOut(bytes);
  if (ok) stampWrite(now);
}

void Outbox::dropAll() noexcept {
  std::size_t dropped = 0;
  {
    std::lock_guard lock(mutex_);
    dropped = data_.size() + (hasAside_ ? kHeartbeatFrameSize : 0);
    std::string().swap(data_);
    heartbeatQueued_ = false;
    hasAside_ = false;
  }
  countOut(dropped);
}

// This channel's frames queued in its read callback (null if none), to be written now.
std::string* Outbox::take(ReadOutbox* read) noexcept {
  if (read == nullptr) return nullptr;
  read->owner = nullptr;
  return read->data.empty() ? nullptr : &read->data;
}

// The connection is closing: `bytes` taken from the outbox and the read's frames, if any, are
// dropped and counted out.
void Outbox::dropTaken(std::size_t bytes, std::string* fromRead) noexcept {
  if (fromRead != nullptr) {
    bytes += fromRead->size();
    clearRead(*fromRead);
  }
  countOut(bytes);
}

void Outbox::appendRead(std::string& data, std::string& frames) noexcept {
  try {
    data.append(frames);
  } catch (const std::bad_alloc&) {  // the read's frames are lost, the others still go
    countOut(frames.size());
  }
  clearRead(frames);
}

// Frames queued after the heartbeat was held aside go first; a heartbeat's place among them
// does not matter to the peer.
void Outbox::appendAside(std::string& data, std::uint64_t id) noexcept {
  try {
    encodeHeartbeatRequest(data, id);
  } catch (const std::bad_alloc&) {  // the heartbeat is lost, the frames still go
    countOut(kHeartbeatFrameSize);
  }
}

// A batch of at least kKeepFrom bytes means a busy channel: its buffer, emptied, becomes the
// outbox again (if nothing was queued meanwhile), so a pipelining channel allocates nothing per
// batch. A smaller batch frees it: a channel carrying only heartbeats holds no buffer between
// them, and one that was busy and went quiet frees its buffer at its next small batch.
void Outbox::reuseBuffer(std::string&& data) noexcept {
  constexpr std::size_t kKeepFrom = 256;
  constexpr std::size_t kKeepUpTo = std::size_t{64} << 10;
  if (data.size() < kKeepFrom || data.capacity() > kKeepUpTo) return;  // freed with `data`
  data.clear();
  std::lock_guard lock(mutex_);
  if (data_.empty()) data_.swap(data);
}

}  // namespace wheelbeat::net::detail
