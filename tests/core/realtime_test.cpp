// The few real-time tests: Drive::Thread on the steady clock. Counts and "never early" are
// exact; lateness bounds are generous (these also run under ThreadSanitizer and
// AddressSanitizer on 2 cores). Waits are on a condition variable with a deadline; nothing
// sleeps. Tasks run on the worker thread, so they only record: the assertions run here.
#include "support.h"

#include <doctest/doctest.h>
#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <random>
#include <stdexcept>
#include <string>

using namespace wbtest;

TEST_SUITE("realtime") {

TEST_CASE("realtime: a 1 s timeout has not run after 300 ms") {
  Completion done(1);
  HashedWheelTimer timer;  // 100 ms x 512, steady clock, own thread
  const Timeout t = timer.newTimeout([&] { done.arrive(); }, 1s);
  CHECK_FALSE(done.waitFor(300ms));
  CHECK(t.isPending());
  CHECK(timer.pendingTimeouts() == 1);
  CHECK(timer.stop().size() == 1);
  CHECK(done.arrived() == 0);
}

TEST_CASE("realtime: tasks run on a thread named wheelbeat-wheel") {
  Completion done(1);
  std::array<char, 16> name{};
  int rc = -1;
  HashedWheelTimer timer(WheelOptions{.tickDuration = 10ms});
  timer.newTimeout(
      [&] {
        rc = pthread_getname_np(pthread_self(), name.data(), name.size());
        done.arrive();
      },
      0ms);
  REQUIRE(done.waitFor(5s));
  CHECK(rc == 0);
  CHECK(std::string(name.data()) == "wheelbeat-wheel");
}

TEST_CASE("realtime: a 2 s timeout runs within 3 s and is expired") {
  Completion done(1);
  std::atomic<std::int64_t> firedAfter{0};
  HashedWheelTimer timer;
  const std::int64_t start = nowNs();
  const Timeout t = timer.newTimeout(
      [&] {
        firedAfter = nowNs() - start;
        done.arrive();
      },
      2s);
  CHECK(done.waitFor(3s));
  CHECK(firedAfter.load() >= ns(2s).count());  // never early
  CHECK(t.isExpired());
  CHECK(timer.pendingTimeouts() == 0);
  CHECK(timer.stop().empty());
}

TEST_CASE("realtime: stop returns an empty list after every timeout ran") {
  Completion done(3);
  HashedWheelTimer timer(wheelOptions(10ms, 512));
  for (int i = 0; i < 3; ++i) timer.newTimeout([&] { done.arrive(); }, 1ms);
  REQUIRE(done.waitFor(kGenerous));
  CHECK(timer.stop().empty());
  CHECK(timer.isStopped());
}

TEST_CASE("realtime: stop with a 1 s tick returns the pending timeouts promptly") {
  Completion firstTick(1);
  HashedWheelTimer timer(wheelOptions(1s, 512));
  std::vector<Timeout> scheduled;
  for (int i = 0; i < 5; ++i) scheduled.push_back(timer.newTimeout([] {}, 5s));
  timer.newTimeout([&] { firstTick.arrive(); }, 10ms);  // runs at tick 1 (1 s)
  REQUIRE(firstTick.waitFor(kGenerous));
  // The worker has just processed tick 1 and sleeps until tick 5: stop() must wake it.
  const auto before = Steady::now();
  const std::vector<Timeout> returned = timer.stop();
  const auto took = Steady::now() - before;
  CHECK(returned.size() == 5);
  for (const Timeout& t : returned) {
    CHECK(t.isCancelled());
    CHECK(std::find(scheduled.begin(), scheduled.end(), t) != scheduled.end());
  }
  CHECK_MESSAGE(
      took < 500ms,
      "stop took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  CHECK(timer.isStopped());
}

TEST_CASE("realtime: newTimeout after stop throws TimerStoppedError") {
  HashedWheelTimer timer(wheelOptions(10ms, 512));
  timer.newTimeout([] {}, 1s);
  CHECK(timer.stop().size() == 1);
  CHECK_THROWS_AS(timer.newTimeout([] {}, 1ms), TimerStoppedError);
  CHECK_THROWS_AS(timer.start(), TimerStoppedError);
}

TEST_CASE(
    "realtime: a task re-arming every 100 ms on a 32-slot wheel fires 3 times and stop reports "
    "it") {
  Completion thrice(3);
  std::atomic<int> fires{0};
  std::atomic<int> failedRearms{0};
  std::function<void()> arm;  // declared before the timer: it outlives the worker
  HashedWheelTimer timer(wheelOptions(100ms, 32));
  arm = [&] {
    timer.newTimeout(
        [&] {
          ++fires;
          try {
            arm();
          } catch (const TimerStoppedError&) {
            ++failedRearms;  // stop() raced this very run
          }
          thrice.arrive();
        },
        100ms);
  };
  arm();
  REQUIRE(thrice.waitFor(kGenerous));
  const std::vector<Timeout> returned = timer.stop();
  CHECK(fires.load() >= 3);
  // Exactly one link of the chain is alive: stop() returns it, unless stop() raced the run
  // that was about to re-arm.
  CHECK(returned.size() + static_cast<std::size_t>(failedRearms.load()) == 1);
  for (const Timeout& t : returned) {
    CHECK(t.isCancelled());
    CHECK(t.task() != nullptr);
  }
}

TEST_CASE("realtime: 100000 timeouts of 125 ms on a 200 ms tick fire between 125 and 650 ms") {
  constexpr std::size_t kCount = 100000;
  std::vector<std::int64_t> scheduledAt(kCount);
  std::vector<std::int64_t> firedAt(kCount, -1);
  Completion done(kCount);
  struct Slot {
    std::int64_t* firedAt;
    Completion* done;
  };
  {
    HashedWheelTimer timer(wheelOptions(200ms, 512));
    for (std::size_t i = 0; i < kCount; ++i) {
      scheduledAt[i] = nowNs();
      const Slot slot{&firedAt[i], &done};
      timer.newTimeout(
          [slot] {
            *slot.firedAt = nowNs();
            slot.done->arrive();
          },
          125ms);
    }
    REQUIRE(done.waitFor(kGenerous));
    CHECK(timer.stop().empty());
    CHECK(timer.metrics().fired == kCount);
  }
  std::size_t inRange = 0;
  std::int64_t minNs = std::numeric_limits<std::int64_t>::max();
  std::int64_t maxNs = 0;
  for (std::size_t i = 0; i < kCount; ++i) {
    const std::int64_t d = firedAt[i] - scheduledAt[i];
    minNs = std::min(minNs, d);
    maxNs = std::max(maxNs, d);
    inRange += d >= ns(125ms).count() && d < ns(650ms).count() ? 1 : 0;
  }
  CHECK(done.arrived() == kCount);
  CHECK(minNs >= ns(125ms).count());
  CHECK_MESSAGE(inRange == kCount,
                "delays from " << minNs / 1000000 << " to " << maxNs / 1000000 << " ms");
}

TEST_CASE("realtime: stop from inside a task throws logic_error and the worker goes on") {
  Completion done(2);
  std::atomic<int> threw{0};
  HashedWheelTimer timer(wheelOptions(10ms, 64));
  timer.newTimeout(
      [&] {
        try {
          (void)timer.stop();
        } catch (const std::logic_error&) {
          ++threw;
        }
        done.arrive();
      },
      10ms);
  timer.newTimeout([&] { done.arrive(); }, 50ms);
  REQUIRE(done.waitFor(kGenerous));
  CHECK(threw.load() == 1);
  CHECK_FALSE(timer.isStopped());
  CHECK(timer.stop().empty());
}

TEST_CASE("realtime: a throwing task does not kill the worker thread") {
  Completion done(1);
  std::atomic<int> hookCalls{0};
  TimerHooks hooks;
  hooks.onTaskError = [&](std::exception_ptr, const Timeout&) { ++hookCalls; };
  LogCapture log;
  HashedWheelTimer timer(wheelOptions(10ms, 64), hooks);
  timer.newTimeout([] { throw std::runtime_error("worker survives"); }, 10ms);
  timer.newTimeout([] { throw 42; }, 10ms);
  timer.newTimeout([&] { done.arrive(); }, 40ms);
  REQUIRE(done.waitFor(kGenerous));
  CHECK(timer.metrics().taskErrors == 2);
  CHECK(hookCalls.load() == 2);
  CHECK(timer.stop().empty());
  CHECK(log.count(LogLevel::Error) == 2);
}

TEST_CASE("realtime: an earlier new timeout wakes a worker sleeping until a later one") {
  Completion done(1);
  std::atomic<std::int64_t> firedAfter{0};
  HashedWheelTimer timer(wheelOptions(1ms, 512));
  timer.newTimeout([] {}, 30s);  // the worker sleeps until then
  timer.start();
  const std::int64_t start = nowNs();
  timer.newTimeout(
      [&] {
        firedAfter = nowNs() - start;
        done.arrive();
      },
      20ms);
  REQUIRE(done.waitFor(kGenerous));
  CHECK(firedAfter.load() >= ns(20ms).count());
  CHECK_MESSAGE(firedAfter.load() < ns(1s).count(),
                "fired after " << firedAfter.load() / 1000000 << " ms");
  CHECK(timer.stop().size() == 1);
}

// A thread that schedules and at once cancels (a loop issuing requests, each with its timeout)
// leaves work for every look the worker takes before sleeping. The worker must not go round and
// round after it (that spin cost S2 up to 2.5 x its time, in spells): after a round that such
// cancels started, it sleeps to the next tick. Rounds are counted by the wheel itself. A timeout
// scheduled in the middle of the churn still runs on time, never early.
TEST_CASE(
    "realtime: a thread scheduling and cancelling without pause wakes the worker a few "
    "times per tick, not in a loop") {
  constexpr auto kTick = 20ms;
  constexpr std::int64_t kWindowTicks = 30;
  constexpr std::uint64_t kMaxPairs = 50'000'000;  // bounds the loop if the clock stalls
  HashedWheelTimer timer(wheelOptions(kTick, 512));
  timer.start();
  Completion done(1);
  std::atomic<std::int64_t> firedAt{0};
  const std::int64_t begin = nowNs();
  const std::uint64_t roundsBefore = timer.metrics().rounds;
  std::int64_t probeAt = 0;
  std::uint64_t pairs = 0;
  std::uint64_t wins = 0;
  for (std::int64_t now = begin;
       now - begin < ns(kWindowTicks * kTick).count() && pairs < kMaxPairs; now = nowNs()) {
    for (int i = 0; i < 64; ++i, ++pairs) wins += timer.newTimeout([] {}, 10s).cancel() ? 1 : 0;
    if (probeAt == 0 && now - begin >= ns(5 * kTick).count()) {
      probeAt = nowNs();
      timer.newTimeout(
          [&] {
            firedAt = nowNs();
            done.arrive();
          },
          3 * kTick);
    }
  }
  const std::uint64_t rounds = timer.metrics().rounds - roundsBefore;
  const std::int64_t ticks = (nowNs() - begin) / ns(kTick).count() + 1;
  CHECK(wins == pairs);
  REQUIRE(done.waitFor(kGenerous));
  CHECK(firedAt.load() - probeAt >= ns(3 * kTick).count());  // never early
  const TimerMetrics m = timer.metrics();
  CHECK(m.pending == 0);
  CHECK(m.cancelled == pairs);
  CHECK(m.fired == 1);
  // Per tick: the round the tick starts, one more for what its last look found, then the sleep;
  // a wake-up for the probe's earlier deadline, and a cancel's (at most one per tick), add two.
  CHECK_MESSAGE(rounds <= static_cast<std::uint64_t>(4 * ticks + 4),
                rounds << " rounds in " << ticks << " ticks, " << pairs << " pairs");
  CHECK(timer.stop().empty());
}

TEST_CASE("realtime: random delays never fire early and arrive within a generous bound") {
  constexpr int kCount = 2000;
  struct Record {
    std::int64_t scheduledAt = 0;
    std::int64_t delay = 0;
    std::int64_t firedAt = 0;
  };
  std::vector<Record> records(kCount);
  Completion done(kCount);
  {
    HashedWheelTimer timer(wheelOptions(10ms, 64));
    std::mt19937 rng(5);
    std::uniform_int_distribution<std::int64_t> delayNs(-1'000'000, 300'000'000);
    for (int i = 0; i < kCount; ++i) {
      Record* rec = &records[static_cast<std::size_t>(i)];
      rec->delay = delayNs(rng);
      rec->scheduledAt = nowNs();
      timer.newTimeout(
          [rec, &done] {
            rec->firedAt = nowNs();
            done.arrive();
          },
          ns(rec->delay));
    }
    REQUIRE(done.waitFor(kGenerous));
    const TimerMetrics m = timer.metrics();
    CHECK(m.fired == kCount);
    CHECK(m.latenessSamples == kCount);
    CHECK(m.latenessP50 >= 0ns);
    CHECK(m.latenessMax < 1s);
  }
  int early = 0;
  int tooLate = 0;
  for (const Record& r : records) {
    const std::int64_t elapsed = r.firedAt - r.scheduledAt;
    early += elapsed < std::max<std::int64_t>(r.delay, 0) ? 1 : 0;
    tooLate += elapsed >= std::max<std::int64_t>(r.delay, 0) + ns(10ms).count() + ns(500ms).count()
                   ? 1
                   : 0;
  }
  CHECK(early == 0);
  CHECK(tooLate == 0);
}

TEST_CASE(
    "realtime: a cancelled timeout's task is released within a tick while the worker sleeps") {
  // Signals when the task holding it is destroyed (moved-from copies stay silent).
  struct ReleaseSignal {
    Completion* released;
    explicit ReleaseSignal(Completion* c) : released(c) {}
    ReleaseSignal(ReleaseSignal&& other) noexcept
        : released(std::exchange(other.released, nullptr)) {}
    ReleaseSignal& operator=(ReleaseSignal&&) = delete;
    ~ReleaseSignal() {
      if (released != nullptr) released->arrive();
    }
  };
  Completion released(1);
  HashedWheelTimer timer(wheelOptions(10ms, 64));
  const Timeout t = timer.newTimeout([signal = ReleaseSignal(&released)] { (void)signal; }, 1h);
  timer.start();
  CHECK_FALSE(released.waitFor(50ms));  // the worker is asleep until the 1 h deadline
  const auto before = Steady::now();
  CHECK(t.cancel());
  REQUIRE(released.waitFor(kGenerous));
  const auto took = Steady::now() - before;
  CHECK_MESSAGE(
      took < 1s, "released after "
                     << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                     << " ms");
  CHECK(timer.pendingTimeouts() == 0);
  CHECK(timer.stop().empty());
}

TEST_CASE("realtime: start from inside a task is a no-op") {
  Completion done(1);
  std::atomic<int> started{0};
  HashedWheelTimer timer(wheelOptions(10ms, 64));
  timer.newTimeout(
      [&] {
        timer.start();
        ++started;
        done.arrive();
      },
      10ms);
  REQUIRE(done.waitFor(kGenerous));
  CHECK(started.load() == 1);
  CHECK(timer.stop().empty());
}

TEST_CASE("realtime: the destructor stops and joins with timeouts pending") {
  auto payload = std::make_shared<int>(1);
  std::weak_ptr<int> watch = payload;
  std::atomic<int> runs{0};
  {
    HashedWheelTimer timer(wheelOptions(10ms, 64));
    timer.newTimeout([&runs, p = std::move(payload)] { runs += *p; }, 1h);
    timer.start();
  }
  CHECK(runs.load() == 0);
  CHECK(watch.expired());
}

TEST_CASE("realtime: a re-arm while the timer stops throws TimerStoppedError") {
  // The task runs on the worker, which stop() joins: the task sees the stop begin, re-arms, and
  // its run ends; stop() then hands nothing back.
  Completion started(1);
  bool threw = false;
  bool sawStop = false;
  HashedWheelTimer timer(WheelOptions{.tickDuration = 10ms});
  timer.newTimeout(
      [&](const Timeout& self) {
        started.arrive();
        const auto limit = Steady::now() + kGenerous;
        while (!timer.isStopped() && Steady::now() < limit) std::this_thread::yield();
        sawStop = timer.isStopped();
        try {
          timer.tryRearm(self, 10ms);
        } catch (const TimerStoppedError&) {
          threw = true;
        }
      },
      10ms);
  REQUIRE(started.waitFor(kGenerous));
  const std::vector<Timeout> left = timer.stop();  // joins the worker: the task has returned
  CHECK(sawStop);
  CHECK(threw);
  CHECK(left.empty());
  CHECK(timer.pendingTimeouts() == 0);
  CHECK(timer.metrics().scheduled == 1);
}

}  // TEST_SUITE("realtime")
