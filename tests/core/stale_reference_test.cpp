// Cancelled timeouts leave stale references in their wheel slot (the entry itself is freed at
// once and reused); these tests drive enough cancels to trigger compaction, reuse freed entries
// into the same slots, and check that exactly the live timeouts run, once, in FIFO order.
#include "support.h"

#include <doctest/doctest.h>

#include <random>

using namespace wbtest;

TEST_SUITE("core") {

TEST_CASE("mass cancel triggers compaction and only the survivors run in FIFO order") {
  ManualWheel w(wheelOptions(1ms, 64));
  w.start();
  std::vector<int> ran;
  std::vector<Timeout> handles;
  constexpr int kTotal = 50'000;
  // Far enough to sit in higher levels and cascade later; 8 distinct ticks.
  for (int i = 0; i < kTotal; ++i) {
    handles.push_back(w.timer().newTimeout([&ran, i] { ran.push_back(i); },
                                           std::chrono::milliseconds(5000 + (i % 8))));
  }
  std::vector<int> survivors;
  for (int i = 0; i < kTotal; ++i) {
    if (i % 997 == 0) {
      survivors.push_back(i);
    } else {
      CHECK(handles[static_cast<std::size_t>(i)].cancel());
    }
  }
  CHECK(w.timer().pendingTimeouts() == survivors.size());
  w.step(1);  // processes the cancels: entries freed, compaction runs
  CHECK(w.timer().metrics().cancelled == kTotal - survivors.size());
  // Reuse the freed entries for timeouts due on the same ticks: stale references to them must
  // not make them run early, twice, or out of order.
  std::vector<int> late;
  for (int i = 0; i < 1000; ++i) {
    late.push_back(kTotal + i);
    w.timer().newTimeout([&ran, id = kTotal + i] { ran.push_back(id); },
                         std::chrono::milliseconds(4999 + (i % 8)));
  }
  w.step(6000);
  // Expected: by tick, survivors (accepted first) then the late ones of that tick.
  std::vector<int> expected;
  for (int t = 0; t < 8; ++t) {
    for (int s : survivors) {
      if (s % 8 == t) expected.push_back(s);
    }
    for (int l : late) {
      if ((l - kTotal) % 8 == t) expected.push_back(l);
    }
  }
  CHECK(ran == expected);
  CHECK(w.timer().pendingTimeouts() == 0);
  const auto m = w.timer().metrics();
  CHECK(m.fired == survivors.size() + late.size());
  CHECK(m.scheduled == kTotal + late.size());
}

TEST_CASE("cancel and reschedule churn in the same slots fires every live timeout exactly once") {
  ManualWheel w(wheelOptions(1ms, 32));
  w.start();
  std::mt19937 rng(42);
  std::vector<int> fires(20'000, 0);
  std::vector<Timeout> live(20'000);
  std::vector<bool> cancelled(20'000, false);
  for (int round = 0; round < 20; ++round) {
    for (int k = 0; k < 1000; ++k) {
      const int id = round * 1000 + k;
      live[static_cast<std::size_t>(id)] =
          w.timer().newTimeout([&fires, id] { ++fires[static_cast<std::size_t>(id)]; },
                               std::chrono::milliseconds(50 + rng() % 200));
    }
    for (int k = 0; k < 700; ++k) {  // cancel a random 70 % of everything scheduled so far
      const auto id = static_cast<std::size_t>(rng() % static_cast<unsigned>((round + 1) * 1000));
      if (live[id].cancel()) cancelled[id] = true;
    }
    w.step(7);
  }
  w.step(400);
  for (std::size_t id = 0; id < fires.size(); ++id) {
    INFO("timeout " << id);
    CHECK(fires[id] == (cancelled[id] ? 0 : 1));
  }
  CHECK(w.timer().pendingTimeouts() == 0);
}

}  // TEST_SUITE("core")
