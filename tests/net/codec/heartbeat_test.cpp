// Heartbeat recognition (Dubbo's rule: the event flag and the body "N", request or response) and
// decoding of the heartbeat frames this codec sends.
#include "support.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace codectest;

namespace {

FrameView view(std::uint8_t flags, std::string_view body) { return FrameView{flags, 0, 9, body}; }

}  // namespace

TEST_SUITE("codec") {

TEST_CASE("isHeartbeat is true for the event flag with body N in requests and responses") {
  CHECK(view(flag::kEvent, "N").isHeartbeat());
  CHECK(view(flag::kEvent | kHessian2, "N").isHeartbeat());
  CHECK(view(flag::kRequest | flag::kTwoWay | flag::kEvent | kHessian2, "N").isHeartbeat());
  CHECK(view(flag::kRequest | flag::kEvent | 6, "N").isHeartbeat());  // any serialization
}

TEST_CASE("isHeartbeat is false without the event flag or with any other body") {
  CHECK_FALSE(view(flag::kRequest | flag::kTwoWay | kHessian2, "N").isHeartbeat());
  CHECK_FALSE(view(kHessian2, "N").isHeartbeat());
  CHECK_FALSE(view(flag::kEvent | kHessian2, "").isHeartbeat());
  CHECK_FALSE(view(flag::kEvent | kHessian2, "NN").isHeartbeat());
  CHECK_FALSE(view(flag::kEvent | kHessian2, "n").isHeartbeat());
  CHECK_FALSE(view(flag::kEvent | kHessian2, std::string_view("\0", 1)).isHeartbeat());
  CHECK_FALSE(view(flag::kEvent | kHessian2, "R").isHeartbeat());  // a readonly event
}

TEST_CASE("flag accessors read each bit and the low five bits as serialization id") {
  const FrameView all = view(0xFF, "");
  CHECK(all.isRequest());
  CHECK(all.isTwoWay());
  CHECK(all.isEvent());
  CHECK(all.serialization() == 31);
  const FrameView none = view(0x00, "");
  CHECK_FALSE(none.isRequest());
  CHECK_FALSE(none.isTwoWay());
  CHECK_FALSE(none.isEvent());
  CHECK(none.serialization() == 0);
  CHECK(view(kHessian2, "").serialization() == 2);
}

TEST_CASE("encoded heartbeats decode as heartbeats with their id for ids 0 and max") {
  std::string stream;
  const std::uint64_t maxId = std::numeric_limits<std::uint64_t>::max();
  encodeHeartbeatRequest(stream, 0);
  encodeHeartbeatResponse(stream, 0);
  encodeHeartbeatRequest(stream, maxId);
  encodeHeartbeatResponse(stream, maxId);

  struct Sink : FrameSink {
    int requests = 0;
    int responses = 0;
    std::vector<std::uint64_t> ids;
    bool onFrame(const FrameView& f) override {
      CHECK(f.isHeartbeat());
      CHECK(f.serialization() == kHessian2);
      if (f.isRequest()) {
        ++requests;
        CHECK(f.isTwoWay());
        CHECK(f.status == 0);
      } else {
        ++responses;
        CHECK_FALSE(f.isTwoWay());
        CHECK(f.status == kStatusOk);
      }
      ids.push_back(f.id);
      return true;
    }
  } sink;
  FrameDecoder decoder;
  CHECK(decoder.feed(stream, sink) == DecodeError::None);
  CHECK(sink.requests == 2);
  CHECK(sink.responses == 2);
  CHECK(sink.ids == std::vector<std::uint64_t>{0, 0, maxId, maxId});
  CHECK(decoder.frames() == 4);
}

TEST_CASE("an event frame with another body is decoded but is no heartbeat") {
  const auto out = decodeWhole(encode({flag::kEvent | kHessian2, kStatusOk, 3, "R"}));
  REQUIRE(out.frames.size() == 1);
  CHECK(out.frames[0].body == "R");
  CHECK_FALSE(FrameView{out.frames[0].flags, 0, 3, out.frames[0].body}.isHeartbeat());
}

}  // TEST_SUITE("codec")
