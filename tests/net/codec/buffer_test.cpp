// The decoder's buffer: a split frame's buffer grows with the bytes received (doubling, never
// beyond the announced frame, never to what a header merely announces), holds at most one
// header + one body, and a capacity above 16 KiB is given back once its frame is delivered; small
// capacities are kept for the next split frame. The PartialFrameBudget: capacity above 16 KiB is
// charged, a growth beyond the limit ends the stream (BudgetExceeded) and changes nothing else,
// charges come back on delivery, on errors and when a decoder is destroyed.
#include "support.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace codectest;

namespace {
constexpr std::size_t kFree = PartialFrameBudget::kFreePartialBytes;
}  // namespace

TEST_SUITE("codec") {

TEST_CASE("a split 1 MiB frame grows with the bytes received and is released after delivery") {
  const std::size_t body = std::size_t{1} << 20;
  const std::string wire = encode({flag::kRequest | kHessian2, 0, 3, pattern(body)});
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(wire.substr(0, 26), sink) == DecodeError::None);
  CHECK(decoder.buffered() == 26);
  CHECK(decoder.bufferCapacity() == 64);  // the smallest growth step, not the announced 1 MiB
  std::set<std::size_t> capacities{decoder.bufferCapacity()};
  for (std::size_t at = 26; at < wire.size(); at += 4096) {
    REQUIRE(decoder.feed(wire.substr(at, 4096), sink) == DecodeError::None);
    if (decoder.buffered() == 0) break;
    capacities.insert(decoder.bufferCapacity());
    REQUIRE(decoder.bufferCapacity() >= decoder.buffered());
    REQUIRE(decoder.bufferCapacity() <= std::max<std::size_t>(2 * decoder.buffered(), 64));
    REQUIRE(decoder.bufferCapacity() <= wire.size());
  }
  // 64, 4122 (the first 4096-byte piece), then doubling: 8244 ... 527616, and the frame's 1048592.
  CHECK(capacities.size() == 10);
  CHECK(*capacities.rbegin() == wire.size());
  REQUIRE(sink.frames.size() == 1);
  CHECK(sink.frames[0].body == wire.substr(16));
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.bufferCapacity() == 0);  // above 16 KiB: given back
}

TEST_CASE("a header announcing 8 MiB followed by 100 bytes costs about 100 bytes") {
  const std::string wire = encode({kHessian2, kStatusOk, 3, pattern(std::size_t{8} << 20)});
  PartialFrameBudget budget(std::size_t{1} << 20);
  FrameDecoder decoder({}, &budget);
  RecordingSink sink;
  CHECK(decoder.feed(wire.substr(0, 7), sink) == DecodeError::None);
  CHECK(decoder.feed(wire.substr(7, 109), sink) == DecodeError::None);  // header + 100 body bytes
  CHECK(decoder.buffered() == 116);
  CHECK(decoder.bufferCapacity() == 116);
  CHECK(decoder.charged() == 0);
  CHECK(budget.used() == 0);
}

TEST_CASE("a small split frame keeps its buffer for the next one") {
  const std::string wire = encode({kHessian2, kStatusOk, 3, pattern(1000)});
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(wire.substr(0, 500), sink) == DecodeError::None);
  CHECK(decoder.bufferCapacity() == 500);
  CHECK(decoder.feed(wire.substr(500) + wire.substr(0, 600), sink) == DecodeError::None);
  CHECK(decoder.buffered() == 600);
  CHECK(decoder.bufferCapacity() == 1016);  // grown once to the whole frame, then reused
  CHECK(decoder.feed(wire.substr(600), sink) == DecodeError::None);
  CHECK(sink.frames.size() == 2);
  CHECK(decoder.bufferCapacity() == 1016);
}

