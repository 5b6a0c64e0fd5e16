// Shared helpers of the codec suite: an owning copy of a frame, a recording sink, and a decoder
// driver that feeds a stream cut at given offsets, each piece in its own heap buffer (so ASan
// sees any read past a piece or any view kept after its feed()).
#pragma once

#include <wheelbeat/net/codec.h>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace codectest {

using namespace wheelbeat::net;

struct Frame {
  std::uint8_t flags = 0;
  std::uint8_t status = 0;
  std::uint64_t id = 0;
  std::string body;

  friend bool operator==(const Frame&, const Frame&) = default;
};

inline Frame copyOf(const FrameView& view) {
  return Frame{view.flags, view.status, view.id, std::string(view.body)};
}

inline std::string encode(const Frame& f, std::size_t maxBody = CodecOptions{}.maxBody) {
  std::string out;
  encodeFrame(out, f.flags, f.status, f.id, f.body, maxBody);
  return out;
}

inline std::string encodeAll(const std::vector<Frame>& frames) {
  std::string out;
  for (const auto& f : frames) encodeFrame(out, f.flags, f.status, f.id, f.body);
  return out;
}

// Bytes from small integers: bytes({0xDA, 0xBB}).
inline std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

// `n` bytes cycling through every value 0..255 (so the magic bytes also appear inside bodies).
inline std::string pattern(std::size_t n, unsigned seed = 0) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7 + seed) & 0xff);
  return out;
}

inline std::string hex(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += fmt::format("{}{:02X}", out.empty() ? "" : " ", c);
  return out;
}

// Records copies of the frames; returns false (stop) once `stopAfter` frames were seen.
class RecordingSink : public FrameSink {
public:
  std::vector<Frame> frames;
  std::vector<const char*> bodyData;  // body.data() of each frame as delivered
  std::size_t stopAfter = std::numeric_limits<std::size_t>::max();

  bool onFrame(const FrameView& frame) override {
    frames.push_back(copyOf(frame));
    bodyData.push_back(frame.body.data());
    return frames.size() < stopAfter;
  }
};

// What a decoder made of a whole stream.
struct Outcome {
  std::vector<Frame> frames;
  DecodeError error = DecodeError::None;
  std::string reason;
  std::uint64_t counted = 0;    // decoder.frames()
  std::size_t maxBuffered = 0;  // largest buffered() after any feed()

  friend bool operator==(const Outcome&, const Outcome&) = default;
};

// Feeds `stream` cut at the ascending offsets `cuts` (repeats and 0 / size give empty feeds),
// then finish().
inline Outcome decodeSplit(std::string_view stream, const std::vector<std::size_t>& cuts,
                           CodecOptions options = {}) {
  FrameDecoder decoder(options);
  RecordingSink sink;
  Outcome outcome;
  std::size_t from = 0;
  auto feedPiece = [&](std::size_t to) {
    const std::string piece(stream.substr(from, to - from));  // its own allocation
    decoder.feed(piece, sink);
    outcome.maxBuffered = std::max(outcome.maxBuffered, decoder.buffered());
    from = to;
  };
  for (std::size_t cut : cuts) feedPiece(cut);
  feedPiece(stream.size());
  outcome.error = decoder.finish();
  outcome.reason = decoder.reason();
  outcome.counted = decoder.frames();
  outcome.frames = std::move(sink.frames);
  return outcome;
}

inline Outcome decodeWhole(std::string_view stream, CodecOptions options = {}) {
  return decodeSplit(stream, {}, options);
}

}  // namespace codectest

namespace doctest {
template <>
struct StringMaker<codectest::Frame> {
  static String convert(const codectest::Frame& f) {
    const std::string shown = f.body.size() <= 32 ? codectest::hex(f.body) : "...";
    return fmt::format("Frame(flags 0x{:02x} status {} id {} body {} bytes: {})", f.flags, f.status,
                       f.id, f.body.size(), shown)
        .c_str();
  }
};
}  // namespace doctest
