// ReconnectTimerTask (idleTimeout 9 s, a check every 3 s, 10 ms ticks): an attempt after each
// backoff delay once the channel is down, counted from the close event (the owner's wake()), not
// from the next check; at once when half-open; an attempt in flight is no failure; the delays
// follow the seeded retry policy exactly (Jitter::None) or within its bounds (±20 %); a healthy
// check resets the backoff; give-up after maxAttempts, reported.
//
// The fake's refused attempts fail inside the task's own run, so their close event is seen on the
// next tick: a failed attempt at t is followed by the next one at t + 10 ms + backoff.
#include "bursty_traffic.h"
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
    // What net/'s client does when its socket closes.
    ch->onDown = [weak = std::weak_ptr<ReconnectTimerTask>(task)] {
      if (auto t = weak.lock()) t->wake();
    };
    task->start(task->checkInterval());
  }

  std::vector<ns> reconnectTimes() const {
    std::vector<ns> out;
    for (const auto& r : ch->reconnects()) out.push_back(r.at - rig.origin());
    return out;
  }
  std::vector<ns> backoffs() const {
    std::vector<ns> out;
    for (const auto& r : listener->reconnects()) out.push_back(r.backoff);
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
  // The first check (3s) sees it down: attempt 1 after 1s; each refusal is seen a tick later and
  // waits the next delay; each run is on the first 10ms tick at or after its due time
  // (8.19s + 4.096s = 12.286s -> 12.29s).
  CHECK(r.backoffs() == std::vector<ns>{1s, 1600ms, 2560ms, 4096ms, 6553600us, 10485760us});
  CHECK(r.reconnectTimes() == std::vector<ns>{4s, 5610ms, 8180ms, 12290ms, 18860ms, 29360ms});
  CHECK(r.attempts() == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
  for (const auto& rec : r.ch->reconnects()) CHECK(rec.reason == "disconnected");
  CHECK(r.metrics->snapshot().reconnectsStarted == 6);
  CHECK(r.metrics->snapshot().giveUps == 0);
  CHECK(r.rig.pending() == 1);
}

TEST_CASE(
    "reconnect: the first attempt after a close waits the first backoff, not the next check") {
  HeartbeatOptions o = testOptions();
  o.interval = 60s;  // Dubbo's default: a check every 60s (idleTimeout 180s / 3)
  ReconnectRig r(true, o);
  r.ch->reconnectSucceeds = true;
  r.rig.runUntil(5s, [&] { r.ch->traffic(); });
  r.ch->drop();  // EOF or RST at 5s: the owner wakes the task
  r.rig.runUntil(70s, [&] {
    if (r.ch->isConnected()) r.ch->traffic();
  });
  // Seen on the next tick (5.01s), attempt 1 after its 1s; before, it waited for the check at 60s.
  CHECK(r.reconnectTimes() == std::vector<ns>{6010ms});
  CHECK(r.backoffs() == std::vector<ns>{1s});
  CHECK(r.attempts() == std::vector<std::int64_t>{1});
  CHECK(r.ch->isConnected());
  CHECK(r.metrics->snapshot().reconnectsStarted == 1);
}

TEST_CASE("reconnect: each failed attempt waits the next backoff from its failure") {
  HeartbeatOptions o = testOptions();
  o.interval = 60s;
  ReconnectRig r(true, o);
  r.rig.runUntil(5s, [&] { r.ch->traffic(); });
  r.ch->drop();
  r.rig.runUntil(20s);
  // 5.01 + 1 = 6.01; refused, seen at 6.02, + 1.6 = 7.62; 7.63 + 2.56 = 10.19;
  // 10.20 + 4.096 = 14.296 -> 14.30. No check in between (the next one is at 60s).
  CHECK(r.reconnectTimes() == std::vector<ns>{6010ms, 7620ms, 10190ms, 14300ms});
  CHECK(r.backoffs() == std::vector<ns>{1s, 1600ms, 2560ms, 4096ms});
  CHECK(r.attempts() == std::vector<std::int64_t>{1, 2, 3, 4});
}

TEST_CASE("reconnect: a connect in flight is neither a failure nor a reason for a second attempt") {
  HeartbeatOptions o = testOptions();
  o.reconnect.maxAttempts = 2;  // checks during the attempt must not use these up
  ReconnectRig r(true, o);
  r.ch->attemptsHang = true;
  r.rig.runUntil(1s, [&] { r.ch->traffic(); });
  r.ch->drop();
  r.rig.runUntil(12s);  // attempt 1 at 2.01s, then checks at 5.01, 8.01, 11.01 find it connecting
  CHECK(r.reconnectTimes() == std::vector<ns>{2010ms});
  CHECK(r.ch->isConnecting());
  CHECK(r.task->runs() == 5);  // 1.01 (the wake moved the 3s check), 2.01, 5.01, 8.01, 11.01
  CHECK(r.listener->giveUps().empty());
  r.ch->endAttempt(false);  // its connect timeout: closed at 12s
  r.rig.runUntil(15s);
  CHECK(r.reconnectTimes() == std::vector<ns>{2010ms, 13610ms});  // 12.01 + 1.6
  CHECK(r.attempts() == std::vector<std::int64_t>{1, 2});
  CHECK(r.backoffs() == std::vector<ns>{1s, 1600ms});
  r.ch->endAttempt(false);
  r.rig.runUntil(16s);
  CHECK(r.listener->giveUps() == std::vector<GiveUp>{GiveUp::MaxAttempts});  // at 15.01s
  CHECK(r.metrics->snapshot().reconnectsStarted == 2);
  CHECK(r.task->isEnded());
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
  CHECK(r.listener->reconnects()[0].backoff == 0s);  // at once: it had idleTimeout already
  // The reconnect stamped the channel at 9s: the check at 12s finds it fresh (and resets the
  // backoff); then 15s, and at 18s it is 9s read-idle again: attempt 1 once more.
  r.rig.runUntil(18s, [&] { r.ch->written(); });
  REQUIRE(r.ch->reconnects().size() == 2);
  CHECK(r.ch->reconnects()[1].reason == "read idle 9s >= idleTimeout 9s");
  CHECK(r.attempts() == std::vector<std::int64_t>{1, 1});
  CHECK(r.reconnectTimes() == std::vector<ns>{9s, 18s});
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
  r.rig.runUntil(4s);
  CHECK(r.reconnectTimes() == std::vector<ns>{4s});
  CHECK(r.metrics->snapshot().idleDeferred == 0);
}

TEST_CASE("reconnect: none while the channel is connected and read") {
  ReconnectRig r(true);
  r.rig.runUntil(60s, [&] { r.ch->read(); });
  CHECK(r.ch->reconnects().empty());
  CHECK(r.task->runs() == 7);  // 3s, then every third (read idle 0 each time): 12s .. 57s
  CHECK(r.metrics->snapshot().reconnectsStarted == 0);
}

// The checks skipped while the channel is healthy change no decision: under seeded bursty reads,
// each forced reconnect comes exactly when a check every 3 s would have made it, at the first
// multiple of 3 s at which read idle (since the last read or reconnect) is >= 9 s.
TEST_CASE("reconnect: skipping the checks that could not act changes no decision") {
  std::size_t decisions = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    ReconnectRig r(true);
    r.ch->reconnectSucceeds = true;
    BurstyTraffic traffic(seed);
    std::vector<ns> expected;
    ns stamp{0};  // the channel was stamped when it was made, at the origin
    while (r.rig.elapsed() < 120s) {
      const bool read = traffic.next();
      r.rig.runUntil(r.rig.elapsed() + r.rig.tick(), [&] {
        if (read) r.ch->read();
      });
      const ns t = r.rig.elapsed();
      if (read) stamp = t;
      if (t % 3s == 0s && t - stamp >= 9s) {
        expected.push_back(t);
        stamp = t;  // the reconnect stamps the channel
      }
    }
    CHECK(r.reconnectTimes() == expected);
    CHECK(r.task->runs() < 40);  // fewer than a check every 3 s
    decisions += expected.size();
  }
  CHECK(decisions >= 20);  // the patterns' silences cross the timeout often enough to tell
}

