#include "signals.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <stdexcept>

namespace wheelbeat::runtime::detail {
namespace {

// The pipe: the handler writes kSignalled, the destructor kQuit.
int pipeFds[2] = {-1, -1};
std::atomic<bool> taken{false};  // a watcher lives
struct sigaction previousInt {};
struct sigaction previousTerm {};
constexpr char kSignalled = 's';
constexpr char kQuit = 'q';

extern "C" void onSignal(int) {
  const int saved = errno;  // write() may change errno under the interrupted code's feet
  [[maybe_unused]] const ssize_t n = ::write(pipeFds[1], &kSignalled, 1);  // full: already woken
  errno = saved;
}

}  // namespace

SignalWatcher::SignalWatcher(std::function<void()> onSignal) : onSignal_(std::move(onSignal)) {
  if (taken.exchange(true)) {
    throw std::logic_error(
        "wheelbeat::Runtime::stopOnSignals: another runtime of this process has the SIGTERM / "
        "SIGINT handlers (expected: one at a time)");
  }
  if (::pipe2(pipeFds, O_CLOEXEC | O_NONBLOCK) != 0) {
    taken = false;
    throw std::runtime_error("wheelbeat::Runtime::stopOnSignals: pipe2 failed");
  }
  thread_ = std::thread([this] { watch(); });
  struct sigaction action {};
  action.sa_handler = detail::onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // the library's threads keep their blocking calls going
  ::sigaction(SIGINT, &action, &previousInt);
  ::sigaction(SIGTERM, &action, &previousTerm);
  std::signal(SIGPIPE, SIG_IGN);  // see the header: EPIPE instead of death
}

SignalWatcher::~SignalWatcher() {
  ::sigaction(SIGINT, &previousInt, nullptr);
  ::sigaction(SIGTERM, &previousTerm, nullptr);
  // A blocking write: the quit byte must arrive even if signal bytes filled the pipe.
  const int flags = ::fcntl(pipeFds[1], F_GETFL);
  ::fcntl(pipeFds[1], F_SETFL, flags & ~O_NONBLOCK);
  while (::write(pipeFds[1], &kQuit, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
  pipeFds[0] = pipeFds[1] = -1;
  taken = false;
}

void SignalWatcher::watch() {
  bool signalled = false;
  for (;;) {
    pollfd fd{pipeFds[0], POLLIN, 0};
    if (::poll(&fd, 1, -1) < 0) continue;  // EINTR
    char byte = 0;
    while (::read(pipeFds[0], &byte, 1) == 1) {
      if (byte == kQuit) return;
      if (!signalled) {  // the first signal stops; later ones find it stopping
        signalled = true;
        onSignal_();
      }
    }
  }
}

}  // namespace wheelbeat::runtime::detail
