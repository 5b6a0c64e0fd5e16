// The heartbeat probe stage (net/src/channel/heartbeat_probe.h) with a real outbox on a fake
// wire: ids, the wait from decision to write, the round trip, and the φ detector's feed.
#include "channel/heartbeat_probe.h"
#include "channel_fakes.h"
#include "support.h"

#include <memory>

namespace wbnet {

using fakes::FakeWire;
using wheelbeat::net::detail::Enqueued;
using wheelbeat::net::detail::HeartbeatProbe;
using wheelbeat::net::detail::Outbox;

namespace {

struct Probe {
  explicit Probe(wheelbeat::tasks::DetectorKind kind = wheelbeat::tasks::DetectorKind::Fixed)
      : probe([kind] {
          wheelbeat::tasks::HeartbeatOptions o;
          o.detector = kind;
          return o;
        }()) {}
  Outbox outbox{4096};
  HeartbeatProbe probe;
  std::shared_ptr<void> token = std::make_shared<int>(1);

  Enqueued send(std::int64_t decidedAt) {
    return probe.send(outbox, decidedAt, false, [&] { return token; });
  }
  // The flush at `now`, writing through the probe as the channel does.
  void flushAt(std::int64_t now) {
    struct Wire : FakeWire {
      HeartbeatProbe* p = nullptr;
      void heartbeatWritten(std::int64_t at, std::int64_t decidedAt) noexcept {
        p->written(at, decidedAt);
      }
    } wire;
    wire.p = &probe;
    wire.clock = now;
    std::shared_ptr<void> hold;
    outbox.flush(wire, nullptr, &hold);
  }
};

}  // namespace

TEST_SUITE("net") {

TEST_CASE("probe: ids count up from 1 and only the last one written is timed once") {
  Probe p;
  CHECK(p.send(100) == Enqueued::Posted);
  CHECK(p.probe.lastId() == 1);
  p.flushAt(250);
  CHECK_FALSE(p.probe.answered(7, 300).has_value());  // none of ours
  const auto rtt = p.probe.answered(1, 1250);
  REQUIRE(rtt.has_value());
  CHECK(*rtt == 1000);
  CHECK(p.probe.lastRtt() == ns(1000));
  CHECK(p.probe.lastSendWait() == ns(150));
  CHECK_FALSE(p.probe.answered(1, 1300).has_value());  // timed once

  CHECK(p.send(2000) == Enqueued::Posted);
  p.flushAt(2010);
  CHECK(p.probe.lastId() == 2);
  CHECK_FALSE(p.probe.answered(1, 2100).has_value());  // an older request's answer
  CHECK(p.probe.answered(2, 2110) == std::optional<std::int64_t>(100));
  CHECK(p.probe.lastSendWait() == ns(10));
}

TEST_CASE("probe: an answer before the write is not timed") {
  Probe p;
  p.send(0);
  CHECK_FALSE(p.probe.answered(1, 10).has_value());  // queued, not written yet
  CHECK(p.probe.lastRtt() == ns(0));
}

TEST_CASE("probe: a fixed detector keeps no phi detector") {
  Probe p;
  CHECK(p.probe.detector() == nullptr);
  p.probe.fed(ns(5));  // nothing to feed
  p.probe.restart(ns(6));
}

TEST_CASE("probe: the phi detector is fed by reads and starts over on a new connection") {
  Probe p(wheelbeat::tasks::DetectorKind::Phi);
  REQUIRE(p.probe.detector() != nullptr);
  p.probe.fed(ns(0));
  p.probe.fed(ns(100'000'000));
  p.probe.fed(ns(200'000'000));
  CHECK(p.probe.detector()->stats().samples == 2);  // the first read only sets the start
  p.probe.restart(ns(300'000'000));
  CHECK(p.probe.detector()->stats().samples == 0);
  p.probe.fed(ns(400'000'000));
  CHECK(p.probe.detector()->stats().samples == 1);
}

}  // TEST_SUITE("net")

}  // namespace wbnet
