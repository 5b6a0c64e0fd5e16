// wheelbeat_lifetime_probe CASE: one destruction order per run, for the ctest lifetime_* tests.
//   timer-before-user   the wheel destroyed while a user holds its token: the process must end
//                       with a message naming the user (never reaching "survived")
//   user-first          the user's token first, then the wheel: exits 0, "clean"
#include <wheelbeat/core/hashed_wheel_timer.h>

#include <cstdio>
#include <memory>
#include <string_view>

int main(int argc, char** argv) {
  const std::string_view which = argc > 1 ? argv[1] : "";
  auto timer = std::make_unique<wheelbeat::core::HashedWheelTimer>();
  auto use = timer->use("probe user");
  if (which == "timer-before-user") {
    timer.reset();  // must abort
    std::puts("survived");
    return 0;
  }
  if (which == "user-first") {
    use.reset();
    timer.reset();
    std::puts("clean");
    return 0;
  }
  std::fprintf(stderr, "usage: wheelbeat_lifetime_probe timer-before-user|user-first\n");
  return 2;
}
