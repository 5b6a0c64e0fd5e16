#include "shutdown_signal.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <stdexcept>

namespace samples {
namespace {

int pipeFds[2] = {-1, -1};
std::atomic<int> received{0};
struct sigaction previousInt {};
struct sigaction previousTerm {};

extern "C" void onSignal(int signo) {
  const int saved = errno;  // write() may change errno under the interrupted code's feet
  received.store(signo);
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(pipeFds[1], &byte, 1);  // full pipe: already woken
  errno = saved;
}

}  // namespace

ShutdownSignal::ShutdownSignal() {
  if (::pipe2(pipeFds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe2 failed");
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // the library's threads keep their blocking calls going
  ::sigaction(SIGINT, &action, &previousInt);
  ::sigaction(SIGTERM, &action, &previousTerm);
  std::signal(SIGPIPE, SIG_IGN);  // see the header: EPIPE instead of death
}

ShutdownSignal::~ShutdownSignal() {
  ::sigaction(SIGINT, &previousInt, nullptr);
  ::sigaction(SIGTERM, &previousTerm, nullptr);
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
  pipeFds[0] = pipeFds[1] = -1;
}

bool ShutdownSignal::wait(std::chrono::milliseconds limit) {
  if (received.load() != 0) return true;
  pollfd fd{pipeFds[0], POLLIN, 0};
  const int ready = ::poll(&fd, 1, static_cast<int>(limit.count()));
  return ready > 0 || received.load() != 0;
}

int ShutdownSignal::signal() const noexcept { return received.load(); }

void ShutdownSignal::raise() noexcept { onSignal(SIGTERM); }

}  // namespace samples
