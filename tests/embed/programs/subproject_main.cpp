// The add_subdirectory consumer's program: a parent project that sets no C++ standard includes
// wheelbeat's public headers (which need C++20: the standard must come with wheelbeat::core),
// runs one timeout on a real-clock wheel and checks the linked version.
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/version.h>

#include <chrono>
#include <cstdio>
#include <future>

static_assert(__cplusplus >= 202002L, "wheelbeat::core did not bring C++20 to its consumer");

int main() {
  using namespace std::chrono_literals;
  if (wheelbeat::version() != WHEELBEAT_VERSION_STRING) {
    std::fputs("subproject: version() differs from the header's version\n", stderr);
    return 1;
  }
  wheelbeat::core::HashedWheelTimer timer(wheelbeat::core::WheelOptions{.tickDuration = 1ms});
  std::promise<void> ran;
  const auto timeout = timer.newTimeout([&ran] { ran.set_value(); }, 5ms);
  const bool inTime = ran.get_future().wait_for(10s) == std::future_status::ready;
  timer.stop();  // joins the wheel thread: the timeout's outcome is final
  if (!inTime || !timeout.isExpired()) {
    std::fputs("subproject: the timeout did not run within 10 s\n", stderr);
    return 1;
  }
  std::printf("subproject: wheelbeat %s works\n", WHEELBEAT_VERSION_STRING);
  return 0;
}
