// Refused streams (bad magic, body above the limit, truncation at EOF) with their exact reasons,
// and a sink that stops the stream (returning false, throwing, or calling back into the decoder).
#include "support.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace codectest;

namespace {

const Frame kPing{flag::kRequest | flag::kTwoWay | flag::kEvent | kHessian2, 0, 11, "N"};

// A header announcing `length` body bytes (no body).
std::string headerOnly(std::uint64_t id, std::uint32_t length) {
  std::string h = bytes({0xDA, 0xBB, flag::kRequest | kHessian2, 0});
  for (int shift = 56; shift >= 0; shift -= 8) h.push_back(static_cast<char>(id >> shift));
  for (int shift = 24; shift >= 0; shift -= 8) h.push_back(static_cast<char>(length >> shift));
  return h;
}

}  // namespace

TEST_SUITE("codec") {

TEST_CASE("bad magic at the first frame is refused with its value and later feeds read nothing") {
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed("GET / HTTP/1.1\r\nHost: x\r\n\r\n", sink) == DecodeError::BadMagic);
  CHECK(decoder.error() == DecodeError::BadMagic);
  CHECK(decoder.reason() == "bad magic 0x4745 (expected: 0xdabb)");
  CHECK(decoder.frames() == 0);
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.feed(encode(kPing), sink) == DecodeError::BadMagic);
  CHECK(decoder.finish() == DecodeError::BadMagic);
  CHECK(decoder.reason() == "bad magic 0x4745 (expected: 0xdabb)");
  CHECK(sink.frames.empty());
}

TEST_CASE("bad magic is found from the first two bytes without waiting for a header") {
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed("\xDA", sink) == DecodeError::None);
  CHECK(decoder.buffered() == 1);
  CHECK(decoder.feed(std::string_view("\x00", 1), sink) == DecodeError::BadMagic);
  CHECK(decoder.reason() == "bad magic 0xda00 (expected: 0xdabb)");
  CHECK(decoder.buffered() == 0);
}

TEST_CASE("bad magic after three good frames in one feed delivers exactly the three") {
  const std::string stream = encode(kPing) + encode(kPing) + encode(kPing) + "\x12\x34rest";
  const auto out = decodeWhole(stream);
  CHECK(out.frames.size() == 3);
  CHECK(out.counted == 3);
  CHECK(out.error == DecodeError::BadMagic);
  CHECK(out.reason == "bad magic 0x1234 (expected: 0xdabb)");
}

TEST_CASE("bad magic after good frames gives the same outcome at every cut") {
  const std::string stream = encode(kPing) + encode({kHessian2, kStatusOk, 11, "N"}) + "GE";
  const auto whole = decodeWhole(stream);
  REQUIRE(whole.frames.size() == 2);
  REQUIRE(whole.error == DecodeError::BadMagic);
  std::size_t cuts = 0;
  for (std::size_t cut = 0; cut <= stream.size(); ++cut, ++cuts) {
    CAPTURE(cut);
    const auto out = decodeSplit(stream, {cut});
    CHECK(out.frames == whole.frames);
    CHECK(out.error == DecodeError::BadMagic);
    CHECK(out.reason == "bad magic 0x4745 (expected: 0xdabb)");
  }
  CHECK(cuts == 37);
}

TEST_CASE("a body exactly at the limit is accepted whole and split") {
  const CodecOptions options{.maxBody = 100};
  const std::string wire = encode({kHessian2, kStatusOk, 5, pattern(100)}, 100);
  CHECK(decodeWhole(wire, options).frames.size() == 1);
  const auto split = decodeSplit(wire, {16, 17}, options);
  CHECK(split.frames.size() == 1);
  CHECK(split.error == DecodeError::None);
}

TEST_CASE("limit plus one is refused when the header completes and the body is never buffered") {
  const CodecOptions options{.maxBody = 100};
  FrameDecoder decoder(options);
  RecordingSink sink;
  const std::string header = headerOnly(5, 101);
  CHECK(decoder.feed(header.substr(0, 10), sink) == DecodeError::None);
  CHECK(decoder.buffered() == 10);
  CHECK(decoder.feed(header.substr(10), sink) == DecodeError::BodyTooLarge);
  CHECK(decoder.reason() == "body length 101 (expected: <= 100)");
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.bufferCapacity() < 101);  // no room was made for the body
  CHECK(decoder.feed(pattern(101), sink) == DecodeError::BodyTooLarge);
  CHECK(decoder.buffered() == 0);
  CHECK(sink.frames.empty());
}

TEST_CASE(
    "a header above the default 8 MiB limit in a whole feed is refused after the good frame") {
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(encode(kPing) + headerOnly(6, 9000000) + "body", sink) ==
        DecodeError::BodyTooLarge);
  CHECK(decoder.reason() == "body length 9000000 (expected: <= 8388608)");
  CHECK(sink.frames.size() == 1);
  CHECK(decoder.frames() == 1);
  CHECK(decoder.buffered() == 0);
}

