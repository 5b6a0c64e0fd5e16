// net::ShutdownSignal: SIGINT / SIGTERM as a wait() that returns true, wake() as one that returns
// false, one instance at a time, the previous handlers restored. Signals are sent to this process
// with std::raise (the handler runs on the raising thread, before raise returns).
#include <wheelbeat/net/shutdown_signal.h>

#include <csignal>

using wheelbeat::net::ShutdownSignal;
using namespace std::chrono_literals;

namespace {

using Handler = void (*)(int);
Handler handlerOf(int signo) {
  struct sigaction current {};
  ::sigaction(signo, nullptr, &current);
  return current.sa_handler;
}

}  // namespace

TEST_SUITE("net") {

TEST_CASE("shutdown signal: SIGINT ends the wait and stays requested - the first signal counts") {
  ShutdownSignal shutdown;
  CHECK_FALSE(shutdown.wait(20ms));  // nothing yet: the limit passes
  CHECK_FALSE(shutdown.requested());
  CHECK(shutdown.signal() == 0);
  std::raise(SIGINT);
  CHECK(shutdown.wait(0ms));
  CHECK(shutdown.wait(-1ms));  // forever after, even with no limit
  std::raise(SIGTERM);
  CHECK(shutdown.signal() == SIGINT);
}

TEST_CASE("shutdown signal: wake() ends a wait on another thread without a signal - raise()") {
  ShutdownSignal shutdown;
  std::atomic<int> woken{-1};
  std::thread waiter([&] { woken = shutdown.wait(-1ms) ? 1 : 0; });
  // The waiter may not have reached poll() yet: the byte waits in the pipe for it then.
  shutdown.wake();
  waiter.join();
  CHECK(woken == 0);
  CHECK_FALSE(shutdown.requested());
  ShutdownSignal::raise();
  CHECK(shutdown.requested());
  CHECK(shutdown.signal() == SIGTERM);
}

TEST_CASE("shutdown signal: one at a time - handlers restored - SIGPIPE ignored") {
  const Handler intBefore = handlerOf(SIGINT);
  const Handler termBefore = handlerOf(SIGTERM);
  {
    ShutdownSignal shutdown;
    CHECK((handlerOf(SIGINT) != intBefore));
    CHECK_THROWS_WITH_AS(ShutdownSignal(), doctest::Contains("another one lives"),
                         std::logic_error);
    CHECK((handlerOf(SIGPIPE) == SIG_IGN));
  }
  CHECK((handlerOf(SIGINT) == intBefore));
  CHECK((handlerOf(SIGTERM) == termBefore));
  ShutdownSignal again;  // free again, nothing requested
  CHECK_FALSE(again.requested());
}
}  // TEST_SUITE("net")
