// ReconnectTimerTask (idleTimeout 9 s, a check every 3 s, 10 ms ticks): a reconnect when
// disconnected and when half-open; the check delays follow the seeded retry policy exactly
// (Jitter::None) or within its bounds (±20 %); a healthy check resets the backoff; give-up after
// maxAttempts, reported.
#include "fake_channel.h"

#include <wheelbeat/tasks/retry_policy.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using namespace wbtest;
using wheelbeat::tasks::cappedBackoff;
using wheelbeat::tasks::RetryState;

namespace {

struct ReconnectRig {
  Rig rig;
  std::shared_ptr<FakeChannel> ch;
  std::shared_ptr<RecordingListener> listener = std::make_shared<RecordingListener>();
  std::shared_ptr<TaskMetrics> metrics = std::make_shared<TaskMetrics>();
  std::shared_ptr<ReconnectTimerTask> task;

  explicit ReconnectRig(bool connected, HeartbeatOptions options = testOptions())
      : ch(rig.channel(connected)) {
    task = std::make_shared<ReconnectTimerTask>(rig.timer(), ch, options, listener, metrics);
    task->start(task->checkInterval());
  }

  std::vector<ns> reconnectTimes() const {
    std::vector<ns> out;
    for (const auto& r : ch->reconnects()) out.push_back(r.at - rig.origin());
    return out;
  }
  std::vector<ns> nextCheckIns() const {
    std::vector<ns> out;
    for (const auto& r : listener->reconnects()) out.push_back(r.nextCheckIn);
    return out;
  }
  std::vector<std::int64_t> attempts() const {
    std::vector<std::int64_t> out;
    for (const auto& r : listener->reconnects()) out.push_back(r.attempt);
    return out;
  }
};

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("reconnect: the check interval is idleTimeout / 3") {
  ReconnectRig r(true);
  CHECK(r.task->checkInterval() == 3s);  // idleTimeout 0 = 3 * 3s
  HeartbeatOptions o = testOptions();
  o.idleTimeout = 7s;
  CHECK(ReconnectTimerTask(r.rig.timer(), r.ch, o).checkInterval() == ns(7s) / 3);
}

TEST_CASE("reconnect: a disconnected channel is reconnected on the exact backoff sequence") {
  ReconnectRig r(false);
  r.rig.runUntil(40s);
  // 1s, 1.6s, 2.56s, ... after the first check at 3s; each run is on the first 10ms tick at or
  // after its due time (12.256s -> 12.26s).
  CHECK(r.nextCheckIns() ==
        std::vector<ns>{1s, 1600ms, 2560ms, 4096ms, 6553600us, 10485760us, 16777216us});
  CHECK(r.reconnectTimes() == std::vector<ns>{3s, 4s, 5600ms, 8160ms, 12260ms, 18820ms, 29310ms});
  CHECK(r.attempts() == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7});
  for (const auto& rec : r.ch->reconnects()) CHECK(rec.reason == "disconnected");
  CHECK(r.metrics->snapshot().reconnectsStarted == 7);
  CHECK(r.metrics->snapshot().giveUps == 0);
  CHECK(r.rig.pending() == 1);
}

TEST_CASE("reconnect: forced on a half-open channel when read idle reaches idleTimeout") {
  ReconnectRig r(true);
  r.ch->reconnectSucceeds = true;
  // Writes flow, nothing is read: the channel still believes it is connected.
  r.rig.runUntil(8990ms, [&] { r.ch->written(); });
  CHECK(r.ch->reconnects().empty());  // checks at 3s and 6s
  r.rig.runUntil(9s, [&] { r.ch->written(); });
  REQUIRE(r.ch->reconnects().size() == 1);
  CHECK(r.ch->reconnects()[0].reason == "read idle 9s >= idleTimeout 9s");
  CHECK(r.listener->reconnects()[0].reason == "read idle 9s >= idleTimeout 9s");
  CHECK(r.listener->reconnects()[0].nextCheckIn == 1s);
  // The reconnect stamped the channel at 9s: the check at 10s finds it fresh (and resets the
  // backoff); then 13s, 16s, and at 19s it is 10s read-idle again: attempt 1 once more.
  r.rig.runUntil(19s, [&] { r.ch->written(); });
  REQUIRE(r.ch->reconnects().size() == 2);
  CHECK(r.ch->reconnects()[1].reason == "read idle 10s >= idleTimeout 9s");
  CHECK(r.attempts() == std::vector<std::int64_t>{1, 1});
  CHECK(r.reconnectTimes() == std::vector<ns>{9s, 19s});
}

TEST_CASE("reconnect: no forced reconnect while input waits unread") {
  ReconnectRig r(true);
  r.ch->reconnectSucceeds = true;
  r.ch->unreadInput = true;  // the answers arrived; the loop is behind reading them
  r.rig.runUntil(15s, [&] { r.ch->written(); });  // checks at 9s, 12s, 15s are read idle
  CHECK(r.ch->reconnects().empty());
  CHECK(r.metrics->snapshot().idleDeferred == 3);
  CHECK(r.metrics->snapshot().reconnectsStarted == 0);
  r.ch->unreadInput = false;
  r.rig.runUntil(18s, [&] { r.ch->written(); });
  REQUIRE(r.ch->reconnects().size() == 1);
  CHECK(r.ch->reconnects()[0].reason == "read idle 18s >= idleTimeout 9s");
  CHECK(r.attempts() == std::vector<std::int64_t>{1});  // the deferred checks reset nothing away
  CHECK(r.metrics->snapshot().idleDeferred == 3);
}

