// CloseTimerTask (closeTimeout 9 s, 10 ms ticks; the first check at 3 s, then each at the
// channel's deadline, or every 3 s while input waits unread): closes a channel read-idle or
// write-idle beyond the close timeout, not before, and then ends.
#include "fake_channel.h"

#include <doctest/doctest.h>

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
  c.rig.runUntil(9s, [&] { c.ch->written(); });
  CHECK(c.ch->closes().empty());  // at 9s read idle is exactly 9s: not beyond
  c.rig.runUntil(9010ms, [&] { c.ch->written(); });
  REQUIRE(c.ch->closes().size() == 1);  // the first tick after the deadline
  CHECK(c.ch->closes()[0].reason == "read idle 9.01s > closeTimeout 9s");
  CHECK(c.ch->closes()[0].at - c.rig.origin() == 9010ms);
  CHECK(c.listener->closes() == std::vector<std::string>{"read idle 9.01s > closeTimeout 9s"});
  CHECK(c.listener->ended() == std::vector<std::string>{"closed idle channel"});
  CHECK(c.metrics->snapshot().closes == 1);
  CHECK(c.task->isEnded());
  CHECK(c.rig.pending() == 0);
  c.rig.runUntil(30s);
  CHECK(c.ch->closes().size() == 1);
  CHECK(c.task->runs() == 2);  // at 3s (read idle 3s: the deadline is 9s away) and at 9.01s
}

TEST_CASE("close: a write-idle channel is closed after closeTimeout") {
  CloseRig c;
  c.rig.runUntil(9s, [&] { c.ch->read(); });
  CHECK(c.ch->closes().empty());
  c.rig.runUntil(9010ms, [&] { c.ch->read(); });
  REQUIRE(c.ch->closes().size() == 1);
  CHECK(c.ch->closes()[0].reason == "write idle 9.01s > closeTimeout 9s");
  CHECK(c.task->isEnded());
}

TEST_CASE("close: the idle time counts from the last frame") {
  CloseRig c;
  c.rig.runUntil(5s, [&] { c.ch->traffic(); });  // silent from 5s on
  c.rig.runUntil(14s);
  CHECK(c.ch->closes().empty());  // checks at 3s (idle 0) and 12.01s (idle 7.01s)
  CHECK(c.task->runs() == 2);
  c.rig.runUntil(14010ms);
  REQUIRE(c.ch->closes().size() == 1);  // idle 9.01s; both directions: read is named
  CHECK(c.ch->closes()[0].reason == "read idle 9.01s > closeTimeout 9s");
}

TEST_CASE("close: never while traffic flows") {
  CloseRig c;
  c.rig.runUntil(60s, [&] { c.ch->traffic(); });
  CHECK(c.ch->closes().empty());
  CHECK(c.task->runs() == 7);  // 3s, then each deadline 9s + one tick later: 12.01s .. 57.06s
  CHECK(c.metrics->snapshot().closes == 0);
  CHECK(c.rig.pending() == 1);
}

TEST_CASE("close: deferred while input waits unread, then closed once it is gone") {
  CloseRig c;
  c.ch->unreadInput = true;  // the peer sent; the channel's loop has not read it yet
  // Checks at 3s (idle 3s), at the deadline 9.01s, then every 3s while deferred: 12.01s ..
  c.rig.runUntil(21s);
  CHECK(c.ch->closes().empty());
  CHECK(c.metrics->snapshot().idleDeferred == 4);
  CHECK(c.metrics->snapshot().closes == 0);
  CHECK(c.listener->closes().empty());
  CHECK_FALSE(c.task->isEnded());
  c.ch->unreadInput = false;  // nothing pending any more and still no read stamped: idle
  c.rig.runUntil(24s);
  REQUIRE(c.ch->closes().size() == 1);
  CHECK(c.ch->closes()[0].at - c.rig.origin() == 21010ms);               // the next check
  CHECK(c.ch->closes()[0].reason == "read idle 21s > closeTimeout 9s");  // 21.01s, 3 digits
  CHECK(c.metrics->snapshot().idleDeferred == 4);
  CHECK(c.metrics->snapshot().closes == 1);
  CHECK(c.task->isEnded());
}

TEST_CASE("close: unread input is not asked about while the channel is fresh") {
  CloseRig c;
  c.ch->unreadInput = true;
  c.rig.runUntil(30s, [&] { c.ch->traffic(); });
  CHECK(c.metrics->snapshot().idleDeferred == 0);
  CHECK(c.task->runs() == 3);  // 3s, 12.01s, 21.02s
}

TEST_CASE("close: an explicit closeTimeout") {
  HeartbeatOptions o = testOptions();
  o.closeTimeout = 1500ms;  // the first check at 500ms, then at the deadline
  CloseRig c(o);
  c.rig.runUntil(1500ms);
  CHECK(c.ch->closes().empty());
  c.rig.runUntil(1510ms);
  REQUIRE(c.ch->closes().size() == 1);
  CHECK(c.ch->closes()[0].reason == "read idle 1.51s > closeTimeout 1.5s");
}

}  // TEST_SUITE("tasks")
