// Tutorial 02 — a periodic task that re-arms itself.
//
// The wheel has no "periodic" timeouts: a task that wants to run again schedules its next run
// itself, from inside its body, through the handle it receives (Dubbo's AbstractTimerTask and
// wheelbeat's heartbeat, reconnect and close-idle tasks all work this way). Each run decides
// whether and when to come back, so stopping is simply not re-arming, and a run can adapt the
// next delay (heartbeats re-arm for exactly the time left until the link would be idle).
#include "common/format.h"
#include "common/program.h"
#include "common/say.h"

#include <wheelbeat/core/hashed_wheel_timer.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <future>

using namespace std::chrono_literals;
using wheelbeat::core::HashedWheelTimer;
using wheelbeat::core::Timeout;
using wheelbeat::core::WheelOptions;

namespace {

// Small enough (two pointers) to be stored inline in the wheel: re-arming allocates nothing.
struct Ticker {
  std::atomic<int>* runs;
  std::promise<void>* finished;

  void operator()(const Timeout& self) const {
    const int n = ++*runs;
    samples::info("tick {}", n);
    if (n < 5) {
      self.timer()->newTimeout(Ticker{*this}, 100ms);  // come back in 100 ms
    } else {
      finished->set_value();  // the 5th run does not re-arm: the chain ends here
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (const auto status = samples::noOptions(
          argc, argv, "tutorial_02_periodic_task",
          "Tutorial 02: a periodic task that re-arms itself from inside its own run."))
    return *status;
  samples::lineBufferedOutput();
  HashedWheelTimer timer(WheelOptions{.tickDuration = 10ms});
  std::atomic<int> runs{0};
  std::promise<void> finished;
  const auto start = std::chrono::steady_clock::now();
  timer.newTimeout(Ticker{&runs, &finished}, 100ms);

  const bool done = finished.get_future().wait_for(5s) == std::future_status::ready;
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const auto pending = timer.pendingTimeouts();  // nothing re-armed after the last run
  timer.stop();

  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  samples::info("5 runs in {} (at least 5 x 100ms), {} timeout(s) left pending",
                samples::human(elapsed), pending);
  const bool ok = done && runs == 5 && ms >= 500 && pending == 0;
  samples::info("{}", ok ? "02 ok" : "02 FAILED");
  return ok ? 0 : 1;
}