TEST_CASE("reconnect: recovery resets the backoff for the next outage") {
  ReconnectRig r(false);
  auto traffic = [&] {
    if (r.ch->isConnected()) r.ch->read();
    if (r.ch->reconnects().size() == 2) r.ch->reconnectSucceeds = true;  // the third one works
  };
  r.rig.runUntil(20s, traffic);
  // 4s (fail), 5.61s (fail), 8.18s (connects); 11.18s finds it healthy and resets.
  CHECK(r.reconnectTimes() == std::vector<ns>{4s, 5610ms, 8180ms});
  CHECK(r.ch->isConnected());
  r.ch->reconnectSucceeds = false;
  r.ch->drop();
  r.rig.runUntil(40s, traffic);
  // The outage (20s) is seen at 20.01s and starts again at attempt 1 / 1s.
  CHECK(r.reconnectTimes() ==
        std::vector<ns>{4s, 5610ms, 8180ms, 21010ms, 22620ms, 25190ms, 29300ms, 35870ms});
  CHECK(r.attempts() == std::vector<std::int64_t>{1, 2, 3, 1, 2, 3, 4, 5});
  CHECK(r.backoffs() == std::vector<ns>{1s, 1600ms, 2560ms, 1s, 1600ms, 2560ms, 4096ms, 6553600us});
}

