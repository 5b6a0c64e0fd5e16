// EventLoop: one libuv loop on its own thread, shared by any number of servers and clients.
//
// Posting
//   post(fn) queues fn to run on the loop thread, in post order, and wakes the loop with one
//   uv_async_send. Posts are coalesced: everything posted before the loop wakes runs in that one
//   wake-up (a mutex-protected vector is swapped out by the async callback), so 5 000 heartbeats
//   handed over by one wheel tick cost one wake-up, not 5 000. The loop runs them in shares of
//   32 and polls I/O between shares (without sleeping), so a burst of writes never holds up the
//   reads of their answers, nor any other socket, until the whole burst is out.
//   A channel's send from another thread hands its write over without a closure (one
//   compare-and-swap on a list of the loop's; 5 000 heartbeats of a tick take one wake-up too).
//   Those writes run first in each wake-up: a frame queued before post(fn) is written before fn
//   runs; one queued after it may be written before fn runs as well.
//
// Shutdown
//   stop() refuses further posts, runs what was already posted, closes every handle still open
//   (channels still open see CloseKind::LoopStopped), runs the loop until every close callback
//   has run, then calls uv_loop_close() and joins the thread. Its result is uv_loop_close()'s:
//   0 means every handle was closed. Stop servers and clients (TcpServer::stop(),
//   TcpClient::close()) before the loop: that is the graceful order; stop() is the safety net.
//
// SIGPIPE
//   libuv writes with write(2): a write to a connection the peer has just reset raises SIGPIPE,
//   whose default action kills the process. The first EventLoop of a process therefore sets
//   SIGPIPE to SIG_IGN if it still has its default action (a handler of yours is left alone);
//   the write then fails with EPIPE and that channel closes with kind Reset.
//
// Threads
//   post(), call(), isLoopThread(), isStopped(), the counters: any thread. stop(): any thread but
//   the loop thread (it joins it). Posted functions run on the loop thread; one that throws is
//   logged (core::log, Error) and counted; the loop goes on.
#pragma once

#include <wheelbeat/core/users.h>
#include <wheelbeat/net/options.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct uv_loop_s;  // libuv's loop (uv_loop_t), kept opaque so this header needs no <uv.h>

namespace wheelbeat::net {

class EventLoop {
public:
  // Initialises the loop and starts its thread (named `name`, up to 15 characters are kept).
  // Throws std::runtime_error if libuv cannot initialise the loop.
  explicit EventLoop(std::string name = "wheelbeat-loop", LoopOptions options = {});
  explicit EventLoop(LoopOptions options) : EventLoop("wheelbeat-loop", options) {}
  // stop() (its result is logged if not 0). With a user still registered (use()), ends the
  // process instead, naming the users (core/users.h): a client or server destroyed after its
  // loop would otherwise touch freed memory.
  ~EventLoop();

  // Registers `name` ("TcpClient 127.0.0.1:20880") as a user of this loop until the token is
  // destroyed: clients, servers and directories hold one for their lifetime. Any thread.
  [[nodiscard]] core::Users::Use use(std::string name) { return users_.add(std::move(name)); }
  [[nodiscard]] std::vector<std::string> users() const { return users_.names(); }

  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Queues fn for the loop thread. Returns false (fn dropped, not run) once stop() has begun.
  // From the loop thread itself fn is queued too (never run inside post()).
  bool post(std::function<void()> fn);

  // Runs fn on the loop thread and waits for it: inline when called on the loop thread (an
  // exception then propagates as is). From another thread, an exception fn throws reaches the
  // caller as std::runtime_error with the same what() (the object itself stays on the loop
  // thread). Returns false (fn not run) if the loop is stopping or stopped.
  bool call(const std::function<void()>& fn);

  [[nodiscard]] bool isLoopThread() const noexcept;
  [[nodiscard]] bool isStopped() const noexcept;

  // See "Shutdown". Returns uv_loop_close()'s result (0 = clean); a second call returns the
  // first call's result. Throws std::logic_error on the loop thread.
  int stop();

  // Wake-ups that took posted work (each takes everything posted since the previous one; the
  // loop's own resumptions between shares are not counted), functions run (added once per share
  // of at most 32, when it is over), and functions that threw, so far. Thread: any.
  [[nodiscard]] std::uint64_t wakeups() const noexcept;
  [[nodiscard]] std::uint64_t tasksRun() const noexcept;
  [[nodiscard]] std::uint64_t taskErrors() const noexcept;

  // The libuv loop, for net/ internals and code that adds its own handles (loop thread only;
  // every such handle must be closed before stop(), or stop() reports UV_EBUSY).
  [[nodiscard]] uv_loop_s* native() const noexcept;

  class Impl;

private:
  core::Users users_;  // declared first: checked before anything else goes
  std::unique_ptr<Impl> impl_;
};

}  // namespace wheelbeat::net