TEST_CASE("reconnect: a disconnected channel is reconnected whatever input waits") {
  ReconnectRig r(false);
  r.ch->unreadInput = true;  // a disconnected channel is not idle, it is down
  r.rig.runUntil(3s);
  CHECK(r.ch->reconnects().size() == 1);
  CHECK(r.metrics->snapshot().idleDeferred == 0);
}

TEST_CASE("reconnect: none while the channel is connected and read") {
  ReconnectRig r(true);
  r.rig.runUntil(60s, [&] { r.ch->read(); });
  CHECK(r.ch->reconnects().empty());
  CHECK(r.task->runs() == 20);
  CHECK(r.metrics->snapshot().reconnectsStarted == 0);
}

TEST_CASE("reconnect: recovery resets the backoff for the next outage") {
  ReconnectRig r(false);
  auto traffic = [&] {
    if (r.ch->isConnected()) r.ch->read();
    if (r.ch->reconnects().size() == 2) r.ch->reconnectSucceeds = true;  // the third one works
  };
  r.rig.runUntil(20s, traffic);
  // 3s, 4s (fail), 5.6s (connects); 8.16s finds it healthy and resets; then 11.16s, 14.16s, ...
  CHECK(r.reconnectTimes() == std::vector<ns>{3s, 4s, 5600ms});
  CHECK(r.ch->isConnected());
  r.ch->reconnectSucceeds = false;
  r.ch->setConnected(false);
  r.rig.runUntil(40s, traffic);
  // The outage is seen at 20.16s and starts again at attempt 1 / 1s.
  CHECK(r.reconnectTimes() ==
        std::vector<ns>{3s, 4s, 5600ms, 20160ms, 21160ms, 22760ms, 25320ms, 29420ms, 35980ms});
  CHECK(r.attempts() == std::vector<std::int64_t>{1, 2, 3, 1, 2, 3, 4, 5, 6});
  CHECK(r.nextCheckIns() ==
        std::vector<ns>{1s, 1600ms, 2560ms, 1s, 1600ms, 2560ms, 4096ms, 6553600us, 10485760us});
}

TEST_CASE("reconnect: gives up after maxAttempts and tells the listener") {
  HeartbeatOptions o = testOptions();
  o.reconnectBackoff.maxAttempts = 3;
  ReconnectRig r(false, o);
  r.rig.runUntil(60s);
  CHECK(r.reconnectTimes() == std::vector<ns>{3s, 4s, 5600ms});
  CHECK(r.listener->giveUps() == std::vector<GiveUp>{GiveUp::MaxAttempts});
  CHECK(r.listener->ended() == std::vector<std::string>{"gave up: max-attempts"});
  CHECK(r.metrics->snapshot().giveUps == 1);
  CHECK(r.metrics->snapshot().reconnectsStarted == 3);
  CHECK(r.task->runs() == 4);  // the 4th check (8.16s) gave up
  CHECK(r.task->isEnded());
  CHECK(r.rig.pending() == 0);
}

TEST_CASE("reconnect: maxAttempts -1 never gives up") {
  HeartbeatOptions o = testOptions();
  o.reconnectBackoff.maxDelay = 2s;  // reach the cap fast: many attempts in little time
  ReconnectRig r(false, o);
  r.rig.runUntil(600s);
  CHECK(r.metrics->snapshot().reconnectsStarted ==
        300);  // 3s, 4s, 5.6s, then every 2s: 7.6s ... 599.6s
  CHECK(r.metrics->snapshot().giveUps == 0);
  CHECK(r.rig.pending() == 1);
}

TEST_CASE("reconnect: jittered delays stay within 20 percent and follow the seed") {
  HeartbeatOptions o = testOptions();
  o.reconnectBackoff = {};  // gRPC's defaults: 1s, x1.6, +-20 %, 120s
  o.seed = 42;
  ReconnectRig a(false, o);
  ReconnectRig b(false, o);
  o.seed = 43;
  ReconnectRig c(false, o);
  for (auto* r : {&a, &b, &c}) r->rig.runUntil(300s);
  const auto delays = a.nextCheckIns();
  REQUIRE(delays.size() >= 10);
  for (std::size_t i = 0; i < delays.size(); ++i) {
    const ns base = cappedBackoff(o.reconnectBackoff, static_cast<std::int64_t>(i) + 1);
    CHECK(delays[i] >= base * 8 / 10);
    CHECK(delays[i] <= std::min<ns>(base * 12 / 10, 120s));
  }
  // Exactly the delays of a RetryState with the same seed, and reproducible.
  RetryState state(o.reconnectBackoff, 0ns, 42);
  for (const ns d : delays) CHECK(state.next(0ns, "disconnected").delay == d);
  CHECK(b.nextCheckIns() == delays);
  CHECK(c.nextCheckIns() != delays);
}

TEST_CASE("reconnect: seed 0 draws a different seed for each task") {
  HeartbeatOptions o = testOptions();
  o.reconnectBackoff = {};
  o.seed = 0;
  ReconnectRig a(false, o);
  ReconnectRig b(false, o);
  for (auto* r : {&a, &b}) r->rig.runUntil(60s);
  REQUIRE(a.nextCheckIns().size() >= 5);
  CHECK(a.nextCheckIns() != b.nextCheckIns());
}

TEST_CASE("reconnect: per-error rules name the cause") {
  HeartbeatOptions o = testOptions();
  o.reconnectBackoff.ignore = {"read-idle"};  // reconnect only when disconnected
  ReconnectRig r(true, o);
  r.rig.runUntil(9s);
  CHECK(r.ch->reconnects().empty());
  CHECK(r.listener->giveUps() == std::vector<GiveUp>{GiveUp::NotRetryable});
  CHECK(r.task->isEnded());
}

}  // TEST_SUITE("tasks")
