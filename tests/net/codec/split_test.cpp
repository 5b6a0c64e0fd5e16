// Frames split and merged in every way: every single cut of a six-frame stream, every pair of
// cuts, one byte at a time, and zero-copy delivery of the frames that arrive whole.
#include "support.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace codectest;

namespace {

// Six frames, 147 bytes: heartbeats, an empty body, an event that is no heartbeat, a body that
// contains the magic bytes.
std::vector<Frame> sixFrames() {
  return {
      {flag::kRequest | flag::kTwoWay | flag::kEvent | kHessian2, 0, 1, "N"},                 // 17
      {flag::kRequest | flag::kTwoWay | kHessian2, 0, 2, "hello"},                            // 21
      {kHessian2, kStatusOk, 2, ""},                                                          // 16
      {flag::kEvent | kHessian2, kStatusOk, 0, "RO"},                                         // 18
      {flag::kEvent | kHessian2, kStatusOk, std::numeric_limits<std::uint64_t>::max(), "N"},  // 17
      {kHessian2, 70, 0x0102030405060708, pattern(40) + "\xDA\xBB"},                          // 58
  };
}

bool within(const char* p, std::size_t n, const std::string& buffer) {
  const char* begin = buffer.data();
  return p >= begin && p + n <= begin + buffer.size();
}

}  // namespace

TEST_SUITE("codec") {

TEST_CASE("the six-frame stream decodes to exactly its frames when fed whole") {
  const auto frames = sixFrames();
  const std::string stream = encodeAll(frames);
  REQUIRE(stream.size() == 147);
  const auto out = decodeWhole(stream);
  CHECK(out.frames == frames);
  CHECK(out.counted == 6);
  CHECK(out.error == DecodeError::None);
  CHECK(out.maxBuffered == 0);
}

TEST_CASE("every single cut of the six-frame stream gives exactly the six frames") {
  const auto frames = sixFrames();
  const std::string stream = encodeAll(frames);
  const Outcome expected{frames, DecodeError::None, "", 6, 0};
  std::size_t cuts = 0;
  std::size_t mismatches = 0;
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    auto out = decodeSplit(stream, {cut});
    CHECK(out.maxBuffered <= 16 + 42);  // never more than one header + the largest body
    out.maxBuffered = 0;
    if (!(out == expected)) {
      ++mismatches;
      CAPTURE(cut);
      CHECK(out.frames == frames);
    }
    ++cuts;
  }
  CHECK(cuts == 148);  // 0 .. 147: empty first and last feeds included
  CHECK(mismatches == 0);
}

TEST_CASE("every pair of cuts of the six-frame stream gives exactly the six frames") {
  const auto frames = sixFrames();
  const std::string stream = encodeAll(frames);
  std::size_t pairs = 0;
  std::size_t mismatches = 0;
  for (std::size_t first = 0; first <= stream.size(); ++first) {
    for (std::size_t second = first; second <= stream.size(); ++second) {
      const auto out = decodeSplit(stream, {first, second});
      ++pairs;
      if (out.frames != frames || out.error != DecodeError::None || out.counted != 6) {
        ++mismatches;
        CAPTURE(first);
        CAPTURE(second);
        CHECK(out.frames == frames);
      }
    }
  }
  CHECK(pairs == 148 * 149 / 2);
  CHECK(mismatches == 0);
}

TEST_CASE("one byte at a time gives exactly the six frames and buffers at most one frame") {
  const auto frames = sixFrames();
  const std::string stream = encodeAll(frames);
  FrameDecoder decoder;
  RecordingSink sink;
  std::size_t inFrame = 0;  // bytes of the current frame fed so far
  std::size_t frameIndex = 0;
  for (char c : stream) {
    const std::string one(1, c);
    REQUIRE(decoder.feed(one, sink) == DecodeError::None);
    ++inFrame;
    const std::size_t frameSize = 16 + frames[frameIndex].body.size();
    if (inFrame == frameSize) {
      CHECK(decoder.buffered() == 0);
      CHECK(sink.frames.size() == frameIndex + 1);
      inFrame = 0;
      ++frameIndex;
    } else {
      CHECK(decoder.buffered() == inFrame);
      CHECK(sink.frames.size() == frameIndex);
    }
  }
  CHECK(decoder.finish() == DecodeError::None);
  CHECK(sink.frames == frames);
  CHECK(decoder.frames() == 6);
}

TEST_CASE("frames whole inside one feed point into that input and a split frame does not") {
  const auto frames = sixFrames();
  const std::string stream = encodeAll(frames);
  // Cut inside frame 3 (offset 54 + 5): frames 0-2 whole in piece A, 3 split, 4-5 whole in B.
  const std::string a = stream.substr(0, 59);
  const std::string b = stream.substr(59);
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(a, sink) == DecodeError::None);
  REQUIRE(sink.frames.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(within(sink.bodyData[i], frames[i].body.size(), a));
  CHECK(decoder.buffered() == 5);
  CHECK(decoder.feed(b, sink) == DecodeError::None);
  REQUIRE(sink.frames.size() == 6);
  CHECK_FALSE(within(sink.bodyData[3], 2, a));
  CHECK_FALSE(within(sink.bodyData[3], 2, b));
  CHECK(within(sink.bodyData[4], 1, b));
  CHECK(within(sink.bodyData[5], 42, b));
  CHECK(sink.frames == frames);
}

TEST_CASE("a big body fed whole is delivered in place without buffering") {
  const std::string wire =
      encode({flag::kRequest | kHessian2, 0, 4, pattern(std::size_t{1} << 20)});
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed(wire, sink) == DecodeError::None);
  REQUIRE(sink.frames.size() == 1);
  CHECK(sink.bodyData[0] == wire.data() + 16);
  CHECK(decoder.bufferCapacity() == FrameDecoder().bufferCapacity());  // never grown
}

TEST_CASE("empty feeds change nothing before between and after frames") {
  const std::string wire = encode({kHessian2, kStatusOk, 8, "xy"});
  FrameDecoder decoder;
  RecordingSink sink;
  CHECK(decoder.feed({}, sink) == DecodeError::None);
  CHECK(decoder.feed(wire.substr(0, 3), sink) == DecodeError::None);
  CHECK(decoder.feed({}, sink) == DecodeError::None);
  CHECK(decoder.buffered() == 3);
  CHECK(decoder.feed(wire.substr(3), sink) == DecodeError::None);
  CHECK(decoder.feed({}, sink) == DecodeError::None);
  CHECK(sink.frames.size() == 1);
  CHECK(decoder.finish() == DecodeError::None);
}

}  // TEST_SUITE("codec")
