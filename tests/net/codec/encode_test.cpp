// encodeFrame and the heartbeat encoders: exact bytes on the wire, appending, the body limit.
#include "support.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

using namespace codectest;

namespace {

// DA BB <flags> <status> <id, 8 bytes big-endian> 00 00 00 01 4E
std::string heartbeatBytes(int flags, int status, std::uint64_t id) {
  std::string out = bytes({0xDA, 0xBB, flags, status});
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(id >> shift));
  return out + bytes({0x00, 0x00, 0x00, 0x01, 0x4E});
}

constexpr std::uint64_t kIds[] = {0, 1, 0x0102030405060708,
                                  std::numeric_limits<std::uint64_t>::max()};

}  // namespace

TEST_SUITE("codec") {

TEST_CASE(
    "heartbeat request bytes are DA BB E2 00 id 00 00 00 01 4E for ids 0 1 0x0102030405060708 and "
    "max") {
  for (std::uint64_t id : kIds) {
    std::string out;
    encodeHeartbeatRequest(out, id);
    CAPTURE(id);
    CHECK(out.size() == 17);
    CHECK(hex(out) == hex(heartbeatBytes(0xE2, 0x00, id)));
    const auto alone = heartbeatRequestFrame(id);
    CHECK(hex(std::string(alone.data(), alone.size())) == hex(heartbeatBytes(0xE2, 0x00, id)));
  }
  std::string out;
  encodeHeartbeatRequest(out, 0x0102030405060708);
  CHECK(hex(out) == "DA BB E2 00 01 02 03 04 05 06 07 08 00 00 00 01 4E");
}

TEST_CASE(
    "heartbeat response bytes are DA BB 22 14 same id 00 00 00 01 4E for ids 0 1 "
    "0x0102030405060708 and max") {
  for (std::uint64_t id : kIds) {
    std::string out;
    encodeHeartbeatResponse(out, id);
    CAPTURE(id);
    CHECK(out.size() == 17);
    CHECK(hex(out) == hex(heartbeatBytes(0x22, 0x14, id)));
    const auto alone = heartbeatResponseFrame(id);
    CHECK(hex(std::string(alone.data(), alone.size())) == hex(heartbeatBytes(0x22, 0x14, id)));
  }
  std::string out;
  encodeHeartbeatResponse(out, std::numeric_limits<std::uint64_t>::max());
  CHECK(hex(out) == "DA BB 22 14 FF FF FF FF FF FF FF FF 00 00 00 01 4E");
}

TEST_CASE("encodeFrame writes flags status id and length big-endian then the body") {
  const std::string body = pattern(0x010203);
  std::string out;
  encodeFrame(out, 0xC6, 0x37, 0x1122334455667788, body);
  REQUIRE(out.size() == 16 + 0x010203);
  CHECK(hex(out.substr(0, 16)) == "DA BB C6 37 11 22 33 44 55 66 77 88 00 01 02 03");
  CHECK(out.substr(16) == body);
}

TEST_CASE("encodeFrame appends after existing content and frames follow each other") {
  std::string out = "prefix";
  encodeFrame(out, flag::kRequest | kHessian2, 0, 5, "abc");
  encodeFrame(out, kHessian2, kStatusOk, 5, "");
  REQUIRE(out.size() == 6 + 19 + 16);
  CHECK(out.substr(0, 6) == "prefix");
  CHECK(hex(out.substr(6)) ==
        "DA BB 82 00 00 00 00 00 00 00 00 05 00 00 00 03 61 62 63 "
        "DA BB 02 14 00 00 00 00 00 00 00 05 00 00 00 00");
}

TEST_CASE("encodeFrame accepts a body exactly at the limit") {
  std::string out;
  encodeFrame(out, 0, 0, 1, pattern(100), 100);
  CHECK(out.size() == 116);
}

TEST_CASE(
    "encodeFrame refuses a body above the limit naming size and limit and leaves out unchanged") {
  std::string out = "kept";
  const auto capacity = out.capacity();
  CHECK_THROWS_WITH_AS(encodeFrame(out, 0, 0, 1, pattern(101), 100),
                       "encodeFrame: body length 101 (expected: <= 100)", std::invalid_argument);
  CHECK(out == "kept");
  CHECK(out.capacity() == capacity);
}

TEST_CASE("encodeFrame caps any limit at 2147483647 and checks the default limit of 8 MiB") {
  // A string_view longer than its data is never read: the size check comes first.
  const char byte = 'x';
  const std::string_view huge(&byte, std::size_t{0x80000000});
  std::string out;
  CHECK_THROWS_WITH_AS(encodeFrame(out, 0, 0, 1, huge, std::numeric_limits<std::size_t>::max()),
                       "encodeFrame: body length 2147483648 (expected: <= 2147483647)",
                       std::invalid_argument);
  const std::string_view overDefault(&byte, (std::size_t{8} << 20) + 1);
  CHECK_THROWS_WITH_AS(encodeFrame(out, 0, 0, 1, overDefault),
                       "encodeFrame: body length 8388609 (expected: <= 8388608)",
                       std::invalid_argument);
  CHECK(out.empty());
}

TEST_CASE("encodeFrame keeps appends amortised: 10000 frames cause few reallocations") {
  std::string out;
  int reallocations = 0;
  const char* data = out.data();
  for (int i = 0; i < 10000; ++i) {
    encodeHeartbeatRequest(out, static_cast<std::uint64_t>(i));
    if (out.data() != data) {
      ++reallocations;
      data = out.data();
    }
  }
  CHECK(out.size() == 170000);
  CHECK(reallocations <= 20);  // geometric growth: ~log2(170000 / 15)
}

TEST_CASE("decodeErrorName names every error") {
  CHECK(decodeErrorName(DecodeError::None) == "none");
  CHECK(decodeErrorName(DecodeError::BadMagic) == "bad-magic");
  CHECK(decodeErrorName(DecodeError::BodyTooLarge) == "body-too-large");
  CHECK(decodeErrorName(DecodeError::TruncatedAtEof) == "truncated-at-eof");
}

}  // TEST_SUITE("codec")
