// Real time (Drive::Thread, steady clock): cancel() racing with the wheel thread re-arming the
// task. After every cancel the chain stops and no timeout is left pending.
#include "fake_channel.h"

#include <wheelbeat/core/clock.h>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

using namespace wbtest;

namespace {

// Polls `done` until it holds or 20 s passed (generous: sanitizers on two busy cores).
template <typename Pred>
bool eventually(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Returns once every task run that was in flight on the wheel thread has finished: a marker
// scheduled now runs after them (one wheel thread, runs in order). False after 20 s.
bool wheelBarrier(HashedWheelTimer& timer) {
  auto ran = std::make_shared<std::atomic<bool>>(false);
  timer.newTimeout([ran] { ran->store(true); }, ns(0));
  return eventually([&] { return ran->load(); });
}

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("cancel racing the wheel thread leaves nothing pending and stops the chain") {
  WheelOptions options;
  options.tickDuration = std::chrono::milliseconds(1);
  options.ticksPerWheel = 64;
  HashedWheelTimer timer(options);
  auto ch = std::make_shared<FakeChannel>(std::make_shared<wheelbeat::core::SteadyClock>());
  constexpr std::size_t kTasks = 200;
  for (int round = 0; round < 5; ++round) {
    std::vector<std::shared_ptr<ScriptedTask>> tasks;
    for (std::size_t i = 0; i < kTasks; ++i) {
      // Delay 0: re-armed for the next tick, so a run is in flight most of the time.
      tasks.push_back(std::make_shared<ScriptedTask>(
          timer, ch, [](ScriptedTask&, Channel&, ns) { return ns(0); }));
      tasks.back()->start(ns(0));
    }
    REQUIRE(eventually([&] {
      for (const auto& t : tasks) {
        if (t->runs() < 3) return false;
      }
      return true;
    }));
    std::atomic<std::size_t> won{0};
    std::thread canceller([&] {
      for (const auto& t : tasks) won += t->cancel() ? 1 : 0;
    });
    canceller.join();
    CHECK(won == kTasks);
    // A run in flight when cancel() returned cancels the timeout it armed before returning.
    CHECK(eventually([&] { return timer.pendingTimeouts() == 0; }));
    REQUIRE(wheelBarrier(timer));  // a run in flight at cancel() time has finished
    std::vector<std::uint64_t> runs;
    for (const auto& t : tasks) runs.push_back(t->runs());
    REQUIRE(wheelBarrier(timer));  // the wheel moved on: a re-armed task would have run again
    for (std::size_t i = 0; i < kTasks; ++i) CHECK(tasks[i]->runs() == runs[i]);
    CHECK(timer.pendingTimeouts() == 0);
  }
}

TEST_CASE("cancel from two threads at once: exactly one wins") {
  WheelOptions options;
  options.tickDuration = std::chrono::milliseconds(1);
  HashedWheelTimer timer(options);
  auto ch = std::make_shared<FakeChannel>(std::make_shared<wheelbeat::core::SteadyClock>());
  for (int round = 0; round < 100; ++round) {
    auto task = std::make_shared<ScriptedTask>(timer, ch,
                                               [](ScriptedTask&, Channel&, ns) { return ns(0); });
    task->start(ns(0));
    std::atomic<int> won{0};
    std::thread a([&] { won += task->cancel() ? 1 : 0; });
    std::thread b([&] { won += task->cancel() ? 1 : 0; });
    a.join();
    b.join();
    CHECK(won == 1);
  }
  CHECK(eventually([&] { return timer.pendingTimeouts() == 0; }));
}

}  // TEST_SUITE("tasks")
