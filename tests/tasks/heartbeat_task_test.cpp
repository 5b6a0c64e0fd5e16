// HeartbeatTimerTask over a scripted timeline (heartbeat 3 s, a check every 1 s, 10 ms ticks):
// a heartbeat exactly when read- or write-idle reaches the heartbeat, never while traffic flows,
// never while disconnected; counted in metrics and reported to the listener.
#include "fake_channel.h"

#include <doctest/doctest.h>

#include <memory>

using namespace wbtest;

namespace {

struct HeartbeatRig {
  Rig rig;
  std::shared_ptr<FakeChannel> ch = rig.channel();
  std::shared_ptr<RecordingListener> listener = std::make_shared<RecordingListener>();
  std::shared_ptr<TaskMetrics> metrics = std::make_shared<TaskMetrics>();
  std::shared_ptr<HeartbeatTimerTask> task;

  explicit HeartbeatRig(HeartbeatOptions options = testOptions()) {
    task = std::make_shared<HeartbeatTimerTask>(rig.timer(), ch, options, listener, metrics);
    task->start(task->checkInterval());
  }
};

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("heartbeat: the check interval is heartbeat / 3") {
  Rig rig;
  auto ch = rig.channel();
  CHECK(HeartbeatTimerTask(rig.timer(), ch, testOptions()).checkInterval() == 1s);
  HeartbeatOptions dubbo;  // 60s
  CHECK(HeartbeatTimerTask(rig.timer(), ch, dubbo).checkInterval() == 20s);
  HeartbeatOptions tiny;
  tiny.interval = 100ms;  // not raised to 1s as Dubbo does
  CHECK(HeartbeatTimerTask(rig.timer(), ch, tiny).checkInterval() == 33'333'333ns);
}

TEST_CASE("heartbeat: none while traffic flows both ways") {
  HeartbeatRig h;
  h.rig.runUntil(60s, [&] { h.ch->traffic(); });
  CHECK(h.ch->heartbeats() == 0);
  CHECK(h.task->runs() == 60);
  CHECK(h.metrics->snapshot().heartbeatsSent == 0);
  CHECK(h.rig.pending() == 1);
}

TEST_CASE("heartbeat: sent exactly when read idle reaches heartbeat") {
  HeartbeatRig h;
  // Writes flow all along; reads stop after the tick at 10s.
  h.rig.runUntil(10s, [&] { h.ch->traffic(); });
  h.rig.runUntil(12990ms, [&] { h.ch->written(); });
  CHECK(h.ch->heartbeats() == 0);  // the check at 12s saw 2s of read idle
  h.rig.runUntil(13s, [&] { h.ch->written(); });
  CHECK(h.ch->heartbeats() == 1);  // the check at 13s saw exactly 3s
  // No answer comes: every check from then on sends one (14s ... 20s).
  h.rig.runUntil(20s, [&] { h.ch->written(); });
  CHECK(h.ch->heartbeats() == 8);
  CHECK(h.metrics->snapshot().heartbeatsSent == 8);
  CHECK(h.listener->heartbeats() == 8);
}

TEST_CASE("heartbeat: write idle alone triggers it") {
  HeartbeatRig h;
  // Reads flow; nothing is written but the heartbeats, which stamp the last write.
  h.rig.runUntil(2990ms, [&] { h.ch->read(); });
  CHECK(h.ch->heartbeats() == 0);
  h.rig.runUntil(3s, [&] { h.ch->read(); });
  CHECK(h.ch->heartbeats() == 1);
  h.rig.runUntil(30s, [&] { h.ch->read(); });
  CHECK(h.ch->heartbeats() == 10);  // 3s, 6s, ..., 30s
  CHECK(h.metrics->snapshot().heartbeatsSent == 10);
  CHECK(h.metrics->snapshot().runs == 30);
}

TEST_CASE("heartbeat: an idle channel with an answering peer gets one per heartbeat") {
  HeartbeatRig h;
  h.ch->echo = true;
  h.rig.runUntil(30s);
  CHECK(h.ch->heartbeats() == 10);
  CHECK(h.listener->heartbeats() == 10);
}

TEST_CASE("heartbeat: an idle channel whose peer never answers gets one per check") {
  HeartbeatRig h;
  h.rig.runUntil(30s);
  CHECK(h.ch->heartbeats() == 28);  // 3s, 4s, ..., 30s: read idle only grows
}

TEST_CASE("heartbeat: traffic resuming stops the heartbeats") {
  HeartbeatRig h;
  h.rig.runUntil(5s);  // idle: 3s, 4s, 5s
  CHECK(h.ch->heartbeats() == 3);
  h.rig.runUntil(30s, [&] { h.ch->traffic(); });
  CHECK(h.ch->heartbeats() == 3);
}

TEST_CASE("heartbeat: never while disconnected") {
  HeartbeatRig h;
  h.ch->setConnected(false);
  h.rig.runUntil(30s);
  CHECK(h.ch->heartbeats() == 0);
  CHECK(h.task->runs() == 30);  // the chain goes on: the channel may come back
  h.ch->setConnected(true);     // stamps both at 30s
  h.rig.runUntil(32990ms);
  CHECK(h.ch->heartbeats() == 0);
  h.rig.runUntil(33s);
  CHECK(h.ch->heartbeats() == 1);
}

TEST_CASE("heartbeat: a throwing sendHeartbeat is counted and the chain goes on") {
  HeartbeatRig h;
  h.ch->throwOnHeartbeat = true;
  h.rig.runUntil(5s);
  CHECK(h.metrics->snapshot().taskErrors == 3);  // 3s, 4s, 5s
  CHECK(h.metrics->snapshot().heartbeatsSent == 0);
  CHECK(h.listener->errors().size() == 3);
  h.ch->throwOnHeartbeat = false;
  h.rig.runUntil(6s);
  CHECK(h.ch->heartbeats() == 1);
  CHECK(h.rig.pending() == 1);
}

TEST_CASE("heartbeat: a listener that throws does not stop the heartbeats") {
  HeartbeatRig h;
  h.listener->throwing = true;
  h.ch->echo = true;
  h.rig.runUntil(30s);
  CHECK(h.ch->heartbeats() == 10);
  CHECK(h.metrics->snapshot().taskErrors == 0);
}

}  // TEST_SUITE("tasks")
