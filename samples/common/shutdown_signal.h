// ShutdownSignal: SIGINT / SIGTERM turned into something main can wait for, without libuv.
//
// A signal handler may only call async-signal-safe functions, so it writes one byte to a pipe
// (the self-pipe trick) and main polls the pipe's other end. Nothing else runs in the handler:
// stopping clients, servers, the loop and the timer happens on main's thread, in order.
//
//   ShutdownSignal shutdown;                  // installs the handlers
//   while (!shutdown.wait(1s)) sendSomething();
//   client.close(); loop.stop(); timer.stop();
//
// It also ignores SIGPIPE, as every process using wheelbeat's net layer must: libuv writes to
// sockets with plain write(2), and a write to a connection the peer just reset would otherwise
// kill the process (the write's EPIPE reaches the channel's onClosed instead).
//
// One instance per process (the handlers are process-wide). Thread: wait() and requested() from
// any thread; the destructor restores the previous handlers.
#pragma once

#include <chrono>

namespace samples {

class ShutdownSignal {
public:
  ShutdownSignal();
  ~ShutdownSignal();
  ShutdownSignal(const ShutdownSignal&) = delete;
  ShutdownSignal& operator=(const ShutdownSignal&) = delete;

  // Waits up to `limit` for SIGINT or SIGTERM. True once one arrived (and forever after).
  bool wait(std::chrono::milliseconds limit);
  // A signal arrived (does not wait).
  [[nodiscard]] bool requested() { return wait(std::chrono::milliseconds(0)); }
  // The signal that arrived (SIGINT, SIGTERM), 0 before.
  [[nodiscard]] int signal() const noexcept;
  // Asks for shutdown as a signal would (e.g. a child that saw its parent go away).
  static void raise() noexcept;
};

}  // namespace samples
