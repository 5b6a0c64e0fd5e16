// Metrics: exact counters, the lateness histogram on a manual clock (exact where the deadlines
// make it exact, within one tick otherwise), toString(), and the histogram itself.
#include "support.h"

#include <doctest/doctest.h>

#include <random>

using namespace wbtest;
using wheelbeat::core::detail::LatenessHistogram;

TEST_SUITE("core") {

TEST_CASE("a fresh timer reports zero metrics") {
  ManualWheel w;
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.pending == 0);
  CHECK(m.scheduled == 0);
  CHECK(m.fired == 0);
  CHECK(m.cancelled == 0);
  CHECK(m.rejected == 0);
  CHECK(m.taskErrors == 0);
  CHECK(m.rounds == 0);
  CHECK(m.latenessSamples == 0);
  CHECK(m.latenessP50 == 0ns);
  CHECK(m.latenessP99 == 0ns);
  CHECK(m.latenessMax == 0ns);
}

TEST_CASE("metrics count scheduled fired cancelled rejected and errors exactly") {
  ManualWheel w(wheelOptions(10ms, 32, 10));
  w.start();
  LogCapture log;
  std::vector<Timeout> handles;
  for (int i = 0; i < 10; ++i) handles.push_back(w.schedule([] {}, (i + 1) * 10ms));
  for (int i = 0; i < 3; ++i) CHECK_THROWS_AS(w.schedule([] {}, 10ms), RejectedTimeoutError);
  CHECK(handles[9].cancel());
  CHECK(handles[8].cancel());
  w.schedule([] { throw std::runtime_error("counted"); }, 10ms);
  w.step(4);  // ticks 1..4: handles 0..3 and the throwing one
  TimerMetrics m = w.timer().metrics();
  CHECK(m.scheduled == 11);
  CHECK(m.rejected == 3);
  CHECK(m.fired == 5);
  CHECK(m.cancelled == 2);
  CHECK(m.taskErrors == 1);
  CHECK(m.pending == 4);
  CHECK(m.pending == w.timer().pendingTimeouts());
  CHECK(m.latenessSamples == m.fired);
  CHECK(m.rounds == 5);  // one advance() in start(), one per tick stepped
  w.step(10);
  m = w.timer().metrics();
  CHECK(m.fired == 9);
  CHECK(m.pending == 0);
  CHECK(m.latenessSamples == 9);
  CHECK(m.rounds == 15);
}

// cancel() counts in the word that pushes the entry; the wheel counts what it takes; stop()
// counts what it hands back: the total is exact at every step.
TEST_CASE("cancels count exactly before the wheel takes them, after it, and from stop()") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  std::vector<Timeout> handles;
  for (int i = 0; i < 6; ++i) handles.push_back(w.schedule([] {}, 1s));
  CHECK(handles[0].cancel());
  CHECK(handles[1].cancel());
  CHECK_FALSE(handles[1].cancel());
  TimerMetrics m = w.timer().metrics();  // not taken by the wheel yet
  CHECK(m.cancelled == 2);
  CHECK(m.pending == 4);
  w.step();  // the wheel takes both
  CHECK(w.timer().metrics().cancelled == 2);
  CHECK(handles[2].cancel());
  m = w.timer().metrics();
  CHECK(m.cancelled == 3);
  CHECK(m.pending == 3);
  w.step();
  CHECK(w.timer().metrics().cancelled == 3);
  CHECK(w.timer().stop().size() == 3);
  m = w.timer().metrics();
  CHECK(m.cancelled == 6);
  CHECK(m.pending == 0);
  CHECK(m.scheduled == 6);
  CHECK(m.fired == 0);
}

TEST_CASE("lateness is exactly zero for deadlines on tick boundaries") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  for (int i = 1; i <= 100; ++i) w.schedule([] {}, i * 10ms);
  w.step(100);
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.fired == 100);
  CHECK(m.latenessSamples == 100);
  CHECK(m.latenessMax == 0ns);
  CHECK(m.latenessP50 == 0ns);
  CHECK(m.latenessP99 == 0ns);
}

