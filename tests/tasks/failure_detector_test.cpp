// PhiAccrualDetector: φ of a regular history at known silences (log10 2 at the mean, the threshold
// crossed between 5 and 6 σ), the guards (mean never below the expected interval, σ never below
// its minimum, the acceptable pause), a jittery history suspected later than a regular one, the
// window, reset, saturation, validation; and the reconnect and close tasks deciding on φ.
#include "fake_channel.h"

#include <wheelbeat/tasks/failure_detector.h>

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <stdexcept>

using namespace wbtest;
using wheelbeat::tasks::DetectorKind;
using wheelbeat::tasks::PhiAccrualDetector;
using wheelbeat::tasks::PhiOptions;

namespace {

// Akka's defaults exactly (no acceptable pause): the arithmetic of phi itself.
PhiOptions akka() {
  PhiOptions o;
  o.acceptablePause = 0s;
  return o;
}

// Frames every `interval` for `count` intervals, the last one at time `count * interval`.
std::unique_ptr<PhiAccrualDetector> regular(ns interval, int count, PhiOptions options = akka()) {
  auto d = std::make_unique<PhiAccrualDetector>(options, 1s);
  for (int i = 0; i <= count; ++i) d->heartbeat(interval * i);
  return d;
}

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE(
    "phi: 0 before the first frame, log10 2 at the mean, the threshold between 5 and 6 sigma") {
  PhiAccrualDetector none(akka(), 1s);
  CHECK(none.phi(10s) == 0.0);
  CHECK_FALSE(none.suspects(1h));

  const auto d = regular(1s, 10);  // mean 1s, sigma 0 -> minStdDeviation 100ms
  const ns last = 10s;
  CHECK(d->stats().samples == 10);
  CHECK(d->stats().mean == 1s);
  CHECK(d->stats().stdDev == 0s);
  CHECK(d->phi(last + 1s) == doctest::Approx(std::log10(2.0)).epsilon(1e-12));
  CHECK(d->phi(last + 500ms) < 0.01);
  CHECK(d->phi(last + 1500ms) == doctest::Approx(7.3003).epsilon(1e-4));  // y = 5
  CHECK_FALSE(d->suspects(last + 1500ms));
  CHECK(d->suspects(last + 1600ms));  // y = 6: phi 10.78
  double previous = 0;
  for (ns t = last; t <= last + 5s; t += 10ms) {  // never decreasing with the silence
    REQUIRE(d->phi(t) >= previous);
    previous = d->phi(t);
  }
}

TEST_CASE("phi: a busy peer that falls back to heartbeats is not suspected at its first gap") {
  const auto d = regular(10ms, 500);  // frames every 10 ms for 5 s; expected interval 1 s
  CHECK(d->stats().mean == 10ms);
  // The mean is floored at the heartbeat interval: a 1 s gap is the protocol, not a failure.
  CHECK(d->phi(5s + 1s) == doctest::Approx(std::log10(2.0)).epsilon(1e-12));
  CHECK_FALSE(d->suspects(5s + 1500ms));
}

TEST_CASE("phi: a jittery history is given more time than a regular one") {
  PhiAccrualDetector jittery(akka(), 1s);
  ns t = 0s;
  for (int i = 0; i < 20; ++i) {
    jittery.heartbeat(t);
    t += i % 2 == 0 ? 500ms : 1500ms;
  }
  jittery.heartbeat(t);
  CHECK(jittery.stats().mean == 1s);
  CHECK(jittery.stats().stdDev == 500ms);
  const auto steady = regular(1s, 20);
  CHECK(jittery.phi(t + 1600ms) < steady->phi(20s + 1600ms));
  CHECK_FALSE(jittery.suspects(t + 2500ms));  // y = 3: phi 2.8
  CHECK(jittery.suspects(t + 4000ms));        // y = 6
}

TEST_CASE("phi: the acceptable pause and the minimum deviation") {
  PhiOptions o;  // the default pause: 1 s
  CHECK(o.acceptablePause == 1s);
  const auto d = regular(1s, 10, o);
  CHECK(d->phi(10s + 2s) == doctest::Approx(std::log10(2.0)).epsilon(1e-12));
  CHECK_FALSE(d->suspects(10s + 2500ms));
  o = akka();
  o.minStdDeviation = 500ms;
  const auto wide = regular(1s, 10, o);
  CHECK(wide->phi(10s + 1500ms) == doctest::Approx(0.7993).epsilon(1e-3));  // y = 1
}

TEST_CASE("phi: the window keeps the last samples only - reset forgets them") {
  PhiOptions o = akka();
  o.window = 3;
  PhiAccrualDetector d(o, 1s);
  ns t = 0s;
  for (int i = 0; i < 100; ++i) d.heartbeat(t += 1s);
  for (int i = 0; i < 3; ++i) d.heartbeat(t += 3s);
  CHECK(d.stats().samples == 3);
  CHECK(d.stats().mean == 3s);
  d.reset();
  CHECK(d.stats().samples == 0);
  CHECK(d.phi(t + 1h) == 0.0);
  d.heartbeat(t);
  // One frame, no interval yet: Akka's first estimate (mean 1 s, sigma 250 ms).
  CHECK(d.phi(t + 1s) == doctest::Approx(std::log10(2.0)).epsilon(1e-12));
}

TEST_CASE("phi: an hour of silence saturates to a finite value") {
  const auto d = regular(1s, 10);
  const double phi = d->phi(10s + 1h);
  CHECK(std::isfinite(phi));
  CHECK(phi > 1e6);
}

TEST_CASE("phi: invalid options name the field, the value and the expectation") {
  auto message = [](PhiOptions o) {
    try {
      PhiAccrualDetector d(o, 1s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  PhiOptions o;
  o.threshold = 0;
  CHECK(message(o) == "PhiOptions.threshold = 0 (expected: > 0, finite)");
  o = {};
  o.minStdDeviation = 0s;
  CHECK(message(o) == "PhiOptions.minStdDeviation = 0s (expected: > 0)");
  o = {};
  o.window = 0;
  CHECK(message(o) == "PhiOptions.window = 0 (expected: 1 .. 100000)");
  o = {};
  o.acceptablePause = -1s;
  CHECK(message(o) == "PhiOptions.acceptablePause = -1s (expected: >= 0)");
  HeartbeatOptions h = testOptions();
  h.phi.threshold = -1;
  CHECK_THROWS_WITH(wheelbeat::tasks::validate(h),
                    "HeartbeatOptions.phi.threshold = -1 (expected: > 0, finite)");
}

TEST_CASE("reconnect on phi: a silent peer is found well before the fixed idle timeout") {
  auto run = [](DetectorKind kind) {
    HeartbeatOptions o = testOptions();
    o.interval = 1s;  // idle timeout 3s
    o.detector = kind;
    Rig rig;
    auto ch = rig.channel(true);
    ch->detector = std::make_unique<PhiAccrualDetector>(o.phi, o.interval);
    auto task = std::make_shared<ReconnectTimerTask>(rig.timer(), ch, o);
    task->start(task->checkInterval());
    // The peer answers every second until 10s, then goes silent (SIGKILL with the socket held).
    rig.runUntil(10s, [&] {
      if (rig.elapsed() % 1s == 0s) ch->read();
    });
    rig.runUntil(20s);
    REQUIRE(ch->reconnects().size() >= 1);
    auto first = ch->reconnects()[0];
    first.at -= rig.origin();
    return first;
  };
  const auto fixed = run(DetectorKind::Fixed);
  const auto phi = run(DetectorKind::Phi);
  // Last frame at 10s. Fixed: read idle >= 3s, checked every 1s -> 13s. Phi: beyond 2.55s of
  // silence (phi 8 between 5 and 6 sigma of 100 ms past the 1 s mean + the 1 s acceptable
  // pause), checked every 340 ms (333.33 ms on 10 ms ticks) -> 12.58s.
  CHECK(fixed.reason == "read idle 3s >= idleTimeout 3s");
  CHECK(fixed.at == 13s);
  CHECK(phi.reason == "phi 10.0 >= 8 after read idle 2.58s");
  CHECK(phi.at == 12580ms);
}

TEST_CASE("reconnect on phi: the fixed rule keeps its own cadence (phi checks do not tighten it)") {
  HeartbeatOptions o = testOptions();
  o.interval = 1s;  // idle timeout 3s: the fixed rule every 1s, phi's checks every 333 ms
  o.detector = DetectorKind::Phi;
  Rig rig;
  auto ch = rig.channel(true);  // keeps no detector: only the fixed rule can fire
  auto task = std::make_shared<ReconnectTimerTask>(rig.timer(), ch, o);
  task->start(task->checkInterval());
  rig.runUntil(10s, [&] {
    if (rig.elapsed() % 1s == 0s) ch->read();
  });
  rig.runUntil(20s);
  REQUIRE(ch->reconnects().size() >= 1);
  // Fixed-rule checks at 0.34s, 1.36s, ... (every 1 s from the first check): the first with 3 s of
  // silence after the 10 s frame is 13.6s — as without phi, never 13.0x at a 333 ms check.
  CHECK(ch->reconnects()[0].reason == "read idle 3.6s >= idleTimeout 3s");
  CHECK(ch->reconnects()[0].at - rig.origin() == 13600ms);
}

TEST_CASE("close on phi: the server drops a silent client at phi, a live one never") {
  HeartbeatOptions o = testOptions();
  o.interval = 1s;
  o.detector = DetectorKind::Phi;
  Rig rig;
  auto silent = rig.channel(true);
  auto live = rig.channel(true);
  for (auto* ch : {silent.get(), live.get()}) {
    ch->detector = std::make_unique<PhiAccrualDetector>(o.phi, o.interval);
  }
  auto a = std::make_shared<CloseTimerTask>(rig.timer(), silent, o);
  auto b = std::make_shared<CloseTimerTask>(rig.timer(), live, o);
  a->start(a->checkInterval());
  b->start(b->checkInterval());
  CHECK(a->checkInterval() == ns(1s) / 3);
  rig.runUntil(30s, [&] {
    if (rig.elapsed() % 1s != 0s) return;
    live->traffic();
    if (rig.elapsed() <= 5s) silent->traffic();
  });
  REQUIRE(silent->closes().size() == 1);
  CHECK(silent->closes()[0].reason.starts_with("phi "));
  // Last frame at 5s: closed at the first check past 2.55s of silence (checks every 340 ms:
  // 333.33 ms rounded up to the tick); the fixed rule (read idle > 3s, checked every 1s) would
  // wait until 9s.
  CHECK(silent->closes()[0].at - rig.origin() == 7820ms);
  CHECK(live->closes().empty());
}

}  // TEST_SUITE("tasks")
