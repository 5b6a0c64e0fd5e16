// The outbox stage (net/src/channel/outbox.h) on a fake wire: what it queues, where, what one
// flush writes, and how partial writes, refusals and errors are counted out.
#include "channel_fakes.h"
#include "support.h"

#include <memory>

namespace wbnet {

using fakes::FakeWire;
using wheelbeat::net::detail::Enqueued;
using wheelbeat::net::detail::Outbox;
using wheelbeat::net::detail::ReadOutbox;

namespace {

// Appends a one-way request frame with a `size`-byte body; returns its bytes.
std::string frameBytes(std::uint64_t id, std::size_t size) {
  std::string out;
  encodeFrame(out, flag::kRequest, 0, id, std::string(size, 'x'), 1 << 20);
  return out;
}

struct Box {
  Outbox outbox{1024};
  int holds = 0;
  std::shared_ptr<void> token = std::make_shared<int>(7);

  // Queued outside a read callback (any thread).
  Enqueued put(std::uint64_t id, std::size_t size) {
    const std::string bytes = frameBytes(id, size);
    return outbox.enqueue(
        bytes.size(), [&](std::string& out) { out += bytes; }, nullptr, this, false,
        [&] {
          ++holds;
          return token;
        });
  }
  Enqueued heartbeat(std::uint64_t id, std::int64_t decidedAt) {
    return outbox.enqueueHeartbeat(
        decidedAt, false, [id] { return id; },
        [&] {
          ++holds;
          return token;
        });
  }
};

}  // namespace

TEST_SUITE("net") {

TEST_CASE("outbox: the first frame posts a flush and holds the channel and later ones join it") {
  Box b;
  CHECK(b.put(1, 10) == Enqueued::Posted);
  CHECK(b.put(2, 10) == Enqueued::Queued);
  CHECK(b.holds == 1);
  CHECK(b.outbox.queuedBytes() == 2 * (kHeaderSize + 10));

  FakeWire wire;
  std::shared_ptr<void> hold;
  b.outbox.flush(wire, nullptr, &hold);
  CHECK(hold == b.token);  // the posted flush received the hold
  CHECK(wire.tries == 1);  // both frames in one write
  CHECK(wire.direct == frameBytes(1, 10) + frameBytes(2, 10));
  CHECK(wire.wroteBytes == 2 * (kHeaderSize + 10));
  CHECK(b.outbox.queuedBytes() == 0);
  CHECK(b.outbox.lastWrite() == wire.clock);
  CHECK(b.put(3, 1) == Enqueued::Posted);  // empty again: the next frame posts again
  CHECK(b.holds == 2);
}

TEST_CASE("outbox: a frame past maxSendQueue is refused and not counted") {
  Box b;
  CHECK(b.put(1, 1000 - kHeaderSize) == Enqueued::Posted);
  CHECK(b.put(2, 100) == Enqueued::QueueFull);
  CHECK(b.outbox.queuedBytes() == 1000);
}

TEST_CASE("outbox: a heartbeat alone waits aside and is written from its array") {
  Box b;
  CHECK(b.heartbeat(9, 400) == Enqueued::Posted);
  CHECK(b.outbox.queuedBytes() == kHeartbeatFrameSize);
  FakeWire wire;
  wire.clock = 1500;
  std::shared_ptr<void> hold;
  b.outbox.flush(wire, nullptr, &hold);
  const auto frame = heartbeatRequestFrame(9);
  CHECK(wire.direct == std::string(frame.data(), frame.size()));
  REQUIRE(wire.heartbeats.size() == 1);
  CHECK(wire.heartbeats[0] == std::pair<std::int64_t, std::int64_t>{1500, 400});
  CHECK(b.outbox.queuedBytes() == 0);
}

TEST_CASE("outbox: a heartbeat behind queued frames is encoded after them") {
  Box b;
  CHECK(b.put(1, 5) == Enqueued::Posted);
  CHECK(b.heartbeat(2, 0) == Enqueued::Queued);
  FakeWire wire;
  b.outbox.flush(wire, nullptr, nullptr);
  std::string expected = frameBytes(1, 5);
  encodeHeartbeatRequest(expected, 2);
  CHECK(wire.direct == expected);
  CHECK(wire.tries == 1);
  CHECK(wire.heartbeats.size() == 1);
}

TEST_CASE("outbox: frames queued in the channel's read go to the read buffer and leave alone") {
  Box b;
  ReadOutbox read;
  const std::string bytes = frameBytes(4, 3);
  const auto put = [&] {
    return b.outbox.enqueue(
        bytes.size(), [&](std::string& out) { out += bytes; }, &read, &b, true,
        [&] { return b.token; });
  };
  CHECK(put() == Enqueued::InRead);
  CHECK(put() == Enqueued::InRead);
  CHECK(read.owner == &b);
  CHECK(read.data == bytes + bytes);
  CHECK(b.holds == 0);
  FakeWire wire;
  b.outbox.flush(wire, &read, nullptr);  // the read's end
  CHECK(wire.direct == bytes + bytes);
  CHECK(wire.tries == 1);
  CHECK(read.owner == nullptr);
  CHECK(read.data.empty());
  CHECK(b.outbox.queuedBytes() == 0);
}

TEST_CASE("outbox: a read buffer held by another channel is not used") {
  Box b;
  ReadOutbox read;
  int other = 0;
  read.owner = &other;
  const Enqueued where = b.outbox.enqueue(
      3, [](std::string& out) { out += "abc"; }, &read, &b, true, [&] { return b.token; });
  CHECK(where == Enqueued::Queued);  // the outbox, flushed at the read's end: no post
  CHECK(read.data.empty());
}

TEST_CASE("outbox: the rest of a partial write goes to one queued write") {
  Box b;
  b.put(1, 20);
  FakeWire wire;
  wire.take = 5;
  b.outbox.flush(wire, nullptr, nullptr);
  const std::string all = frameBytes(1, 20);
  CHECK(wire.direct == all.substr(0, 5));
  REQUIRE(wire.queued.size() == 1);
  CHECK(wire.queued[0] == all.substr(5));
  CHECK(b.outbox.queuedBytes() == all.size() - 5);
  b.outbox.written(all.size() - 5, true, 2000);  // the write's completion
  CHECK(b.outbox.queuedBytes() == 0);
  CHECK(b.outbox.lastWrite() == 2000);
}

TEST_CASE("outbox: behind libuv's queue everything is queued") {
  Box b;
  b.heartbeat(3, 0);
  FakeWire wire;
  wire.tryError = UV_EAGAIN;
  b.outbox.flush(wire, nullptr, nullptr);
  CHECK(wire.direct.empty());
  REQUIRE(wire.queued.size() == 1);
  CHECK(wire.queued[0].size() == kHeartbeatFrameSize);
  CHECK(b.outbox.queuedBytes() == kHeartbeatFrameSize);
  b.outbox.written(kHeartbeatFrameSize, false, 0);  // cancelled: counted out, no write time
  CHECK(b.outbox.queuedBytes() == 0);
}

TEST_CASE("outbox: a write error closes once and counts everything out") {
  Box b;
  b.put(1, 8);
  FakeWire wire;
  wire.tryError = UV_EPIPE;
  b.outbox.flush(wire, nullptr, nullptr);
  CHECK(wire.failures == std::vector<int>{UV_EPIPE});
  CHECK(wire.queued.empty());
  CHECK(b.outbox.queuedBytes() == 0);

  b.put(2, 8);
  wire.tryError = UV_EAGAIN;
  wire.queueError = UV_ENOMEM;
  b.outbox.flush(wire, nullptr, nullptr);
  CHECK(wire.failures == std::vector<int>{UV_EPIPE, UV_ENOMEM});
  CHECK(b.outbox.queuedBytes() == 0);
}

TEST_CASE("outbox: nothing is written without a connection and the bytes are dropped") {
  Box b;
  b.put(1, 8);
  b.heartbeat(2, 0);
  ReadOutbox read;
  CHECK(b.outbox.enqueue(
            2, [](std::string& out) { out += "zz"; }, &read, &b, true, [&] { return b.token; }) ==
        Enqueued::InRead);
  CHECK(b.outbox.queuedBytes() == kHeaderSize + 8 + kHeartbeatFrameSize + 2);
  FakeWire wire;
  wire.open = false;
  b.outbox.flush(wire, &read, nullptr);
  CHECK(wire.tries == 0);
  CHECK(wire.heartbeats.empty());
  CHECK(read.data.empty());
  CHECK(read.owner == nullptr);
  CHECK(b.outbox.queuedBytes() == 0);
}

TEST_CASE("outbox: dropAll empties the outbox and the aside heartbeat") {
  Box b;
  b.heartbeat(1, 0);
  b.put(2, 4);
  CHECK(b.outbox.queuedBytes() == kHeartbeatFrameSize + kHeaderSize + 4);
  b.outbox.dropAll();
  CHECK(b.outbox.queuedBytes() == 0);
  FakeWire wire;
  b.outbox.flush(wire, nullptr, nullptr);
  CHECK(wire.tries == 0);
  CHECK(wire.heartbeats.empty());
}

TEST_CASE("outbox: a refused post gives the hold back") {
  Box b;
  CHECK(b.put(1, 1) == Enqueued::Posted);
  std::shared_ptr<void> hold = b.outbox.cancelPost();
  CHECK(hold == b.token);
  CHECK(b.put(2, 1) == Enqueued::Queued);  // the outbox is not empty: the frame waits
  CHECK(b.holds == 1);
}

}  // TEST_SUITE("net")

}  // namespace wbnet
