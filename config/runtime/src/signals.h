// SignalWatcher: SIGTERM / SIGINT turned into a call on an ordinary thread: a watcher thread waits
// on a net::ShutdownSignal (the self-pipe, SIGPIPE ignored) and runs `onSignal` there, where
// stopping loops and joining threads is allowed. The first signal calls it; later ones find it
// called.
//
// One watcher per process at a time (the handlers are process-wide): the constructor throws
// std::logic_error while another one (or another net::ShutdownSignal) lives. The destructor
// restores the previous SIGTERM and SIGINT handlers and joins the thread (waiting for an
// `onSignal` that is running). Thread: construct and destroy on any thread but the watcher's own.
#pragma once

#include <wheelbeat/net/shutdown_signal.h>

#include <atomic>
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
  std::function<void()> onSignal_;
  net::ShutdownSignal signal_;
  std::atomic<bool> quit_{false};
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace wheelbeat::runtime::detail
