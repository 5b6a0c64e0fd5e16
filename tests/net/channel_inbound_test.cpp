// The inbound stage (net/src/channel/inbound.h) and its frame stages on a fake context: each
// frame kind reaches exactly one stage, in the stages' order, and a read's frames are counted
// once at its end.
#include "channel/inbound.h"
#include "channel_fakes.h"
#include "support.h"

#include <memory>
#include <new>
#include <stdexcept>

namespace wbnet {

using fakes::FrameCtx;
using wheelbeat::net::detail::Inbound;

namespace {

// The inbound stage with its decoder, a recording context and a handler that counts (and
// throws what `toThrow` says on a frame whose body is "throw").
struct Reader final : FrameSink {
  int handled = 0;
  std::vector<std::uint64_t> handledIds;
  int toThrow = 0;  // 1: std::runtime_error, 2: std::bad_alloc
  FrameCtx ctx;
  Inbound inbound{CodecOptions{}, std::make_shared<const ChannelHandler>(ChannelHandler{
                                      .onFrame = [this](Channel& channel, const FrameView& f) {
                                        CHECK(channel.id() == 42);
                                        ++handled;
                                        handledIds.push_back(f.id);
                                        if (f.body != "throw") return;
                                        if (toThrow == 1) throw std::runtime_error("handler");
                                        if (toThrow == 2) throw std::bad_alloc();
                                      }})};
  FrameDecoder decoder{CodecOptions{}};

