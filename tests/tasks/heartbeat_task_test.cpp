// HeartbeatTimerTask over a scripted timeline (heartbeat 3 s, check interval 1 s, 10 ms ticks):
// a heartbeat exactly when read- or write-idle reaches the heartbeat, never while traffic flows,
// never while disconnected; counted in metrics and reported to the listener; checks re-armed for
// the channel's own deadline (exact run counts).
#include "fake_channel.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <vector>

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

// Stands in for a channel's loop that writes each queued heartbeat `ticks` ticks after the
// wheel's decision, the peer answering at once: pass loop() to runUntil() (run before each tick).
struct LateLoop {
  HeartbeatRig& h;
  int ticks = 1;
  std::uint64_t written = 0;
  int waited = 0;

  LateLoop(HeartbeatRig& rig, int writeAfterTicks) : h(rig), ticks(writeAfterTicks) {
    h.ch->echo = true;         // the peer answers each heartbeat
    h.ch->writesLater = true;  // sendHeartbeat() stamps nothing: this loop writes
  }

  std::function<void()> loop() {
    return [this] {
      if (h.ch->heartbeats() == written) return;
      if (++waited < ticks) return;
      waited = 0;
      written = h.ch->heartbeats();
      h.ch->traffic();
    };
  }
};

// Channels connected together at 0, their peers answering at once, each task with its own seed:
// the times of each channel's first and second heartbeat (the tick that sent it).
struct Fleet {
  Rig rig;
  std::vector<std::shared_ptr<FakeChannel>> chs;
  std::vector<std::shared_ptr<HeartbeatTimerTask>> tasks;
  std::vector<std::vector<ns>> sent;