TEST_CASE("lengths above 2147483647 are refused whatever maxBody says") {
  const CodecOptions unlimited{.maxBody = std::numeric_limits<std::size_t>::max()};
  const auto out = decodeWhole(headerOnly(1, 0x80000000), unlimited);
  CHECK(out.error == DecodeError::BodyTooLarge);
  CHECK(out.reason == "body length 2147483648 (expected: <= 2147483647)");
  const auto max = decodeWhole(headerOnly(1, 0xFFFFFFFF), unlimited);
  CHECK(max.reason == "body length 4294967295 (expected: <= 2147483647)");
  CHECK(max.maxBuffered == 0);
}

TEST_CASE("a truncated header at EOF is reported with the bytes received") {
  const auto out = decodeWhole(encode(kPing) + encode(kPing).substr(0, 5));
  CHECK(out.frames.size() == 1);
  CHECK(out.error == DecodeError::TruncatedAtEof);
  CHECK(out.reason == "stream ended after 5 bytes of a 16-byte header");
}

TEST_CASE("a truncated body at EOF is reported with bytes received frame size and id") {
  const std::string wire = encode({flag::kRequest | kHessian2, 0, 7, pattern(100)});
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(wire.substr(0, 20), sink) == DecodeError::None);
  CHECK(decoder.finish() == DecodeError::TruncatedAtEof);
  CHECK(decoder.error() == DecodeError::TruncatedAtEof);
  CHECK(decoder.reason() == "stream ended after 20 of 116 bytes of a frame (id 7)");
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.feed(wire.substr(20), sink) == DecodeError::TruncatedAtEof);
  CHECK(decoder.finish() == DecodeError::TruncatedAtEof);
  CHECK(sink.frames.empty());
}

TEST_CASE("a truncated frame with a header only and id max names the id") {
  const auto out = decodeWhole(headerOnly(std::numeric_limits<std::uint64_t>::max(), 3));
  CHECK(out.reason == "stream ended after 16 of 19 bytes of a frame (id 18446744073709551615)");
}

TEST_CASE("a clean finish reports none and leaves the decoder usable") {
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.finish() == DecodeError::None);
  CHECK(decoder.feed(encode(kPing), sink) == DecodeError::None);
  CHECK(decoder.finish() == DecodeError::None);
  CHECK(decoder.reason().empty());
  CHECK(sink.frames.size() == 1);
}

TEST_CASE("a sink returning false stops at that frame and the decoder reads nothing more") {
  const std::string stream = encodeAll({kPing, kPing, kPing, kPing, kPing});
  FrameDecoder decoder;
  RecordingSink sink;
  sink.stopAfter = 2;
  CHECK(decoder.feed(stream.substr(0, 80), sink) == DecodeError::None);  // 4 whole + 12 bytes
  CHECK(decoder.stopped());
  CHECK(decoder.error() == DecodeError::None);
  CHECK(decoder.reason().empty());
  CHECK(decoder.frames() == 2);
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.feed(stream.substr(80), sink) == DecodeError::None);
  CHECK(decoder.finish() == DecodeError::None);  // the dropped rest is no truncation
  CHECK(sink.frames.size() == 2);
}

TEST_CASE("a sink returning false on a frame assembled across feeds releases the buffer") {
  const std::string stream = encodeAll({kPing, kPing});
  FrameDecoder decoder;
  RecordingSink sink;
  sink.stopAfter = 1;
  CHECK(decoder.feed(stream.substr(0, 9), sink) == DecodeError::None);
  CHECK(decoder.feed(stream.substr(9), sink) == DecodeError::None);
  CHECK(decoder.stopped());
  CHECK(decoder.buffered() == 0);
  CHECK(sink.frames.size() == 1);
  CHECK(decoder.frames() == 1);
}

TEST_CASE("a throwing sink stops the decoder and the exception leaves feed") {
  struct Throwing : FrameSink {
    int calls = 0;
    bool onFrame(const FrameView&) override {
      ++calls;
      throw std::runtime_error("handler failed");
    }
  } sink;
  const std::string stream = encodeAll({kPing, kPing});
  FrameDecoder decoder;
  CHECK(decoder.feed(stream.substr(0, 9), sink) == DecodeError::None);  // frame 1 buffered
  CHECK_THROWS_WITH_AS(decoder.feed(stream.substr(9), sink), "handler failed", std::runtime_error);
  CHECK(decoder.stopped());
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.feed(stream, sink) == DecodeError::None);
  CHECK(sink.calls == 1);
  CHECK(decoder.frames() == 1);
}

TEST_CASE("feed or finish from inside the sink of the same decoder is a logic error") {
  struct Reentrant : FrameSink {
    FrameDecoder* decoder = nullptr;
    bool callFinish = false;
    bool onFrame(const FrameView&) override {
      if (callFinish) (void)decoder->finish();
      (void)decoder->feed("x", *this);
      return true;
    }
  };
  for (bool callFinish : {false, true}) {
    CAPTURE(callFinish);
    FrameDecoder decoder;
    Reentrant sink;
    sink.decoder = &decoder;
    sink.callFinish = callFinish;
    CHECK_THROWS_AS(decoder.feed(encode(kPing), sink), std::logic_error);
    CHECK(decoder.stopped());
    CHECK(decoder.frames() == 1);
  }
}

}  // TEST_SUITE("codec")
