// Tutorial 01 — one-shot timeouts on the shared wheel.
//
// The wheel is the one timer a process shares (Netty's rule: one per process). newTimeout()
// schedules a task to run once after a delay — never early, normally less than one tick late —
// and returns a small Timeout handle that can cancel it. This is how wheelbeat bounds a connect
// attempt or a request: schedule the "too late" task, cancel it when the answer comes first.
#include "common/format.h"
#include "common/program.h"
#include "common/say.h"

#include <wheelbeat/core/hashed_wheel_timer.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;
using wheelbeat::core::HashedWheelTimer;
using wheelbeat::core::Timeout;
using wheelbeat::core::WheelOptions;

int main(int argc, char** argv) {
  if (const auto status = samples::noOptions(argc, argv, "tutorial_01_one_shot_timeouts",
                                             "Tutorial 01: one-shot timeouts on the shared wheel, "
                                             "and cancelling them through their handle."))
    return *status;
  samples::lineBufferedOutput();
  // 10 ms ticks: fine enough for this tutorial (the default, 100 ms, suits heartbeats).
  HashedWheelTimer timer(WheelOptions{.tickDuration = 10ms});

  // 1. A request with a deadline: the timeout fires because nobody answered.
  std::atomic<bool> timedOut{false};
  const auto start = std::chrono::steady_clock::now();
  std::atomic<long long> firedAfterMs{0};
  timer.newTimeout(
      [&] {
        timedOut = true;
        firedAfterMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      },
      200ms);

  // 2. A request that is answered in time: its timeout is cancelled and never runs. cancel()
  //    returns true only for the call that wins (the answer, or nobody if the timeout ran).
  std::atomic<bool> wronglyFired{false};
  const Timeout answered = timer.newTimeout([&] { wronglyFired = true; }, 300ms);
  std::this_thread::sleep_for(50ms);  // ... the "response" arrives ...
  const bool cancelled = answered.cancel();

  // 3. The handle stays safe after the fact: a second cancel() just says false.
  const bool cancelledTwice = answered.cancel();

  std::this_thread::sleep_for(500ms);  // both deadlines are behind us now
  timer.stop();                        // joins the wheel thread: its writes are visible below

  samples::info("timeout fired after {} (deadline 200ms)",
                samples::human(std::chrono::milliseconds(firedAfterMs.load())));
  samples::info("answered request: cancel() = {}, second cancel() = {}, task ran = {}", cancelled,
                cancelledTwice, wronglyFired.load());
  const bool ok = timedOut && firedAfterMs >= 200 && cancelled && !cancelledTwice &&
                  !wronglyFired && answered.isCancelled();
  samples::info("{}", ok ? "01 ok" : "01 FAILED");
  return ok ? 0 : 1;
}