TEST_CASE("lateness of deadlines half a tick before their tick is half a tick") {
  ManualWheel w(wheelOptions(10ms, 32));
  w.start();
  for (int i = 1; i <= 100; ++i) w.schedule([] {}, i * 10ms - 5ms);
  w.step(100);
  const TimerMetrics m = w.timer().metrics();
  CHECK(m.latenessSamples == 100);
  CHECK(m.latenessMax == 5ms);
  // Histogram buckets: at most 1/16 relative error.
  CHECK(m.latenessP50 >= 5ms - 5ms / 16);
  CHECK(m.latenessP50 <= 5ms + 5ms / 16);
  CHECK(m.latenessP99 >= 5ms - 5ms / 16);
  CHECK(m.latenessP99 <= 5ms + 5ms / 16);
}

TEST_CASE("lateness stays within one tick when advancing tick by tick") {
  ManualWheel w(wheelOptions(7ms, 64));
  w.start();
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::int64_t> delayNs(-5'000'000, 2'000'000'000);
  int fired = 0;
  for (int round = 0; round < 300; ++round) {
    for (int i = 0; i < 10; ++i) w.schedule([&] { ++fired; }, ns(delayNs(rng)));
    w.step();
  }
  w.step(400);
  const TimerMetrics m = w.timer().metrics();
  CHECK(fired == 3000);
  CHECK(m.fired == 3000);
  CHECK(m.latenessSamples == 3000);
  CHECK(m.latenessP50 >= 0ns);
  CHECK(m.latenessP99 >= m.latenessP50);
  CHECK(m.latenessMax >= 0ns);
  CHECK(m.latenessMax <= 7ms);  // delay <= 0 on a processed tick: exactly one tick late
  CHECK(m.latenessP50 <= 7ms);
  CHECK(m.latenessP99 <= 7ms);
}

TEST_CASE("metrics toString names every counter") {
  ManualWheel w;
  w.start();
  w.schedule([] {}, 10ms);
  w.schedule([] {}, 1s);
  w.step();
  const std::string text = w.timer().metrics().toString();
  CHECK_MESSAGE(contains(text, "pending=1"), text);
  CHECK_MESSAGE(contains(text, "scheduled=2"), text);
  CHECK_MESSAGE(contains(text, "fired=1"), text);
  CHECK_MESSAGE(contains(text, "cancelled=0"), text);
  CHECK_MESSAGE(contains(text, "rejected=0"), text);
  CHECK_MESSAGE(contains(text, "rounds=2"), text);  // start() and step()
  CHECK_MESSAGE(contains(text, "p99"), text);
}

TEST_CASE("lateness histogram buckets are ordered and within 1/16 of the value") {
  std::uint64_t previous = 0;
  int badOrder = 0;
  int badBound = 0;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t v = i < 1000 ? static_cast<std::uint64_t>(i) : rng() >> (rng() % 64);
    const int b = LatenessHistogram::bucketOf(v);
    const std::uint64_t upper = LatenessHistogram::bucketUpper(b);
    if (upper < v || static_cast<double>(upper - v) > static_cast<double>(v) / 16.0) ++badBound;
    if (i < 1000) {
      if (static_cast<std::uint64_t>(b) < previous) ++badOrder;
      previous = static_cast<std::uint64_t>(b);
    }
    if (b < 0 || b >= LatenessHistogram::kBuckets) ++badBound;
  }
  CHECK(badOrder == 0);
  CHECK(badBound == 0);
}

TEST_CASE("lateness histogram quantiles and max") {
  LatenessHistogram h;
  CHECK(h.count() == 0);
  CHECK(h.quantile(0.5) == 0);
  CHECK(h.max() == 0);
  for (int i = 1; i <= 100; ++i) h.record(i * 1000);
  CHECK(h.count() == 100);
  CHECK(h.max() == 100000);
  const std::int64_t p50 = h.quantile(0.5);
  CHECK(p50 >= 50000);
  CHECK(p50 <= 50000 + 50000 / 16);
  CHECK(h.quantile(1.0) >= 100000);
  CHECK(h.quantile(1.0) <= 100000 + 100000 / 16);
  h.record(0);
  CHECK(h.count() == 101);
  CHECK(h.max() == 100000);
}

}  // TEST_SUITE("core")

TEST_SUITE("core") {
TEST_CASE("now() reads the timer's own clock") {
  ManualWheel w(wheelOptions(10ms, 32));
  CHECK(w.timer().now() == w.now());
  w.clock().advance(1234ns);
  CHECK(w.timer().now() == w.now());
}
}  // TEST_SUITE("core")
