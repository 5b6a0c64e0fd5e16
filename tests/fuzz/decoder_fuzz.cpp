// libFuzzer target for FrameDecoder. The input is two control bytes, cut offsets, then the stream:
//   byte 0   bit 7 set: maxBody = bits 0-6 (0 .. 127, exercises the limit); clear: 8 MiB
//   byte 1   bits 0-2: number of cuts (0 .. 7); bits 3-7: stop after that many frames (0: never)
//   then     2 bytes per cut, big-endian, taken modulo (stream size + 1) and sorted
//   rest     the byte stream
// Invariants: the stream fed cut (each piece in its own allocation) decodes exactly like the
// stream fed whole (frames, error, reason, count); so does one byte at a time for short streams;
// frames are contiguous from offset 0 and re-encoding each reproduces its input bytes; no body is
// above the limit; buffered() never exceeds a header + the limit and is 0 after an error or a
// stop; an idle buffer never keeps more than 64 KiB; a stopping sink sees a prefix of the frames.
#include <wheelbeat/net/codec.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace wheelbeat::net;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "decoder_fuzz: invariant violated: %s\n", what);
  std::abort();
}

struct Frame {
  std::uint8_t flags;
  std::uint8_t status;
  std::uint64_t id;
  std::string body;
  bool operator==(const Frame&) const = default;
};

struct Outcome {
  std::vector<Frame> frames;
  DecodeError error = DecodeError::None;
  std::string reason;
  std::uint64_t counted = 0;
  bool stopped = false;
  bool operator==(const Outcome&) const = default;
};

class Sink : public FrameSink {
public:
  Sink(std::size_t limit, std::size_t stopAfter) : limit_(limit), stopAfter_(stopAfter) {}
  bool onFrame(const FrameView& f) override {
    require(f.body.size() <= limit_, "body above the limit delivered");
    frames.push_back(Frame{f.flags, f.status, f.id, std::string(f.body)});
    return stopAfter_ == 0 || frames.size() < stopAfter_;
  }
  std::vector<Frame> frames;

private:
  std::size_t limit_;
  std::size_t stopAfter_;
};

struct Plan {
  CodecOptions options;
  std::size_t stopAfter = 0;
  std::vector<std::size_t> cuts;  // ascending, each <= stream.size()
  std::string_view stream;
};

void checkAfterFeed(const FrameDecoder& d, std::size_t limit) {
  require(d.buffered() <= kHeaderSize + limit, "buffered more than one header + one body");
  if (d.error() != DecodeError::None || d.stopped()) {
    require(d.buffered() == 0, "bytes kept after an error or a stop");
  }
  if (d.buffered() == 0) require(d.bufferCapacity() <= 64 * 1024, "idle buffer above 64 KiB");
  require((d.error() == DecodeError::None) == d.reason().empty(), "reason and error disagree");
}

// Feeds the pieces between `cuts`, each copied into its own allocation.
Outcome decode(const Plan& plan, const std::vector<std::size_t>& cuts, std::size_t stopAfter) {
  const std::size_t limit = std::min<std::size_t>(plan.options.maxBody, 0x7fffffff);
  FrameDecoder decoder(plan.options);
  Sink sink(limit, stopAfter);
  std::size_t from = 0;
  auto feedTo = [&](std::size_t to) {
    const std::string piece(plan.stream.substr(from, to - from));
    const DecodeError returned = decoder.feed(piece, sink);
    require(returned == decoder.error(), "feed() result differs from error()");
    checkAfterFeed(decoder, limit);
    from = to;
  };
  for (std::size_t cut : cuts) feedTo(cut);
  feedTo(plan.stream.size());
  const DecodeError atEof = decoder.finish();
  require(atEof == decoder.error(), "finish() result differs from error()");
  checkAfterFeed(decoder, limit);
  require(decoder.frames() == sink.frames.size(), "frames() differs from frames delivered");
  return Outcome{std::move(sink.frames), decoder.error(), decoder.reason(), decoder.frames(),
                 decoder.stopped()};
}

// Frames are contiguous from offset 0 and each re-encodes to exactly its input bytes.
void checkReencoding(const Plan& plan, const Outcome& whole) {
  std::size_t offset = 0;
  std::string encoded;
  for (const Frame& f : whole.frames) {
    encoded.clear();
    encodeFrame(encoded, f.flags, f.status, f.id, f.body, plan.options.maxBody);
    require(plan.stream.substr(offset, encoded.size()) == encoded, "re-encoding differs");
    offset += encoded.size();
  }
  // Whatever follows the last frame is what made the stream end: clean only at the very end.
  require((whole.error == DecodeError::None) == (offset == plan.stream.size()),
          "a clean stream left bytes undecoded or an error at a frame boundary");
}

Plan parse(const std::uint8_t* data, std::size_t size) {
  Plan plan;
  if (size < 2) {
    plan.stream = std::string_view(reinterpret_cast<const char*>(data), size);
    return plan;
  }
  if ((data[0] & 0x80) != 0) plan.options.maxBody = data[0] & 0x7f;
  const std::size_t cutCount = std::min<std::size_t>(data[1] & 0x07, (size - 2) / 2);
  plan.stopAfter = data[1] >> 3;
  const std::size_t head = 2 + 2 * cutCount;
  plan.stream = std::string_view(reinterpret_cast<const char*>(data) + head, size - head);
  for (std::size_t i = 0; i < cutCount; ++i) {
    const std::size_t raw = (std::size_t{data[2 + 2 * i]} << 8) | data[3 + 2 * i];
    plan.cuts.push_back(raw % (plan.stream.size() + 1));
  }
  std::sort(plan.cuts.begin(), plan.cuts.end());
  return plan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Plan plan = parse(data, size);
  const Outcome whole = decode(plan, {}, 0);
  require(!whole.stopped, "stopped without a stopping sink");
  checkReencoding(plan, whole);
  require(decode(plan, plan.cuts, 0) == whole, "split stream decodes differently");
  if (plan.stream.size() <= 512) {
    std::vector<std::size_t> everyByte(plan.stream.size());
    for (std::size_t i = 0; i < everyByte.size(); ++i) everyByte[i] = i;
    require(decode(plan, everyByte, 0) == whole, "byte-by-byte stream decodes differently");
  }
  if (plan.stopAfter != 0) {
    const Outcome stopped = decode(plan, plan.cuts, plan.stopAfter);
    const std::size_t expected = std::min(plan.stopAfter, whole.frames.size());
    require(stopped.frames.size() == expected, "a stopping sink saw a wrong number of frames");
    require(std::equal(stopped.frames.begin(), stopped.frames.end(), whole.frames.begin()),
            "a stopping sink saw other frames");
    if (whole.frames.size() >= plan.stopAfter) {
      require(stopped.stopped && stopped.error == DecodeError::None, "stop not reported");
    }
  }
  return 0;
}
