// wheel_tour: a first look at wheelbeat's HashedWheelTimer, on the real (steady) clock.
//
// The wheel is the one timer a process shares for heartbeats, reconnects and retries. This tour
// schedules one-shot timeouts, cancels some, runs a task that re-arms itself (the heartbeat
// pattern), survives a task that throws, stops the wheel and prints its metrics. It also checks
// what it shows, so it doubles as a test (ctest: sample_wheel_tour). Run it: make demo.
#include "common/format.h"
#include "common/program.h"
#include "common/say.h"

#include <wheelbeat/core/hashed_wheel_timer.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <vector>

using namespace std::chrono_literals;
using wheelbeat::core::HashedWheelTimer;
using wheelbeat::core::Timeout;
using wheelbeat::core::TimerHooks;
using wheelbeat::core::WheelOptions;

namespace {

using Steady = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

// Tasks run on the wheel's thread; main waits here for the last one (a condition, not a sleep).
class Countdown {
public:
  explicit Countdown(int count) : left_(count) {}
  void done() {
    const std::lock_guard lock(mutex_);
    if (--left_ == 0) cv_.notify_all();
  }
  bool wait(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [this] { return left_ == 0; });
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int left_;
};

// The heartbeat pattern: each run schedules the next one from inside the task, through the
// handle's timer(), until it has beaten `limit` times. A task small enough (here 8 bytes) is
// stored inline: re-arming allocates nothing.
struct Pulse {
  std::atomic<int> beats{0};
  int limit = 5;
  Countdown* finished = nullptr;
};
constexpr auto kBeatPeriod = 150ms;

struct Heartbeat {
  Pulse* pulse;
  void operator()(const Timeout& self) const {
    const int n = ++pulse->beats;
    samples::info("  heartbeat {}/{}", n, pulse->limit);
    if (n < pulse->limit) {
      self.timer()->newTimeout(Heartbeat{pulse}, kBeatPeriod);
    } else {
      pulse->finished->done();  // stop re-arming: the task simply does not schedule again
    }
  }
};

int failures = 0;
void expect(bool ok, std::string_view what) {
  samples::info("  [{}] {}", ok ? " ok " : "FAIL", what);
  if (!ok) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (const auto status = samples::noOptions(
          argc, argv, "wheel_tour",
          "A first look at the shared hashed wheel timer on the real clock: one-shot timeouts, "
          "cancels, a task that re-arms itself, a task that throws, stop() and the metrics. It "
          "checks what it shows and exits 0 when all of it held."))
    return *status;
  samples::lineBufferedOutput();
  // Events main waits for: 4 one-shots, the heartbeat's last beat, the error hook's call.
  Countdown allDone(6);

  // 1. One timer per process: 10 ms ticks, 64 slots (one revolution = 640 ms; longer delays
  //    simply wait more revolutions). The error hook sees what a task throws.
  std::atomic<int> hookCalls{0};
  TimerHooks hooks;
  hooks.onTaskError = [&](const std::exception_ptr& error, const Timeout&) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      samples::info("  error hook: a task threw \"{}\"; the wheel goes on", e.what());
    }
    ++hookCalls;
    allDone.done();
  };
  HashedWheelTimer timer(WheelOptions{.tickDuration = 10ms, .ticksPerWheel = 64}, std::move(hooks));
  samples::info("wheel: tick {}, {} slots", samples::human(timer.tickDuration()),
                timer.ticksPerWheel());

  // 2. One-shots scheduled out of order run in deadline order, never early (lateness >= 0),
  //    normally less than one tick late.
  std::mutex mutex;  // guards `order` and `neverEarly` (written on the wheel thread)
  std::vector<int> order;
  bool neverEarly = true;
  for (const int delayMs : {400, 50, 250, 100}) {
    const auto deadline = Steady::now() + std::chrono::milliseconds(delayMs);
    timer.newTimeout(
        [&, delayMs, deadline] {
          const Ms late = Steady::now() - deadline;
          samples::info("  one-shot {:>5} ran, {} after its deadline",
                        samples::human(std::chrono::milliseconds(delayMs)),
                        samples::human(std::chrono::duration_cast<std::chrono::nanoseconds>(late)));
          const std::lock_guard lock(mutex);
          order.push_back(delayMs);
          neverEarly = neverEarly && late.count() >= 0;
          allDone.done();
        },
        std::chrono::milliseconds(delayMs));
  }

  // 3. Cancelled before their tick: they never run. Only the call that wins returns true.
  std::atomic<int> cancelledRan{0};
  const Timeout a = timer.newTimeout([&] { ++cancelledRan; }, 150ms);
  const Timeout b = timer.newTimeout([&] { ++cancelledRan; }, 300ms);
  const bool cancelsWon = a.cancel() && b.cancel();
  const bool secondCancelLost = !a.cancel();

  // 4. The self-re-arming heartbeat: 5 beats, 150 ms apart.
  Pulse pulse{.limit = 5, .finished = &allDone};
  timer.newTimeout(Heartbeat{&pulse}, kBeatPeriod);

  // 5. A task that throws: caught by the wheel's safe-run, logged once (stderr), counted in the
  //    metrics and handed to the error hook. The wheel keeps running the others.
  timer.newTimeout([] { throw std::runtime_error("simulated failure"); }, 120ms);

  // 6. Far in the future: still pending when we stop, so stop() hands it back, cancelled.
  const Timeout far = timer.newTimeout([] {}, 10s);

  const bool finished = allDone.wait(5s);
  const std::vector<Timeout> unprocessed = timer.stop();  // wakes and joins the wheel thread
  const auto metrics = timer.metrics();
  samples::info("stopped: {} timeout(s) handed back", unprocessed.size());
  samples::info("metrics: {}", metrics.toString());

  // Checks (stop() joined the wheel thread, so everything it wrote is visible here).
  samples::info("checks:");
  expect(finished, "every expected event arrived within 5 s");
  expect(order == std::vector<int>{50, 100, 250, 400}, "one-shots ran in deadline order");
  expect(neverEarly, "no one-shot ran before its deadline");
  expect(cancelsWon && secondCancelLost, "cancel() returned true once per timeout");
  expect(cancelledRan == 0 && a.isCancelled(), "cancelled timeouts never ran");
  expect(pulse.beats == 5, "the heartbeat beat exactly 5 times, then stopped re-arming");
  expect(hookCalls == 1 && metrics.taskErrors == 1, "the throwing task was caught and counted");
  expect(unprocessed.size() == 1 && unprocessed[0] == far && far.isCancelled(),
         "stop() handed back the far timeout, cancelled");
  expect(timer.isStopped() && metrics.pending == 0, "stopped, nothing pending");
  expect(metrics.scheduled == 13 && metrics.fired == 10 && metrics.cancelled == 3,
         "metrics: 13 scheduled, 10 fired, 3 cancelled");
  samples::info("{}", failures == 0 ? "tour complete" : "tour FAILED");
  return failures == 0 ? 0 : 1;
}