TEST_CASE("the budget is charged above 16 KiB, refuses beyond its limit and is given back") {
  PartialFrameBudget budget(std::size_t{1} << 20);  // 1 MiB for every decoder of a "loop"
  const std::string wire = encode({kHessian2, kStatusOk, 1, pattern(std::size_t{900} << 10)});
  FrameDecoder a({}, &budget);
  FrameDecoder b({}, &budget);
  RecordingSink sink;
  CHECK(a.feed(wire.substr(0, std::size_t{600} << 10), sink) == DecodeError::None);
  CHECK(a.charged() == a.bufferCapacity() - kFree);
  CHECK(budget.used() == a.charged());
  const std::size_t usedByA = budget.used();
  // b needs as much: beyond the 1 MiB, b's stream ends and nothing else changes.
  CHECK(b.feed(wire.substr(0, std::size_t{600} << 10), sink) == DecodeError::BudgetExceeded);
  CHECK(isResourceError(b.error()));
  CHECK(decodeErrorName(b.error()) == "partial-frame-budget");
  CHECK(b.reason().starts_with("partial-frame budget: "));
  CHECK(b.reason().find(fmt::format("({} of 1048576 in use)", usedByA)) != std::string::npos);
  CHECK(b.buffered() == 0);
  CHECK(b.charged() == 0);
  CHECK(budget.used() == usedByA);
  CHECK(budget.refusals() == 1);
  CHECK(a.feed(wire.substr(std::size_t{600} << 10), sink) == DecodeError::None);
  CHECK(sink.frames.size() == 1);
  CHECK(budget.used() == 0);                    // delivered: given back
  CHECK(budget.peak() == wire.size() - kFree);  // a, grown to its whole frame
}

TEST_CASE("frames within 16 KiB are never refused, even by an exhausted budget") {
  PartialFrameBudget budget(1);
  REQUIRE(budget.tryCharge(1));  // exhausted
  const std::string wire = encode({kHessian2, kStatusOk, 1, pattern(10000)});
  FrameDecoder decoder({}, &budget);
  RecordingSink sink;
  for (std::size_t at = 0; at < wire.size(); at += 3000) {
    REQUIRE(decoder.feed(wire.substr(at, 3000), sink) == DecodeError::None);
  }
  CHECK(sink.frames.size() == 1);
  CHECK(budget.used() == 1);
  CHECK(budget.refusals() == 0);
}

TEST_CASE("a decoder destroyed or failed mid-frame gives its charge back") {
  PartialFrameBudget budget(0);  // unlimited: counts, never refuses
  const std::string wire = encode({kHessian2, kStatusOk, 1, pattern(std::size_t{200} << 10)});
  RecordingSink sink;
  {
    FrameDecoder decoder({}, &budget);
    CHECK(decoder.feed(wire.substr(0, std::size_t{100} << 10), sink) == DecodeError::None);
    CHECK(budget.used() == decoder.bufferCapacity() - kFree);
    CHECK(budget.used() > 0);
  }
  CHECK(budget.used() == 0);
  FrameDecoder decoder({}, &budget);
  CHECK(decoder.feed(wire.substr(0, std::size_t{100} << 10), sink) == DecodeError::None);
  CHECK(decoder.finish() == DecodeError::TruncatedAtEof);
  CHECK(budget.used() == 0);
  CHECK(budget.refusals() == 0);
  CHECK(budget.peak() == (std::size_t{100} << 10) - kFree);
}

TEST_CASE("an 8 MiB frame split in three leaves no 8 MiB buffer behind") {
  const std::size_t body = std::size_t{8} << 20;
  const std::string wire = encode({flag::kRequest | kHessian2, 0, 9, pattern(body)});
  const auto out = decodeSplit(wire, {100, body / 2});
  REQUIRE(out.frames.size() == 1);
  CHECK(out.frames[0].body.size() == body);
  CHECK(out.maxBuffered == body / 2);

  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(wire.substr(0, 100), sink) == DecodeError::None);
  CHECK(decoder.feed(wire.substr(100), sink) == DecodeError::None);
  CHECK(sink.frames.size() == 1);
  CHECK(decoder.bufferCapacity() == 0);
}

TEST_CASE("merged frames after a split frame are delivered in place and not buffered") {
  const std::string one = encode({kHessian2, kStatusOk, 1, pattern(30)});
  const std::string stream = one + one + one + one;
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(stream.substr(0, 10), sink) == DecodeError::None);
  CHECK(decoder.buffered() == 10);
  CHECK(decoder.feed(stream.substr(10, 170), sink) == DecodeError::None);  // ends 4 bytes early
  CHECK(sink.frames.size() == 3);
  CHECK(decoder.buffered() == 46 - 4);
  CHECK(decoder.feed(stream.substr(180), sink) == DecodeError::None);
  CHECK(sink.frames.size() == 4);
  CHECK(decoder.buffered() == 0);
}

}  // TEST_SUITE("codec")