TEST_CASE("reconnect: gives up after maxAttempts and tells the listener") {
  HeartbeatOptions o = testOptions();
  o.reconnect.maxAttempts = 3;
  ReconnectRig r(false, o);
  r.rig.runUntil(60s);
  CHECK(r.reconnectTimes() == std::vector<ns>{4s, 5610ms, 8180ms});
  CHECK(r.listener->giveUps() == std::vector<GiveUp>{GiveUp::MaxAttempts});
  CHECK(r.listener->ended() == std::vector<std::string>{"gave up: max-attempts"});
  CHECK(r.metrics->snapshot().giveUps == 1);
  CHECK(r.metrics->snapshot().reconnectsStarted == 3);
  CHECK(r.task->runs() == 7);  // 3s, 4s, 4.01s, 5.61s, 5.62s, 8.18s; the 7th (8.19s) gave up
  CHECK(r.task->isEnded());
  CHECK(r.rig.pending() == 0);
}

TEST_CASE("reconnect: maxAttempts -1 never gives up") {
  HeartbeatOptions o = testOptions();
  o.reconnect.maxDelay = 2s;  // reach the cap fast: many attempts in little time
  ReconnectRig r(false, o);
  r.rig.runUntil(600s);
  // 4s, 5.61s, then every 2.01s (a tick to see the refusal, then 2s): 7.62s ... 599.58s.
  CHECK(r.metrics->snapshot().reconnectsStarted == 297);
  CHECK(r.metrics->snapshot().giveUps == 0);
  CHECK(r.rig.pending() == 1);
}

TEST_CASE("reconnect: jittered delays stay within 20 percent and follow the seed") {
  HeartbeatOptions o = testOptions();
  o.reconnect = {};  // gRPC's defaults: 1s, x1.6, +-20 %, 120s
  o.seed = 42;
  ReconnectRig a(false, o);
  ReconnectRig b(false, o);
  o.seed = 43;
  ReconnectRig c(false, o);
  for (auto* r : {&a, &b, &c}) r->rig.runUntil(300s);
  const auto delays = a.backoffs();
  REQUIRE(delays.size() >= 10);
  for (std::size_t i = 0; i < delays.size(); ++i) {
    const ns base = cappedBackoff(o.reconnect, static_cast<std::int64_t>(i) + 1);
    CHECK(delays[i] >= base * 8 / 10);
    CHECK(delays[i] <= std::min<ns>(base * 12 / 10, 120s));
  }
  // Exactly the delays of a RetryState with the same seed, and reproducible.
  RetryState state(o.reconnect, 0ns, 42);
  for (const ns d : delays) CHECK(state.next(0ns, "disconnected").delay == d);
  CHECK(b.backoffs() == delays);
  CHECK(c.backoffs() != delays);
}

TEST_CASE("reconnect: seed 0 draws a different seed for each task") {
  HeartbeatOptions o = testOptions();
  o.reconnect = {};
  o.seed = 0;
  ReconnectRig a(false, o);
  ReconnectRig b(false, o);
  for (auto* r : {&a, &b}) r->rig.runUntil(60s);
  REQUIRE(a.backoffs().size() >= 5);
  CHECK(a.backoffs() != b.backoffs());
}

TEST_CASE("reconnect: per-error rules name the cause") {
  HeartbeatOptions o = testOptions();
  o.reconnect.ignore = {"read-idle"};  // reconnect only when disconnected
  ReconnectRig r(true, o);
  r.rig.runUntil(9s);
  CHECK(r.ch->reconnects().empty());
  CHECK(r.listener->giveUps() == std::vector<GiveUp>{GiveUp::NotRetryable});
  CHECK(r.task->isEnded());
}

}  // TEST_SUITE("tasks")
