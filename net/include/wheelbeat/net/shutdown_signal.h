// ShutdownSignal: SIGINT / SIGTERM turned into something a thread can wait for — a program's main
// loop, or a watcher thread that then stops everything (wheelbeat::Runtime::stopOnSignals()).
//
//   net::ShutdownSignal shutdown;               // installs the handlers
//   while (!shutdown.wait(1s)) sendSomething();
//   client.close(); loop.stop(); timer.stop();  // on this thread, in order
//
// A signal handler may only call async-signal-safe functions, so it records the signal and writes
// one byte to a pipe (the self-pipe trick); wait() polls the pipe's other end. Nothing else runs
// in the handler: stopping clients, servers, loops and the timer happens on an ordinary thread.
//
// It also ignores SIGPIPE for as long as the process lives, as every process using the net layer
// must: libuv writes to sockets with plain write(2), and a write to a connection the peer just
// reset would otherwise kill the process (the EPIPE reaches the channel's onClosed instead).
//
// One instance per process at a time (the handlers are process-wide): the constructor throws
// std::logic_error while another one lives. The destructor restores the previous SIGINT and
// SIGTERM handlers. Thread: construct and destroy on one thread, with no wait() running; wait(),
// requested(), signal(), wake() and raise() from any thread.
#pragma once

#include <chrono>

namespace wheelbeat::net {

class ShutdownSignal {
public:
  // Throws std::logic_error while another ShutdownSignal lives, std::system_error when the pipe
  // cannot be made (no handler installed then).
  ShutdownSignal();
  ~ShutdownSignal();
  ShutdownSignal(const ShutdownSignal&) = delete;
  ShutdownSignal& operator=(const ShutdownSignal&) = delete;

  // Waits up to `limit` (a negative one: no limit) for SIGINT or SIGTERM. True once one arrived
  // (at once, and forever after); false when the limit passed or wake() ended the wait first.
  bool wait(std::chrono::milliseconds limit);
  // A signal arrived (does not wait).
  [[nodiscard]] bool requested() { return wait(std::chrono::milliseconds(0)); }
  // The signal that arrived first (SIGINT, SIGTERM), 0 before.
  [[nodiscard]] int signal() const noexcept;
  // Ends a wait() running on another thread without a signal (it returns false unless one
  // arrived): how a watcher thread is told to quit.
  void wake() noexcept;
  // Asks for shutdown as SIGTERM would, e.g. a child that saw its parent go away. Also from a
  // signal handler. Does nothing while no ShutdownSignal lives.
  static void raise() noexcept;
};

}  // namespace wheelbeat::net
