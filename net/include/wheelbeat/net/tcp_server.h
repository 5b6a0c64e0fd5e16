// TcpServer: accepts TCP connections on a shared EventLoop, one net::Channel per connection, each
// watched by a CloseTimerTask on the shared wheel (closes it when read- or write-idle beyond
// ServerOptions::heartbeat.resolved().closeTimeout). Heartbeat requests are answered by the
// channel itself (one whole 17-byte response, same id); every other frame goes to the handler.
//
//   EventLoop loop;
//   core::HashedWheelTimer timer;         // the process's one wheel, shared by servers and clients
//   TcpServer server(loop, timer, options, ChannelHandler{
//       .onFrame = [](Channel& ch, const FrameView& f) {
//         if (f.isRequest()) (void)ch.send(f.serialization(), kStatusOk, f.id, "pong");
//       }});
//   std::uint16_t port = server.listen();   // options.listen.port 0 = an ephemeral port
//   ...
//   server.stop();                          // every channel closed when it returns
//
// Graceful shutdown (Dubbo's order; a registry-aware caller unregisters first, see
// registry/shutdown.h): shutdown(grace) stops accepting, sends Dubbo's READONLY event on every
// channel (clients stop sending new calls there), keeps answering what arrives, and closes
// everything once no request is left unanswered (and at least 100 ms, or `grace` if shorter,
// have passed: calls sent before a client read READONLY are still arriving) or `grace` has
// passed.
//
// Loop group: a server built on an EventLoopGroup spreads its connections over the group's
// loops. Loop 0 listens and accepts; connection k goes to loop k mod size() (loop 0 keeps its
// share): taken on loop 0, its descriptor duplicated and opened on the target loop. Every
// callback of a channel runs on that channel's own loop, so the handler's callbacks run on
// several threads at once (state shared between channels needs its own synchronisation).
// maxConnections, the counters, stop() and shutdown() cover every loop; a drain closes each
// loop's channels once that loop has nothing unanswered.
//   Why one acceptor and not one SO_REUSEPORT listener per loop (both were built and measured,
// tests/bench/accept_spread.cpp, 4 loops on a 2-core machine): the kernel hashes each
// connection's 4-tuple to a listener, which is even only on average (1 000 connections: 224..287
// per loop against 250 each here). A Dubbo-style consumer keeps one or a few long-lived
// connections per provider, so a server sees few connections, and there the hash leaves loops
// idle while others carry two or three: with 4 connections on 4 loops every loop got one in 6-13 %
// of 200 trials (4!/4^4 = 9.4 %), 1.2 loops idle on average; round robin: every trial. The
// hand-over costs an fcntl (dup), a close and a post per connection on loop 0; the accept rate
// measured the same within the noise for both, far above what a heartbeat-driven RPC fleet
// opens. Besides, a closing SO_REUSEPORT listener resets the
// connections still in its own backlog, and another process of the same user could bind the
// same port and take a share of the connections.
//
// Threads: listen(), stop(), shutdown(), port(), connections(): any thread. Off the loop
// thread(s) listen() and stop() wait for the loop(s); on a loop thread (inside a handler)
// listen() runs inline if that is the listening loop (a group's loop 0; else it waits for it) and
// stop() only begins the shutdown. The handler's callbacks run on the loop thread of their
// channel.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/event_loop_group.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/tasks/task_listener.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace wheelbeat::net {

namespace detail {
class ServerCore;
}

struct ShutdownReport {
  std::size_t notified = 0;             // channels the READONLY event was queued on
  std::int64_t inFlightAtStart = 0;     // requests unanswered when the shutdown began
  std::int64_t abandoned = 0;           // still unanswered when `grace` ran out (0: drained)
  std::chrono::nanoseconds elapsed{0};  // from the call to every channel closed
};

class TcpServer {
public:
  // Validates `options` against the timer's tick (core::OptionError, see validate(options, tick)
  // in options.h). The loop and the timer must
  // outlive the server. options.taskListener / taskMetrics observe the close-idle tasks.
  TcpServer(EventLoop& loop, core::HashedWheelTimer& timer, ServerOptions options,
            ChannelHandler handler);
  // Over every loop of `group` (see "Loop group"); otherwise as above. The group and the timer
  // must outlive the server; `handler` is shared by every loop's channels.
  TcpServer(EventLoopGroup& group, core::HashedWheelTimer& timer, const ServerOptions& options,
            ChannelHandler handler);
  // stop().
  ~TcpServer();

  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;

  // Binds options.listen and starts accepting. A host name is resolved here, on the calling
  // thread (blocking; the first address of the answer). Returns the bound port (the ephemeral
  // one for port 0). Throws NetException (e.g. EADDRINUSE, EAI_NONAME for an unknown host),
  // std::logic_error when called twice or after stop(), std::runtime_error if the loop stopped.
  std::uint16_t listen();
  // The bound port; 0 before listen().
  [[nodiscard]] std::uint16_t port() const noexcept;
  // Channels open now (accepted, not yet fully closed; on a group also those being handed to
  // their loop). maxConnections bounds this count.
  [[nodiscard]] std::size_t connections() const noexcept;
  // Connections accepted since construction.
  [[nodiscard]] std::uint64_t accepted() const noexcept;
  // Connections closed right after accept since construction: beyond options.maxConnections, or
  // whose channel could not be set up (e.g. out of memory). Not counted in accepted().
  [[nodiscard]] std::uint64_t rejected() const noexcept;

  // Graceful stop: stops accepting, closes every channel (onClosed: ClosedByOwner "server
  // stopped"), cancels their close-idle tasks; off the loop thread it returns once the listener
  // and every channel are fully closed. Idempotent. If the loop is already stopping, its own
  // shutdown closes everything and stop() returns at once.
  void stop();
  // Graceful stop (see the file comment): returns once every channel is closed, at most `grace`
  // (plus a wheel tick) after the call. Requests arriving meanwhile are handed to the handler and
  // their answers sent. Off the loop thread it waits; on it, it only begins (the report then
  // holds `notified` and `inFlightAtStart`, of the calling loop's channels only on a group).
  // After stop() or a second call: closes what is left and reports zeros. On a group the loops
  // begin one after the other, loop 0 (the acceptor) first; the report sums them. Throws
  // std::invalid_argument for a negative `grace`.
  ShutdownReport shutdown(std::chrono::nanoseconds grace);
  // shutdown(options.shutdownGrace).
  ShutdownReport shutdown();
  // Requests received and not yet answered, over every open channel. Any thread.
  [[nodiscard]] std::int64_t unanswered() const noexcept;

private:
  [[nodiscard]] bool onLoopThread() const noexcept;  // one of loops_' threads
  void registerUses(core::HashedWheelTimer& timer, const Endpoint& listen);
  void beginShutdownOnLoop(std::chrono::nanoseconds grace, ShutdownReport& report);
  template <typename T, typename F>
  [[nodiscard]] T sum(F field) const noexcept;  // a counter over every core

  std::vector<EventLoop*> loops_;       // loops_[i] runs cores_[i]
  std::vector<core::Users::Use> uses_;  // of every loop and the timer (core/users.h)
  std::vector<std::shared_ptr<detail::ServerCore>> cores_;  // cores_[0] listens
};

}  // namespace wheelbeat::net
