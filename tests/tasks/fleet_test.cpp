// One shared wheel for 1000 channels, each with a heartbeat and a reconnect task: exact totals
// over a 30 s timeline, exactly one pending timeout per task, none after cancelling them all.
#include "fake_channel.h"

#include <doctest/doctest.h>

#include <cstddef>
#include <memory>
#include <vector>

using namespace wbtest;

TEST_SUITE("tasks") {

TEST_CASE("1000 channels on one wheel: exact totals and pending timeouts") {
  constexpr std::size_t kChannels = 1000;
  Rig rig;
  auto metrics = std::make_shared<TaskMetrics>();
  std::vector<std::shared_ptr<FakeChannel>> channels;
  std::vector<std::shared_ptr<AbstractTimerTask>> tasks;
  // Three kinds, by index % 3: 0 busy (traffic every tick), 1 idle with an answering peer,
  // 2 disconnected and never coming back.
  std::vector<FakeChannel*> busy;
  for (std::size_t i = 0; i < kChannels; ++i) {
    auto ch = rig.channel(i % 3 != 2);
    ch->echo = i % 3 == 1;
    if (i % 3 == 0) busy.push_back(ch.get());
    auto heartbeat =
        std::make_shared<HeartbeatTimerTask>(rig.timer(), ch, testOptions(), nullptr, metrics);
    auto reconnect =
        std::make_shared<ReconnectTimerTask>(rig.timer(), ch, testOptions(), nullptr, metrics);
    // What net/'s client does when an attempt's socket closes.
    ch->onDown = [weak = std::weak_ptr<ReconnectTimerTask>(reconnect)] {
      if (auto t = weak.lock()) t->wake();
    };
    heartbeat->start(heartbeat->checkInterval());
    reconnect->start(reconnect->checkInterval());
    channels.push_back(std::move(ch));
    tasks.push_back(std::move(heartbeat));
    tasks.push_back(std::move(reconnect));
  }
  CHECK(rig.pending() == 2 * kChannels);

  const auto traffic = [&] {
    for (auto* ch : busy) ch->traffic();
  };
  for (ns t = 5s; t <= 30s; t += 5s) {
    rig.runUntil(t, traffic);
    CHECK(rig.pending() == 2 * kChannels);
  }

  const std::size_t busyCount = 334, echoing = 333, disconnected = 333;
  TaskMetricsSnapshot expected;
  expected.heartbeatsSent = echoing * 10;  // 3s, 6s, ..., 30s
  // 4s, 5.61s, 8.18s, 12.29s, 18.86s, 29.36s (reconnect_task_test.cpp has the arithmetic).
  expected.reconnectsStarted = disconnected * 6;
  // Heartbeat checks (each re-armed for its channel's deadline, heartbeat_tasks.h): busy ones
  // at 1s, 4s, ..., 28s (fresh each time: sleep 3s); echoing ones at 1s, then each send, which
  // sleeps a whole heartbeat (3s, 6s, ..., 30s); disconnected ones every second.
  const std::uint64_t heartbeatRuns = busyCount * 10 + echoing * 11 + disconnected * 30;
  // Reconnect checks of healthy channels, every 3s but for those that could not act (read idle
  // could not reach 9s yet): busy ones at 3s, 12s, 21s, 30s; echoing ones at 3s (read idle 0: the
  // heartbeat ran first), then 12s, 18s, 24s, 30s (each runs before that tick's heartbeat, which
  // was armed later, so it finds the read of 3s before: idle 3s, the next that could act 6s on).
  const std::uint64_t healthyReconnectRuns = busyCount * 4 + echoing * 5;
  // Disconnected ones: the 3s check, then per attempt: itself + its refusal.
  const std::uint64_t downReconnectRuns = disconnected * 13;
  expected.runs = heartbeatRuns + healthyReconnectRuns + downReconnectRuns;
  CHECK(metrics->snapshot() == expected);
  std::uint64_t heartbeats = 0, reconnects = 0;
  for (const auto& ch : channels) {
    heartbeats += ch->heartbeats();
    reconnects += ch->reconnects().size();
  }
  CHECK(heartbeats == expected.heartbeatsSent);
  CHECK(reconnects == expected.reconnectsStarted);

  for (const auto& task : tasks) CHECK(task->cancel());
  CHECK(rig.pending() == 0);
  rig.runUntil(60s, traffic);
  CHECK(metrics->snapshot() == expected);
}

}  // TEST_SUITE("tasks")
