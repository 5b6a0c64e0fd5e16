// Real-time concurrency tests: Drive::Thread with several producer/canceller threads and a
// custom executor thread. Counts are exact; waits are on condition variables with a deadline.
#include "support.h"

#include <doctest/doctest.h>

#include <atomic>
#include <barrier>
#include <deque>
#include <random>
#include <thread>

using namespace wbtest;

TEST_SUITE("realtime") {
TEST_CASE("realtime: a custom executor runs every task") {
  // A one-thread executor: the wheel posts closures, the executor thread runs them.
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool quit = false;
  std::jthread executorThread([&] {
    std::unique_lock lock(mutex);
    for (;;) {
      cv.wait(lock, [&] { return quit || !queue.empty(); });
      if (queue.empty()) return;
      auto closure = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      closure();
      lock.lock();
    }
  });
  const std::thread::id executorId = executorThread.get_id();
  std::atomic<int> dispatched{0};
  std::atomic<int> onExecutor{0};
  Completion done(50);
  {
    TimerHooks hooks;
    hooks.executor = [&](std::function<void()> closure) {
      ++dispatched;
      std::lock_guard lock(mutex);
      queue.push_back(std::move(closure));
      cv.notify_one();
    };
    HashedWheelTimer timer(wheelOptions(10ms, 64), hooks);
    for (int i = 0; i < 50; ++i) {
      timer.newTimeout(
          [&] {
            if (std::this_thread::get_id() == executorId) ++onExecutor;
            done.arrive();
          },
          (i % 5) * 10ms);
    }
    REQUIRE(done.waitFor(kGenerous));
    CHECK(timer.stop().empty());
    CHECK(timer.metrics().fired == 50);
  }
  {
    std::lock_guard lock(mutex);
    quit = true;
    cv.notify_one();
  }
  executorThread.join();
  CHECK(dispatched.load() == 50);
  CHECK(onExecutor.load() == 50);
}

TEST_CASE("realtime: concurrent newTimeout from 4 threads fires every timeout exactly once") {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25000;
  std::vector<std::atomic<int>> fires(kThreads * kPerThread);
  Completion done(kThreads * kPerThread);
  {
    HashedWheelTimer timer(wheelOptions(1ms, 512));
    std::barrier go(kThreads);
    {
      std::vector<std::jthread> producers;
      for (int t = 0; t < kThreads; ++t) {
        producers.emplace_back([&, t] {
          std::mt19937 rng(static_cast<unsigned>(t));
          std::uniform_int_distribution<int> delayMs(0, 50);
          go.arrive_and_wait();
          for (int i = 0; i < kPerThread; ++i) {
            std::atomic<int>* slot = &fires[static_cast<std::size_t>(t * kPerThread + i)];
            timer.newTimeout(
                [slot, &done] {
                  slot->fetch_add(1, std::memory_order_relaxed);
                  done.arrive();
                },
                delayMs(rng) * 1ms);
          }
        });
      }
    }
    REQUIRE(done.waitFor(kGenerous));
    CHECK(timer.stop().empty());
    const TimerMetrics m = timer.metrics();
    CHECK(m.scheduled == kThreads * kPerThread);
    CHECK(m.fired == kThreads * kPerThread);
    CHECK(m.pending == 0);
  }
  int once = 0;
  for (const auto& f : fires) once += f.load() == 1 ? 1 : 0;
  CHECK(once == kThreads * kPerThread);
}

TEST_CASE("realtime: stop racing newTimeout from 4 threads accounts for every accepted timeout") {
  constexpr int kThreads = 4;
  std::atomic<int> fired{0};
  std::atomic<int> accepted{0};
  std::atomic<int> refused{0};
  std::atomic<int> otherErrors{0};
  Completion warmedUp(kThreads * 1000);
  HashedWheelTimer timer(wheelOptions(1ms, 64));
  std::vector<Timeout> returned;
  {
    std::vector<std::jthread> producers;
    for (int t = 0; t < kThreads; ++t) {
      producers.emplace_back([&, t] {
        for (int i = 0;; ++i) {
          try {
            timer.newTimeout([&fired] { ++fired; }, ((i + t) % 20) * 1ms);
            ++accepted;
            if (i < 1000) warmedUp.arrive();
          } catch (const TimerStoppedError&) {
            ++refused;
            return;
          } catch (...) {
            ++otherErrors;
            return;
          }
        }
      });
    }
    REQUIRE(warmedUp.waitFor(kGenerous));
    returned = timer.stop();
  }
  // Every accepted timeout either ran or was handed back by stop(); nothing runs afterwards.
  CHECK(otherErrors.load() == 0);
  CHECK(refused.load() == kThreads);
  CHECK(fired.load() + static_cast<int>(returned.size()) == accepted.load());
  for (const Timeout& t : returned) CHECK(t.isCancelled());
  const TimerMetrics m = timer.metrics();
  CHECK(m.scheduled == static_cast<std::uint64_t>(accepted.load()));
  CHECK(m.fired == static_cast<std::uint64_t>(fired.load()));
  CHECK(m.pending == 0);
}

TEST_CASE("realtime: cancel from 4 threads wins exactly once against the running wheel") {
  constexpr int kThreads = 4;
  constexpr int kRounds = 300;
  HashedWheelTimer timer(wheelOptions(1ms, 64));
  std::vector<std::atomic<int>> runs(kRounds);
  std::vector<std::atomic<int>> wins(kRounds);
  std::vector<Timeout> handles(kRounds);
  for (int r = 0; r < kRounds; ++r) {
    std::atomic<int>* run = &runs[static_cast<std::size_t>(r)];
    // Due around the moment the threads cancel, so the wheel takes part in the race.
    handles[static_cast<std::size_t>(r)] =
        timer.newTimeout([run] { run->fetch_add(1); }, (r % 20) * 1ms);
  }
  std::barrier sync(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int r = 0; r < kRounds; ++r) {
          sync.arrive_and_wait();
          if (handles[static_cast<std::size_t>(r)].cancel())
            wins[static_cast<std::size_t>(r)].fetch_add(1);
        }
      });
    }
  }
  CHECK(timer.stop().empty());  // joins the worker: every run has finished
  int bad = 0;
  int cancelled = 0;
  for (int r = 0; r < kRounds; ++r) {
    const int won = wins[static_cast<std::size_t>(r)].load();
    bad += won + runs[static_cast<std::size_t>(r)].load() == 1 ? 0 : 1;
    cancelled += won;
  }
  CHECK(bad == 0);
  CHECK(timer.metrics().cancelled == static_cast<std::uint64_t>(cancelled));
}

}  // TEST_SUITE("realtime")
