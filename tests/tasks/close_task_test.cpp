// CloseTimerTask (closeTimeout 9 s, a check every 3 s, 10 ms ticks; checks that could not act are
// skipped): closes a channel read-idle or write-idle beyond the close timeout, not before, and
// then ends.
#include "bursty_traffic.h"
#include "fake_channel.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using namespace wbtest;

namespace {

struct CloseRig {
  Rig rig;
  std::shared_ptr<FakeChannel> ch = rig.channel();
  std::shared_ptr<RecordingListener> listener = std::make_shared<RecordingListener>();
  std::shared_ptr<TaskMetrics> metrics = std::make_shared<TaskMetrics>();
  std::shared_ptr<CloseTimerTask> task;

  explicit CloseRig(HeartbeatOptions options = testOptions()) {
    task = std::make_shared<CloseTimerTask>(rig.timer(), ch, options, listener, metrics);
    task->start(task->checkInterval());
  }
};

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("close: the check interval is closeTimeout / 3") {
  CloseRig c;
  CHECK(c.task->checkInterval() == 3s);  // closeTimeout 0 = idleTimeout 0 = 3 * 3s
  HeartbeatOptions o = testOptions();
  o.idleTimeout = 12s;
  CHECK(CloseTimerTask(c.rig.timer(), c.ch, o).checkInterval() == 4s);
  o.closeTimeout = 6s;
  CHECK(CloseTimerTask(c.rig.timer(), c.ch, o).checkInterval() == 2s);
}

TEST_CASE("close: a read-idle channel is closed after closeTimeout and not before") {
  CloseRig c;
  // Writes flow, nothing is read.
  c.rig.runUntil(11990ms, [&] { c.ch->written(); });
  CHECK(c.ch->closes().empty());  // at 9s read idle is exactly 9s: not beyond
  c.rig.runUntil(12s, [&] { c.ch->written(); });
  REQUIRE(c.ch->closes().size() == 1);
  CHECK(c.ch->closes()[0].reason == "read idle 12s > closeTimeout 9s");
  CHECK(c.ch->closes()[0].at - c.rig.origin() == 12s);
  CHECK(c.listener->closes() == std::vector<std::string>{"read idle 12s > closeTimeout 9s"});
  CHECK(c.listener->ended() == std::vector<std::string>{"closed idle channel"});
  CHECK(c.metrics->snapshot().closes == 1);
  CHECK(c.task->isEnded());
  CHECK(c.rig.pending() == 0);
  c.rig.runUntil(30s);
  CHECK(c.ch->closes().size() == 1);
  // At 3s read idle is 3s: the checks at 6s and 9s could not act (idle 6s, 9s: not beyond 9s).
  CHECK(c.task->runs() == 2);
}

TEST_CASE("close: a write-idle channel is closed after closeTimeout") {
  CloseRig c;
  c.rig.runUntil(11990ms, [&] { c.ch->read(); });
  CHECK(c.ch->closes().empty());
  c.rig.runUntil(12s, [&] { c.ch->read(); });
  REQUIRE(c.ch->closes().size() == 1);
  CHECK(c.ch->closes()[0].reason == "write idle 12s > closeTimeout 9s");
  CHECK(c.task->isEnded());
}

TEST_CASE("close: the idle time counts from the last frame") {
  CloseRig c;
  c.rig.runUntil(5s, [&] { c.ch->traffic(); });  // silent from 5s on
  c.rig.runUntil(14990ms);
  CHECK(c.ch->closes().empty());  // checks at 6s, 9s, 12s: idle 1s, 4s, 7s
  c.rig.runUntil(15s);
  REQUIRE(c.ch->closes().size() == 1);  // idle 10s; both directions: read is named
  CHECK(c.ch->closes()[0].reason == "read idle 10s > closeTimeout 9s");
}

TEST_CASE("close: never while traffic flows") {
  CloseRig c;
  c.rig.runUntil(60s, [&] { c.ch->traffic(); });
  CHECK(c.ch->closes().empty());
  CHECK(c.task->runs() == 5);  // 3s, then every fourth: 15s, 27s, 39s, 51s (idle 0 at each)
  CHECK(c.metrics->snapshot().closes == 0);
  CHECK(c.rig.pending() == 1);
}

TEST_CASE("close: deferred while input waits unread, then closed once it is gone") {
  CloseRig c;
  c.ch->unreadInput = true;  // the peer sent; the channel's loop has not read it yet
  c.rig.runUntil(21s);       // checks at 3s .. 21s; at 12s, 15s, 18s, 21s idle 12s .. 21s
  CHECK(c.ch->closes().empty());
  CHECK(c.metrics->snapshot().idleDeferred == 4);
  CHECK(c.metrics->snapshot().closes == 0);
  CHECK(c.listener->closes().empty());
  CHECK_FALSE(c.task->isEnded());
  c.ch->unreadInput = false;  // nothing pending any more and still no read stamped: idle
  c.rig.runUntil(24s);
  REQUIRE(c.ch->closes().size() == 1);
  CHECK(c.ch->closes()[0].reason == "read idle 24s > closeTimeout 9s");
  CHECK(c.metrics->snapshot().idleDeferred == 4);
  CHECK(c.metrics->snapshot().closes == 1);
  CHECK(c.task->isEnded());
}

TEST_CASE("close: unread input is not asked about while the channel is fresh") {
  CloseRig c;
  c.ch->unreadInput = true;
  c.rig.runUntil(30s, [&] { c.ch->traffic(); });
  CHECK(c.metrics->snapshot().idleDeferred == 0);
  CHECK(c.task->runs() == 3);  // 3s, 15s, 27s
}

// The checks skipped while the channel is healthy change no decision: under seeded bursty reads
// and writes, the channel is closed exactly when a check every 3 s would have closed it, at the
// first multiple of 3 s at which read or write idle is > 9 s.
TEST_CASE("close: skipping the checks that could not act changes no decision") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    CloseRig c;
    BurstyTraffic reads(seed);
    BurstyTraffic writes(seed + 1000);
    ns lastRead{0}, lastWrite{0}, expected{0};
    while (expected == 0s && c.rig.elapsed() < 120s) {
      const bool read = reads.next();
      const bool wrote = writes.next();
      c.rig.runUntil(c.rig.elapsed() + c.rig.tick(), [&] {
        if (read) c.ch->read();
        if (wrote) c.ch->written();
      });
      const ns t = c.rig.elapsed();
      if (read) lastRead = t;
      if (wrote) lastWrite = t;
      if (t % 3s == 0s && (t - lastRead > 9s || t - lastWrite > 9s)) expected = t;
    }
    REQUIRE(expected > 0s);  // every pattern holds a silence beyond the timeout within 120 s
    REQUIRE(c.ch->closes().size() == 1);
    CHECK(c.ch->closes()[0].at - c.rig.origin() == expected);
    CHECK(c.task->runs() < expected / 3s);  // fewer than a check every 3 s
  }
}

TEST_CASE("close: an explicit closeTimeout") {
  HeartbeatOptions o = testOptions();
  o.closeTimeout = 1500ms;  // checks every 500ms
  CloseRig c(o);
  c.rig.runUntil(1500ms);
  CHECK(c.ch->closes().empty());
  c.rig.runUntil(2s);
  REQUIRE(c.ch->closes().size() == 1);
  CHECK(c.ch->closes()[0].reason == "read idle 2s > closeTimeout 1.5s");
}

}  // TEST_SUITE("tasks")
