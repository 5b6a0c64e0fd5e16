// Encode then decode: every flag combination with several serialization ids and statuses, bodies
// from empty to the 8 MiB limit, all as one merged stream and frame by frame.
#include "support.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace codectest;

namespace {

constexpr std::uint8_t kSerializations[] = {0, 1, 2, 3, 6, 7, 8, 21, 31};

// The 8 combinations of request / two-way / event times kSerializations: 72 frames.
std::vector<Frame> everyFlagCombination() {
  std::vector<Frame> frames;
  std::uint64_t id = 0;
  for (int bits = 0; bits < 8; ++bits) {
    for (std::uint8_t serialization : kSerializations) {
      Frame f;
      f.flags = static_cast<std::uint8_t>(((bits & 1) ? flag::kRequest : 0) |
                                          ((bits & 2) ? flag::kTwoWay : 0) |
                                          ((bits & 4) ? flag::kEvent : 0) | serialization);
      f.status = (f.flags & flag::kRequest) != 0 ? 0 : static_cast<std::uint8_t>(20 + bits * 10);
      f.id = id++ * 0x0101010101010101;
      f.body = pattern(id % 5, static_cast<unsigned>(id));
      frames.push_back(f);
    }
  }
  return frames;
}

}  // namespace

TEST_SUITE("codec") {

TEST_CASE("every flag combination with 9 serialization ids round-trips in one merged stream") {
  const auto frames = everyFlagCombination();
  REQUIRE(frames.size() == 72);
  const auto out = decodeWhole(encodeAll(frames));
  CHECK(out.error == DecodeError::None);
  CHECK(out.reason.empty());
  CHECK(out.counted == 72);
  REQUIRE(out.frames.size() == 72);
  CHECK(out.frames == frames);
  CHECK(out.maxBuffered == 0);  // nothing was split: nothing was copied
}

TEST_CASE("every flag combination round-trips frame by frame with accessors agreeing") {
  int checked = 0;
  for (const Frame& f : everyFlagCombination()) {
    const auto out = decodeWhole(encode(f));
    REQUIRE(out.frames.size() == 1);
    CHECK(out.frames[0] == f);
    const FrameView v{out.frames[0].flags, out.frames[0].status, out.frames[0].id,
                      out.frames[0].body};
    CHECK(v.isRequest() == ((f.flags & 0x80) != 0));
    CHECK(v.isTwoWay() == ((f.flags & 0x40) != 0));
    CHECK(v.isEvent() == ((f.flags & 0x20) != 0));
    CHECK(v.serialization() == (f.flags & 0x1f));
    ++checked;
  }
  CHECK(checked == 72);
}

TEST_CASE("ids 0 1 and max round-trip in requests and responses") {
  const std::vector<Frame> frames{
      {flag::kRequest | flag::kTwoWay | kHessian2, 0, 0, "a"},
      {kHessian2, kStatusOk, 0, "b"},
      {flag::kRequest | kHessian2, 0, 1, ""},
      {kHessian2, 90, 1, "c"},
      {flag::kRequest | flag::kTwoWay | kHessian2, 0, std::numeric_limits<std::uint64_t>::max(),
       "d"},
      {kHessian2, kStatusOk, std::numeric_limits<std::uint64_t>::max(), "e"},
  };
  const auto out = decodeWhole(encodeAll(frames));
  CHECK(out.frames == frames);
  CHECK(out.counted == 6);
}

TEST_CASE(
    "bodies of 0 1 255 256 65535 65536 1 MiB and 8 MiB round-trip whole and split in halves") {
  const std::size_t sizes[] = {
      0, 1, 255, 256, 65535, 65536, std::size_t{1} << 20, std::size_t{8} << 20};
  int checked = 0;
  for (std::size_t size : sizes) {
    CAPTURE(size);
    const Frame f{flag::kRequest | flag::kTwoWay | kHessian2, 0, size, pattern(size, 3)};
    const std::string wire = encode(f);
    REQUIRE(wire.size() == 16 + size);
    const auto whole = decodeWhole(wire);
    REQUIRE(whole.frames.size() == 1);
    CHECK(whole.frames[0] == f);
    CHECK(whole.error == DecodeError::None);
    const auto split = decodeSplit(wire, {wire.size() / 2});
    REQUIRE(split.frames.size() == 1);
    CHECK(split.frames[0] == f);
    CHECK(split.error == DecodeError::None);
    CHECK(split.maxBuffered == wire.size() / 2);
    ++checked;
  }
  CHECK(checked == 8);
}

TEST_CASE("a body made of magic bytes and headers is only a body") {
  std::string inner;
  encodeHeartbeatRequest(inner, 1);
  encodeHeartbeatRequest(inner, 2);
  const Frame f{flag::kRequest | kHessian2, 0, 7, inner + "\xDA\xBB"};
  const auto out = decodeWhole(encode(f) + encode(f));
  CHECK(out.counted == 2);
  CHECK(out.frames == std::vector<Frame>{f, f});
}

}  // TEST_SUITE("codec")
