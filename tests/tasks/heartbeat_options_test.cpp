// HeartbeatOptions: defaults (Dubbo's and gRPC's), resolved() filling the 0-defaults, and the
// exact validation messages, from validate() and from each task's constructor.
#include "fake_channel.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

using namespace wbtest;
using wheelbeat::tasks::Backoff;

namespace {

// The message of validate(), checked to be the same from the three constructors.
std::string heartbeatError(const std::function<void(HeartbeatOptions&)>& change) {
  HeartbeatOptions o;
  change(o);
  const std::string message = errorOf([&o] { wheelbeat::tasks::validate(o); });
  Rig rig;
  auto ch = rig.channel();
  CHECK(errorOf([&] { HeartbeatTimerTask t(rig.timer(), ch, o); }) == message);
  CHECK(errorOf([&] { ReconnectTimerTask t(rig.timer(), ch, o); }) == message);
  CHECK(errorOf([&] { CloseTimerTask t(rig.timer(), ch, o); }) == message);
  return message;
}

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("heartbeat options: defaults") {
  const HeartbeatOptions o;
  CHECK(o.interval == 60s);
  CHECK(o.idleTimeout == 0ns);
  CHECK(o.closeTimeout == 0ns);
  CHECK(o.seed == 0);
  CHECK(o.reconnect.backoff == Backoff::Exponential);
  CHECK(o.reconnect.initialDelay == 1s);
  CHECK(o.reconnect.multiplier == 1.6);
  CHECK(o.reconnect.maxDelay == 120s);
  CHECK(o.reconnect.jitter == Jitter::Proportional);
  CHECK(o.reconnect.jitterRatio == 0.2);
  CHECK(o.reconnect.maxAttempts == -1);
  CHECK_NOTHROW(wheelbeat::tasks::validate(o));
}

TEST_CASE("heartbeat options: resolved fills the 0-defaults") {
  HeartbeatOptions o;
  const HeartbeatOptions r = o.resolved();
  CHECK(r.interval == 60s);
  CHECK(r.idleTimeout == 180s);
  CHECK(r.closeTimeout == 180s);
  CHECK(r.seed != 0);
  o.idleTimeout = 200s;
  CHECK(o.resolved().closeTimeout == 200s);
  o.closeTimeout = 30s;
  o.seed = 5;
  CHECK(o.resolved().idleTimeout == 200s);
  CHECK(o.resolved().closeTimeout == 30s);
  CHECK(o.resolved().seed == 5);
}

TEST_CASE("heartbeat options: a huge heartbeat saturates the default idleTimeout") {
  HeartbeatOptions o;
  o.interval = ns(std::numeric_limits<std::int64_t>::max() / 2);
  CHECK(o.resolved().idleTimeout == ns::max());
  CHECK_NOTHROW(wheelbeat::tasks::validate(o));
}

TEST_CASE("heartbeat options: heartbeat must be positive") {
  CHECK(heartbeatError([](HeartbeatOptions& o) { o.interval = 0ns; }) ==
        "HeartbeatOptions.interval = 0s (expected: > 0)");
  CHECK(heartbeatError([](HeartbeatOptions& o) { o.interval = -1s; }) ==
        "HeartbeatOptions.interval = -1s (expected: > 0)");
}

TEST_CASE("heartbeat options: idleTimeout must be at least twice the heartbeat") {
  CHECK(heartbeatError([](HeartbeatOptions& o) { o.idleTimeout = 90s; }) ==
        "HeartbeatOptions.idleTimeout = 90s (expected: >= 2 * interval = 2m)");
  CHECK(heartbeatError([](HeartbeatOptions& o) {
          o.interval = 1500ms;
          o.idleTimeout = 2999ms;
        }) == "HeartbeatOptions.idleTimeout = 2999ms (expected: >= 2 * interval = 3s)");
  CHECK(heartbeatError([](HeartbeatOptions& o) { o.idleTimeout = -5s; }) ==
        "HeartbeatOptions.idleTimeout = -5s (expected: >= 2 * interval = 2m)");
}

TEST_CASE("heartbeat options: closeTimeout must not be negative") {
  CHECK(heartbeatError([](HeartbeatOptions& o) { o.closeTimeout = -1ms; }) ==
        "HeartbeatOptions.closeTimeout = -1ms (expected: >= 0)");
}

TEST_CASE("heartbeat options: reconnect errors name the nested field") {
  CHECK(heartbeatError([](HeartbeatOptions& o) { o.reconnect.maxDelay = 500ms; }) ==
        "HeartbeatOptions.reconnect.maxDelay = 500ms (expected: >= initialDelay = 1s)");
  CHECK(heartbeatError([](HeartbeatOptions& o) { o.reconnect.initialDelay = 0ns; }) ==
        "HeartbeatOptions.reconnect.initialDelay = 0s (expected: > 0)");
  CHECK(heartbeatError([](HeartbeatOptions& o) { o.reconnect.maxAttempts = -2; }) ==
        "HeartbeatOptions.reconnect.maxAttempts = -2 (expected: -1 (forever), 0 (none) or > "
        "0)");
}

TEST_CASE("heartbeat options: the first bad field is named") {
  CHECK(heartbeatError([](HeartbeatOptions& o) {
          o.interval = 0ns;
          o.closeTimeout = -1s;
        }) == "HeartbeatOptions.interval = 0s (expected: > 0)");
}

TEST_CASE("heartbeat options: edge values are valid") {
  HeartbeatOptions o;
  o.interval = 1ns;
  CHECK_NOTHROW(wheelbeat::tasks::validate(o));
  o.interval = 60s;
  o.idleTimeout = 120s;  // exactly 2 * interval
  CHECK_NOTHROW(wheelbeat::tasks::validate(o));
  o.closeTimeout = 1ns;
  CHECK_NOTHROW(wheelbeat::tasks::validate(o));
}

TEST_CASE("heartbeat options: each period spans at least 2 ticks of the wheel that runs it") {
  Rig rig;  // a 10ms tick
  REQUIRE(rig.tick() == 10ms);
  auto ch = rig.channel();
  const std::string least = " (expected: at least 2 wheel ticks = 20ms; the wheel's tick is 10ms)";
  HeartbeatOptions o;
  o.interval = 19ms;
  const std::string interval = "HeartbeatOptions.interval = 19ms" + least;
  CHECK(errorOf([&] { wheelbeat::tasks::validate(o, rig.tick()); }) == interval);
  CHECK(errorOf([&] { HeartbeatTimerTask t(rig.timer(), ch, o); }) == interval);
  CHECK(errorOf([&] { ReconnectTimerTask t(rig.timer(), ch, o); }) == interval);
  CHECK(errorOf([&] { CloseTimerTask t(rig.timer(), ch, o); }) == interval);
  CHECK_NOTHROW(wheelbeat::tasks::validate(o));  // no wheel: > 0 is the rule
  o.interval = 20ms;                             // exactly 2 ticks; idleTimeout 0: 60ms
  CHECK_NOTHROW(wheelbeat::tasks::validate(o, rig.tick()));
  CHECK_NOTHROW(CloseTimerTask(rig.timer(), ch, o));
  o.closeTimeout = 19ms;
  const std::string close = "HeartbeatOptions.closeTimeout = 19ms" + least;
  CHECK(errorOf([&] { wheelbeat::tasks::validate(o, rig.tick()); }) == close);
  CHECK(errorOf([&] { CloseTimerTask t(rig.timer(), ch, o); }) == close);
  o.closeTimeout = 20ms;
  CHECK_NOTHROW(CloseTimerTask(rig.timer(), ch, o));
  // An idleTimeout below 2 ticks needs an interval below one: the interval is named first.
  o.interval = 5ms;
  o.idleTimeout = 10ms;
  CHECK(errorOf([&] { wheelbeat::tasks::validate(o, rig.tick()); }) ==
        "HeartbeatOptions.interval = 5ms" + least);
}

}  // TEST_SUITE("tasks")
