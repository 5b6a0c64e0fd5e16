#include <wheelbeat/net/shutdown_signal.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <stdexcept>
#include <system_error>

namespace wheelbeat::net {
namespace {

// Process-wide, as the handlers are. The pipe's ends are atomics: raise() may run on any thread
// while the owner is being made or destroyed.
std::atomic<int> readFd{-1};
std::atomic<int> writeFd{-1};
std::atomic<int> received{0};
std::atomic<bool> taken{false};  // a ShutdownSignal lives
struct sigaction previousInt {};
struct sigaction previousTerm {};

void poke() noexcept {
  const int saved = errno;  // write() may change errno under the interrupted code's feet
  // A full pipe already wakes the reader: the byte may be dropped.
  if (const int fd = writeFd.load(); fd >= 0) {
    [[maybe_unused]] const ssize_t n = ::write(fd, "x", 1);
  }
  errno = saved;
}

extern "C" void onSignal(int signo) {
  int none = 0;
  received.compare_exchange_strong(none, signo);  // the first signal is the one reported
  poke();
}

void drain(int fd) noexcept {
  char bytes[64];
  while (::read(fd, bytes, sizeof bytes) > 0) {
  }
}

}  // namespace

ShutdownSignal::ShutdownSignal() {
  if (taken.exchange(true)) {
    throw std::logic_error(
        "net::ShutdownSignal: another one lives in this process (expected: one at a time; the "
        "SIGINT / SIGTERM handlers are process-wide)");
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    taken = false;
    throw std::system_error(errno, std::generic_category(), "net::ShutdownSignal: pipe2");
  }
  received = 0;
  readFd = fds[0];
  writeFd = fds[1];
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
  ::close(writeFd.exchange(-1));
  ::close(readFd.exchange(-1));
  taken = false;
}

bool ShutdownSignal::wait(std::chrono::milliseconds limit) {
  if (received.load() != 0) return true;
  pollfd fd{readFd.load(), POLLIN, 0};
  const int timeout = limit.count() < 0 ? -1 : static_cast<int>(limit.count());
  if (::poll(&fd, 1, timeout) > 0) drain(fd.fd);  // a signal or wake(): either way, awake
  return received.load() != 0;
}

int ShutdownSignal::signal() const noexcept { return received.load(); }

void ShutdownSignal::wake() noexcept { poke(); }

void ShutdownSignal::raise() noexcept { onSignal(SIGTERM); }

}  // namespace wheelbeat::net
