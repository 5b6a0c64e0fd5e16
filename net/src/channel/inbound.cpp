#include "inbound.h"

#include <fmt/format.h>
#include <uv.h>

#include <memory>
#include <new>

namespace wheelbeat::net::detail {

RequestTracker& RequestTrackerStage::getOrCreate(EventLoop& loop, core::HashedWheelTimer& timer) {
  if (RequestTracker* t = get()) return *t;
  auto fresh = std::make_unique<RequestTracker>(loop, timer);
  RequestTracker* expected = nullptr;
  if (tracker_.compare_exchange_strong(expected, fresh.get(), std::memory_order_acq_rel)) {
    return *fresh.release();
  }
  return *expected;  // another thread's first request() won: ours is dropped
}

std::size_t RequestTrackerStage::pending() const noexcept {
  const RequestTracker* t = get();
  try {
    return t != nullptr ? t->pending() : 0;
  } catch (...) {  // a lock failure: report nothing pending rather than throw
    return 0;
  }
}

bool HandlerStage::answeredOne() noexcept {
  std::int64_t n = unanswered_.load(std::memory_order_acquire);
  while (n > 0) {
    if (unanswered_.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) return true;
  }
  return false;
}

CloseReason Inbound::decodeFailure(const FrameDecoder& decoder) noexcept {
  const DecodeError error =
      decoder.error() == DecodeError::None ? DecodeError::OutOfMemory : decoder.error();
  CloseReason why{isResourceError(error) ? CloseKind::Resource : CloseKind::Protocol, {}, {}};
  try {
    // The decoder's reason says what happened ("bad magic 0x4745 (expected: 0xdabb)"): the
    // decode error's name would say it twice.
    if (!decoder.reason().empty()) {
      why.text = decoder.reason();
    } else {
      why.text = isResourceError(error) ? std::string("out of memory on the read path")
                                        : std::string(decodeErrorName(error));
    }
  } catch (const std::bad_alloc&) {
    why.text.clear();
  }
  return why;
}

CloseReason Inbound::readFailure(NetError error, FrameDecoder& decoder,
                                 ChannelMetrics& metrics) noexcept {
  if (error.code() != UV_EOF) return reasonFromError(error, false, "read");
  if (decoder.finish() != DecodeError::TruncatedAtEof) {
    return CloseReason{CloseKind::Eof, error, "the peer closed the connection"};
  }
  metrics.countDecodeError(DecodeError::TruncatedAtEof);
  try {  // "stream ended after 5 bytes of a 16-byte header"
    return CloseReason{CloseKind::Protocol, error, decoder.reason()};
  } catch (const std::bad_alloc&) {
    return CloseReason{CloseKind::Protocol, error, {}};
  }
}

}  // namespace wheelbeat::net::detail
