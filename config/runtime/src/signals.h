// SignalWatcher: SIGTERM / SIGINT turned into a call on an ordinary thread.
//
// A signal handler may only call async-signal-safe functions, so it writes one byte to a pipe
// (the self-pipe trick); a watcher thread blocks in poll() on the pipe's other end and runs
// `onSignal` there, where stopping loops and joining threads is allowed. SIGPIPE is ignored for as
// long as the process lives (libuv writes with write(2): a write to a connection the peer reset
// must report EPIPE to its channel, not kill the process).
//
// One watcher per process at a time (the handlers are process-wide): the constructor throws
// std::logic_error while another one lives. The destructor restores the previous SIGTERM and
// SIGINT handlers and joins the thread (waiting for an `onSignal` that is running).
// Thread: construct and destroy on any thread but the watcher's own.
#pragma once

#include <functional>
#include <thread>

namespace wheelbeat::runtime::detail {

class SignalWatcher {
public:
  explicit SignalWatcher(std::function<void()> onSignal);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

private:
  void watch();

  std::function<void()> onSignal_;
  std::thread thread_;
};

}  // namespace wheelbeat::runtime::detail