  bool onFrame(const FrameView& frame) override {
    inbound.dispatch(frame, ctx);
    return true;
  }
  DecodeError read(const std::string& bytes) { return inbound.read(bytes, decoder, *this); }
};

std::string frame(std::uint8_t flags, std::uint64_t id, std::string_view body = "b") {
  std::string out;
  encodeFrame(out, flags, kStatusOk, id, body, 1 << 20);
  return out;
}

}  // namespace

TEST_SUITE("net") {

TEST_CASE("inbound: READONLY is counted each time and reported once") {
  Reader r;
  std::string bytes;
  encodeReadOnlyEvent(bytes, 1);
  encodeReadOnlyEvent(bytes, 2);
  CHECK(r.read(bytes) == DecodeError::None);
  CHECK(r.ctx.readOnlyCalls == 1);
  CHECK(r.ctx.counters.readOnlyReceived.load() == 2);
  CHECK(r.inbound.stages().readOnly.isReadOnly());
  CHECK(r.handled == 0);
  r.inbound.stages().readOnly.reset();
  CHECK_FALSE(r.inbound.stages().readOnly.isReadOnly());
}

TEST_CASE("inbound: heartbeat requests are answered and responses timed and neither is handled") {
  Reader r;
  std::string bytes;
  encodeHeartbeatRequest(bytes, 5);
  encodeHeartbeatResponse(bytes, 6);
  encodeHeartbeatRequest(bytes, 7);
  r.ctx.acceptAnswers = true;
  CHECK(r.read(bytes) == DecodeError::None);
  CHECK(r.ctx.answers == std::vector<std::uint64_t>{5, 7});
  CHECK(r.ctx.answered == std::vector<std::uint64_t>{6});
  CHECK(r.inbound.stages().heartbeats.answered() == 2);
  CHECK(r.ctx.counters.heartbeatsAnswered.load() == 2);
  CHECK(r.handled == 0);

  r.ctx.acceptAnswers = false;  // the outbox is full: not counted as answered
  std::string more;
  encodeHeartbeatRequest(more, 8);
  CHECK(r.read(more) == DecodeError::None);
  CHECK(r.inbound.stages().heartbeats.answered() == 2);
}

TEST_CASE("inbound: two-way requests are counted until answered and every request is handled") {
  Reader r;
  const std::string bytes = frame(flag::kRequest | flag::kTwoWay, 1) + frame(flag::kRequest, 2) +
                            frame(flag::kRequest | flag::kTwoWay, 3);
  CHECK(r.read(bytes) == DecodeError::None);
  CHECK(r.handledIds == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(r.ctx.deltas == std::vector<std::int64_t>{1, 1});
  auto& handler = r.inbound.stages().handler;
  CHECK(handler.unanswered() == 2);
  CHECK(handler.answeredOne());
  CHECK(handler.dropUnanswered() == 1);
  CHECK_FALSE(handler.answeredOne());  // never below zero
  CHECK(handler.unanswered() == 0);
}

TEST_CASE("inbound: a response no request() waits for reaches the handler") {
  Reader r;
  CHECK(r.inbound.stages().tracker.get() == nullptr);
  CHECK(r.read(frame(0, 11)) == DecodeError::None);
  CHECK(r.handledIds == std::vector<std::uint64_t>{11});
  CHECK(r.ctx.deltas.empty());
  CHECK(r.inbound.stages().tracker.pending() == 0);
}

TEST_CASE("inbound: the tracker claims the response to its request and not another") {
  Env env;
  Reader r;
  std::vector<CallStatus> done;
  env.loop.call([&] {
    auto& tracker = r.inbound.stages().tracker.getOrCreate(env.loop, env.timer);
    CHECK(&tracker == &r.inbound.stages().tracker.getOrCreate(env.loop, env.timer));
    const RequestResult started =
        tracker.start([&](const CallResult& result) { done.push_back(result.status); }, 5s,
                      [](std::uint64_t) { return SendResult::Queued; });
    CHECK(r.inbound.stages().tracker.pending() == 1);
    CHECK(r.read(frame(0, started.id + 100) + frame(0, started.id)) == DecodeError::None);
    CHECK(r.handledIds == std::vector<std::uint64_t>{started.id + 100});  // not ours: handled
    CHECK(r.inbound.stages().tracker.pending() == 0);
  });
  CHECK(done == std::vector<CallStatus>{CallStatus::Ok});
}

TEST_CASE("inbound: a read's frames are counted once at its end") {
  Reader r;
  std::string bytes = frame(flag::kRequest, 1) + frame(flag::kRequest, 2);
  encodeHeartbeatRequest(bytes, 3);
  CHECK(r.read(bytes) == DecodeError::None);
  r.inbound.frameOut();
  CHECK(r.ctx.counters.framesIn.load() == 0);  // not yet: at the read's end
  CHECK(r.inbound.countFrames(r.ctx.counters));
  CHECK(r.ctx.counters.framesIn.load() == 3);
  CHECK(r.ctx.counters.framesOut.load() == 1);
  CHECK_FALSE(r.inbound.countFrames(r.ctx.counters));  // nothing since
  CHECK(r.ctx.counters.framesIn.load() == 3);
}

TEST_CASE("inbound: a handler's exception is logged and the next frames still arrive") {
  Reader r;
  r.toThrow = 1;
  CHECK(r.read(frame(flag::kRequest, 1, "throw") + frame(flag::kRequest, 2)) == DecodeError::None);
  CHECK(r.ctx.handlerErrors == 1);
  CHECK(r.handled == 2);
}

TEST_CASE("inbound: out of memory in a handler ends the read with OutOfMemory") {
  Reader r;
  r.toThrow = 2;
  CHECK(r.read(frame(flag::kRequest, 1, "throw") + frame(flag::kRequest, 2)) ==
        DecodeError::OutOfMemory);
  CHECK(r.handled == 1);
  CHECK_FALSE(r.inbound.inRead());
}

TEST_CASE("inbound: a bad magic number stops the read with a protocol close reason") {
  Reader r;
  std::string bytes = frame(flag::kRequest, 1);
  bytes[0] = 'X';
  CHECK(r.read(bytes) == DecodeError::BadMagic);
  const CloseReason why = Inbound::decodeFailure(r.decoder);
  CHECK(why.kind == CloseKind::Protocol);
  CHECK(fmt::format("{}", why) == "protocol: bad magic 0x58bb (expected: 0xdabb)");
  CHECK(r.handled == 0);
}

TEST_CASE("inbound: the end of the stream inside a frame is a counted protocol error") {
  Reader r;
  const std::string bytes = frame(flag::kRequest, 1);
  CHECK(r.read(bytes.substr(0, bytes.size() - 1)) == DecodeError::None);
  const CloseReason why = Inbound::readFailure(NetError(UV_EOF), r.decoder, r.ctx.counters);
  CHECK(why.kind == CloseKind::Protocol);
  CHECK(fmt::format("{}", why) == "protocol: stream ended after 16 of 17 bytes of a frame (id 1)");
  CHECK(r.ctx.counters.decodeErrors(DecodeError::TruncatedAtEof) == 1);

  Reader clean;
  const CloseReason eof = Inbound::readFailure(NetError(UV_EOF), clean.decoder, clean.ctx.counters);
  CHECK(eof.kind == CloseKind::Eof);
  CHECK(fmt::format("{}", eof) == "eof: the peer closed the connection");
  const CloseReason reset =
      Inbound::readFailure(NetError(UV_ECONNRESET), clean.decoder, clean.ctx.counters);
  CHECK(reset.kind == CloseKind::Reset);
  CHECK(fmt::format("{}", reset) == "reset: read: ECONNRESET (connection reset by peer)");
}

}  // TEST_SUITE("net")

}  // namespace wbnet
