// The decision lines of the timer tasks and of the invocation failback (core::log at Debug; a
// reconnect give-up at Warn), on the manual clock with the fake channel: each scripted scenario
// produces exactly the expected lines at Debug, and at Info none but the give-up.
#include "../log_capture.h"
#include "failback_fake.h"
#include "fake_channel.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace wbtest;
using wheelbeat::core::LogLevel;
using wheelbeat::tasks::pickEndpoint;
using Lines = std::vector<std::string>;

namespace {

// Heartbeat 3 s with an echoing peer: a heartbeat at 3 s and 6 s, nothing else.
Lines heartbeatScenario(LogLevel level) {
  LevelLogCapture log(level);
  Rig rig;
  auto ch = rig.channel(true);
  ch->echo = true;
  auto task = std::make_shared<HeartbeatTimerTask>(rig.timer(), ch, testOptions());
  task->start(task->checkInterval());
  rig.runUntil(7s);
  CHECK(ch->heartbeats() == 2);
  task->cancel();
  return log.lines();
}

// Down from the start, maxAttempts 3: three scheduled attempts (refused at once), then give-up.
Lines reconnectScenario(LogLevel level) {
  LevelLogCapture log(level);
  Rig rig;
  auto ch = rig.channel(false);
  ch->name = "client 192.0.2.1:20880";
  HeartbeatOptions o = testOptions();
  o.reconnect.maxAttempts = 3;
  auto task = std::make_shared<ReconnectTimerTask>(rig.timer(), ch, o);
  ch->onDown = [weak = std::weak_ptr<ReconnectTimerTask>(task)] {
    if (auto t = weak.lock()) t->wake();
  };
  task->start(task->checkInterval());
  rig.runUntil(20s);
  CHECK(ch->reconnects().size() == 3);
  CHECK(task->isEnded());
  return log.lines();
}

// A silent connected peer: torn down at once when read idle reaches idleTimeout (9 s).
Lines halfOpenScenario(LogLevel level) {
  LevelLogCapture log(level);
  Rig rig;
  auto ch = rig.channel(true);
  ch->reconnectSucceeds = true;
  auto task = std::make_shared<ReconnectTimerTask>(rig.timer(), ch, testOptions());
  task->start(task->checkInterval());
  rig.runUntil(10s);
  CHECK(ch->reconnects().size() == 1);
  task->cancel();
  return log.lines();
}

// Server side: a silent client closed when read idle exceeds closeTimeout (9 s; checks every 3 s).
Lines closeScenario(LogLevel level) {
  LevelLogCapture log(level);
  Rig rig;
  auto ch = rig.channel(true);
  ch->name = "channel 7 from 192.0.2.9:41234";
  auto task = std::make_shared<CloseTimerTask>(rig.timer(), ch, testOptions());
  task->start(task->checkInterval());
  rig.runUntil(13s);
  CHECK(ch->closes().size() == 1);
  return log.lines();
}

// An invocation that fails on its first endpoint, then succeeds on its retry 5 s later (Dubbo's
// invocation failback period) on the other one.
Lines failbackScenario(LogLevel level) {
  LevelLogCapture log(level);
  Rig rig;
  FailbackInvoker invoker(rig.timer(), FailbackOptions{}, nullptr, nullptr, nullptr, 42);
  const std::vector<std::string> endpoints{"192.0.2.1:20880", "192.0.2.2:20880"};
  std::uint64_t picks = 0;
  auto select = [&](const std::string& avoid) { return pickEndpoint(endpoints, avoid, picks++); };
  auto call = [&](const std::string& endpoint, Completion done) {
    done(endpoint == endpoints[0] ? CallResult::failure("disconnected", endpoint + " is down")
                                  : CallResult::success());
  };
  invoker.invoke("Echo.echo", select, call);
  rig.runUntil(6s);
  CHECK(invoker.pendingRetries() == 0);
  CHECK(picks == 2);
  invoker.stop();
  return log.lines();
}

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("decision log: heartbeat sent with the idle times that triggered it") {
  CHECK(heartbeatScenario(LogLevel::Debug) ==
        Lines{"DEBUG fake: heartbeat sent (read idle 3s, write idle 3s)",
              "DEBUG fake: heartbeat sent (read idle 3s, write idle 3s)"});
  CHECK(heartbeatScenario(LogLevel::Info).empty());
}

TEST_CASE("decision log: reconnect attempts scheduled with their delay then the give-up") {
  CHECK(
      reconnectScenario(LogLevel::Debug) ==
      Lines{
          "DEBUG client 192.0.2.1:20880: reconnect #1 in 1s: disconnected",
          "DEBUG client 192.0.2.1:20880: reconnect #2 in 1.6s: disconnected",
          "DEBUG client 192.0.2.1:20880: reconnect #3 in 2.56s: disconnected",
          "WARN client 192.0.2.1:20880: reconnect given up: max-attempts (after 3 reconnect(s))"});
  // A give-up ends the service: it is a warning, also seen at Info.
  CHECK(
      reconnectScenario(LogLevel::Info) ==
      Lines{
          "WARN client 192.0.2.1:20880: reconnect given up: max-attempts (after 3 reconnect(s))"});
}

TEST_CASE("decision log: a half-open connection is torn down with its reason") {
  CHECK(halfOpenScenario(LogLevel::Debug) ==
        Lines{"DEBUG fake: reconnect #1 now: read idle 9s >= idleTimeout 9s"});
  CHECK(halfOpenScenario(LogLevel::Info).empty());
}

TEST_CASE("decision log: an idle server channel is closed with its reason") {
  CHECK(closeScenario(LogLevel::Debug) ==
        Lines{"DEBUG channel 7 from 192.0.2.9:41234: closing: read idle 12s > closeTimeout 9s"});
  CHECK(closeScenario(LogLevel::Info).empty());
}

TEST_CASE("decision log: a failback retry is scheduled with its cause and delay") {
  CHECK(failbackScenario(LogLevel::Debug) ==
        Lines{"DEBUG failback: invoke Echo.echo failed (disconnected: 192.0.2.1:20880 is down): "
              "retry 1 in 5s",
              "DEBUG failback: invoke Echo.echo succeeded after 1 retry"});
  CHECK(failbackScenario(LogLevel::Info).empty());
}

}  // TEST_SUITE("tasks")