  Fleet(std::size_t n, bool spread) : sent(n) {
    for (std::size_t i = 0; i < n; ++i) {
      HeartbeatOptions o = testOptions();
      o.spreadFirst = spread;
      o.seed = 1000 + i;
      chs.push_back(rig.channel());
      chs.back()->echo = true;
      tasks.push_back(std::make_shared<HeartbeatTimerTask>(rig.timer(), chs.back(), o));
      tasks.back()->start(tasks.back()->checkInterval());
    }
  }
  // Runs to `t`, noting each heartbeat at the tick that sent it.
  void runUntil(ns t) {
    rig.runUntil(t, [this] {
      for (std::size_t i = 0; i < chs.size(); ++i) {
        while (sent[i].size() < chs[i]->heartbeats()) sent[i].push_back(rig.elapsed() - rig.tick());
      }
    });
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
  // 1s, then every 3s (4s, 7s, ..., 58s): each check finds the channel fresh and sleeps until
  // its deadline, heartbeat after the last read and write; no check every second.
  CHECK(h.task->runs() == 20);
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
  // No answer comes: one more per heartbeat interval (16s, 19s), as Dubbo's Netty transport sends
  // them, not one per check.
  h.rig.runUntil(20s, [&] { h.ch->written(); });
  CHECK(h.ch->heartbeats() == 3);
  CHECK(h.metrics->snapshot().heartbeatsSent == 3);
  CHECK(h.listener->heartbeats() == 3);
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
  CHECK(h.metrics->snapshot().runs == 11);  // 1s, then each send, which sleeps a heartbeat
}

TEST_CASE("heartbeat: an idle channel with an answering peer gets one per heartbeat") {
  HeartbeatRig h;
  h.ch->echo = true;
  h.rig.runUntil(30s);
  CHECK(h.ch->heartbeats() == 10);
  CHECK(h.listener->heartbeats() == 10);
}

TEST_CASE("heartbeat: an idle channel whose peer never answers gets one per heartbeat interval") {
  HeartbeatRig h;
  h.rig.runUntil(30s);
  CHECK(h.ch->heartbeats() == 10);  // 3s, 6s, ..., 30s: read idle only grows, one per heartbeat
  CHECK(h.task->runs() == 11);      // the check at 1s, then the sends
}

// A real channel's heartbeat is written by its loop after the decision: the write's own deadline
// is then after decision + heartbeat, and the task sleeps to the first tick after that instant.
TEST_CASE(
    "heartbeat: a heartbeat the loop writes within a tick is followed by one run per "
    "heartbeat") {
  HeartbeatRig h;
  LateLoop late(h, 1);  // before each tick: the loop writes what was queued, the peer answers
  const auto loop = late.loop();
  h.rig.runUntil(3s, loop);
  CHECK(h.ch->heartbeats() == 1);  // decided at 3s, written and answered at 3.01s
  h.rig.runUntil(6000ms, loop);
  CHECK(h.ch->heartbeats() == 1);  // at 6s the channel has been idle 2.99s: not yet
  h.rig.runUntil(6010ms, loop);
  CHECK(h.ch->heartbeats() == 2);  // the first tick after 6s: idle 3s
  h.rig.runUntil(30s, loop);
  CHECK(h.ch->heartbeats() == 9);  // every 3.01s: 3s, 6.01s, ..., 27.07s
  CHECK(h.task->runs() == 10);     // the check at 1s, then the sends alone
}

// A loop later than a tick: the run at the first tick after decision + heartbeat finds what is
// left and re-arms for it once; never a heartbeat before the channel is idle a whole heartbeat.
TEST_CASE(
    "heartbeat: a heartbeat written later than a tick costs one run more, never an early "
    "one") {
  HeartbeatRig h;
  LateLoop late(h, 2);  // writes each heartbeat two ticks after its decision
  const auto slowLoop = late.loop();
  h.rig.runUntil(3s, slowLoop);
  CHECK(h.ch->heartbeats() == 1);  // decided at 3s, written at 3.02s
  h.rig.runUntil(6010ms, slowLoop);
  CHECK(h.ch->heartbeats() == 1);  // at 6.01s idle 2.99s: re-armed for 6.02s
  h.rig.runUntil(6020ms, slowLoop);
  CHECK(h.ch->heartbeats() == 2);
  CHECK(h.task->runs() == 4);  // 1s, 3s, 6.01s, 6.02s
}

TEST_CASE("heartbeat: traffic resuming stops the heartbeats") {
  HeartbeatRig h;
  h.rig.runUntil(6s);  // idle: 3s, 6s
  CHECK(h.ch->heartbeats() == 2);
  h.rig.runUntil(30s, [&] { h.ch->traffic(); });
  CHECK(h.ch->heartbeats() == 2);
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

TEST_CASE("heartbeat: each channel beats at its own deadline, not on a shared grid of checks") {
  // Three channels on one wheel, their tasks started together (one grid of 1 s checks), their
  // last traffic at 0.5s, 1.25s and 2s, their peers answering every heartbeat at once. Checked
  // every second, all three would beat at 4s and 5s; re-armed for their own deadlines they beat
  // 3s after their own last traffic: 3.5s, 4.25s and 5s, then every 3s from there.
  Rig rig;
  const std::array<ns, 3> lastTraffic{500ms, 1250ms, 2s};
  std::vector<std::shared_ptr<FakeChannel>> chs;
  std::vector<std::shared_ptr<HeartbeatTimerTask>> tasks;
  for (std::size_t i = 0; i < lastTraffic.size(); ++i) {
    chs.push_back(rig.channel());
    chs.back()->echo = true;
    tasks.push_back(std::make_shared<HeartbeatTimerTask>(rig.timer(), chs.back(), testOptions()));
    tasks.back()->start(tasks.back()->checkInterval());
  }
  const auto traffic = [&] {
    for (std::size_t i = 0; i < chs.size(); ++i) {
      if (rig.elapsed() <= lastTraffic[i]) chs[i]->traffic();
    }
  };
  const auto beats = [&] {
    return std::array<int, 3>{static_cast<int>(chs[0]->heartbeats()),
                              static_cast<int>(chs[1]->heartbeats()),
                              static_cast<int>(chs[2]->heartbeats())};
  };
  using Beats = std::array<int, 3>;
  rig.runUntil(3490ms, traffic);
  CHECK(beats() == Beats{0, 0, 0});
  rig.runUntil(3500ms, traffic);
  CHECK(beats() == Beats{1, 0, 0});
  rig.runUntil(4240ms, traffic);
  CHECK(beats() == Beats{1, 0, 0});
  rig.runUntil(4250ms, traffic);
  CHECK(beats() == Beats{1, 1, 0});
  rig.runUntil(4990ms, traffic);
  CHECK(beats() == Beats{1, 1, 0});
  rig.runUntil(5s, traffic);
  CHECK(beats() == Beats{1, 1, 1});
  rig.runUntil(6490ms, traffic);
  CHECK(beats() == Beats{1, 1, 1});
  rig.runUntil(6500ms, traffic);
  CHECK(beats() == Beats{2, 1, 1});
  rig.runUntil(30s, traffic);
  // 3.5s + 3k <= 30s: 9; 4.25s + 3k: 9; 5s + 3k: 9.
  CHECK(beats() == Beats{9, 9, 9});
  // Runs: the check at 1s sleeps until the deadline it sees (channel 0: 3.5s; channels 1 and 2,
  // busy then: 4s, where each finds its true deadline); then per heartbeat the send alone, which
  // sleeps a whole heartbeat.
  CHECK(tasks[0]->runs() == 1 + 9);
  CHECK(tasks[1]->runs() == 2 + 9);
  CHECK(tasks[2]->runs() == 2 + 9);
}

TEST_CASE("heartbeat: a listener that throws does not stop the heartbeats") {
  HeartbeatRig h;
  h.listener->throwing = true;
  h.ch->echo = true;
  h.rig.runUntil(30s);
  CHECK(h.ch->heartbeats() == 10);
  CHECK(h.metrics->snapshot().taskErrors == 0);
}

TEST_CASE("heartbeat: spreadFirst spreads the first heartbeats of channels connected together") {
  // 200 channels connect at 0 (heartbeat 3 s, first check at 1 s). Dubbo's rule alone beats all
  // of them at 3 s, and every 3 s after, in one tick; spread, each first beats at its own point
  // of [1 s, 3 s] and keeps that phase.
  Fleet dubbo(200, false);
  dubbo.runUntil(3010ms);
  for (const auto& times : dubbo.sent) CHECK(times == std::vector<ns>{3s});

  Fleet fleet(200, true);
  fleet.runUntil(6s + 20ms);
  std::array<int, 20> perWindow{};  // first heartbeats per 100 ms of [1 s, 3 s)
  for (const auto& times : fleet.sent) {
    REQUIRE(times.size() == 2);
    CHECK(times[0] >= 1s);
    CHECK(times[0] <= 3s);             // a point in the last tick is due at its end
    CHECK(times[1] - times[0] == 3s);  // from then on, one per heartbeat, in the same phase
    const auto window = static_cast<std::size_t>(std::clamp<ns>(times[0] - 1s, 0s, 1999ms) / 100ms);
    ++perWindow.at(window);
  }
  // 10 per window on average: none empty, none holding a burst.
  CHECK(*std::min_element(perWindow.begin(), perWindow.end()) >= 1);
  CHECK(*std::max_element(perWindow.begin(), perWindow.end()) <= 25);
}

TEST_CASE("heartbeat: a reconnected channel picks a new phase for its first heartbeat") {
  Fleet fleet(1, true);
  fleet.runUntil(5s);
  const std::size_t before = fleet.sent[0].size();
  fleet.chs[0]->setConnected(false);
  fleet.runUntil(6s);
  CHECK(fleet.sent[0].size() == before);  // never while disconnected
  fleet.chs[0]->setConnected(true);       // stamps both at 6 s
  fleet.runUntil(9s);
  // The first check after the reconnect is at most a check interval (1 s) later; the spread
  // heartbeat comes before the idle rule's own (9 s).
  REQUIRE(fleet.sent[0].size() == before + 1);
  CHECK(fleet.sent[0].back() >= 6s);
  CHECK(fleet.sent[0].back() < 9s);
  fleet.runUntil(12s + 20ms);
  REQUIRE(fleet.sent[0].size() == before + 2);
  CHECK(fleet.sent[0].back() - fleet.sent[0][before] == 3s);
}

}  // TEST_SUITE("tasks")
