// The decoder's buffer: a split frame reserves its announced size once (no regrowth while its body
// trickles in), holds at most one header + one body, and a capacity above 64 KiB is given back
// once its frame is delivered; small capacities are kept for the next split frame.
#include "support.h"

#include <doctest/doctest.h>

#include <string>

using namespace codectest;

TEST_SUITE("codec") {

TEST_CASE("a split 1 MiB frame reserves its size once and releases it after delivery") {
  const std::size_t body = std::size_t{1} << 20;
  const std::string wire = encode({flag::kRequest | kHessian2, 0, 3, pattern(body)});
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(wire.substr(0, 26), sink) == DecodeError::None);
  CHECK(decoder.buffered() == 26);
  const std::size_t reserved = decoder.bufferCapacity();
  CHECK(reserved >= 16 + body);
  std::size_t feeds = 1;
  for (std::size_t at = 26; at < wire.size(); at += 4096, ++feeds) {
    REQUIRE(decoder.feed(wire.substr(at, 4096), sink) == DecodeError::None);
    if (decoder.buffered() != 0) {
      REQUIRE(decoder.bufferCapacity() == reserved);  // never regrown
      REQUIRE(decoder.buffered() <= 16 + body);
    }
  }
  CHECK(feeds == 1 + 256);  // 1048566 bytes in 4096-byte pieces, the last one short
  REQUIRE(sink.frames.size() == 1);
  CHECK(sink.frames[0].body == wire.substr(16));
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.bufferCapacity() <= 64 * 1024);
}

TEST_CASE("a header completed across feeds reserves the announced size at once") {
  const std::string wire = encode({kHessian2, kStatusOk, 3, pattern(200000)});
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(wire.substr(0, 7), sink) == DecodeError::None);
  CHECK(decoder.bufferCapacity() < 200016);  // only a header's worth so far
  CHECK(decoder.feed(wire.substr(7, 10), sink) == DecodeError::None);  // header + 1 body byte
  CHECK(decoder.buffered() == 17);
  CHECK(decoder.bufferCapacity() >= 200016);
  CHECK(decoder.feed(wire.substr(17), sink) == DecodeError::None);
  CHECK(sink.frames.size() == 1);
  CHECK(decoder.bufferCapacity() <= 64 * 1024);
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
  CHECK(decoder.bufferCapacity() <= 64 * 1024);
}

TEST_CASE("a small split frame keeps its buffer for the next one") {
  const std::string wire = encode({kHessian2, kStatusOk, 3, pattern(1000)});
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(wire.substr(0, 500), sink) == DecodeError::None);
  const std::size_t reserved = decoder.bufferCapacity();
  CHECK(reserved >= 1016);
  CHECK(decoder.feed(wire.substr(500) + wire.substr(0, 600), sink) == DecodeError::None);
  CHECK(decoder.buffered() == 600);
  CHECK(decoder.bufferCapacity() == reserved);  // the same allocation, reused
  CHECK(decoder.feed(wire.substr(600), sink) == DecodeError::None);
  CHECK(sink.frames.size() == 2);
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
