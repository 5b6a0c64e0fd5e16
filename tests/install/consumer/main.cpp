// Consumer of the installed package: schedule one timeout on a real-clock wheel and check it ran;
// ask the tasks layer for a retry decision (proves wheelbeat::tasks links, not only exports).
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <chrono>
#include <cstdio>
#include <future>

int main() {
  using namespace std::chrono_literals;
  wheelbeat::core::HashedWheelTimer timer(wheelbeat::core::WheelOptions{.tickDuration = 1ms});
  std::promise<void> ran;
  const auto timeout = timer.newTimeout([&ran] { ran.set_value(); }, 5ms);
  if (ran.get_future().wait_for(10s) != std::future_status::ready) {
    std::fputs("consumer: the timeout did not run within 10 s\n", stderr);
    return 1;
  }
  timer.stop();  // joins the wheel thread: the timeout's outcome is final
  if (!timeout.isExpired() || timer.pendingTimeouts() != 0) {
    std::fputs("consumer: the timeout is not marked expired, or something is still pending\n",
               stderr);
    return 1;
  }
  wheelbeat::tasks::RetryOptions retry;
  retry.jitter = wheelbeat::tasks::Jitter::None;
  wheelbeat::tasks::RetryState state(retry, 0ns, /*seed=*/1);
  const auto decision = state.next(0ns, "ECONNREFUSED");
  if (!decision.retry || decision.delay != 1s) {
    std::fputs("consumer: the default retry policy did not grant a 1 s retry\n", stderr);
    return 1;
  }
  std::puts("consumer: installed wheelbeat works");
  return 0;
}
