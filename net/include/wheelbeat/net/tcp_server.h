// TcpServer: accepts TCP connections on a shared EventLoop, one net::Channel per connection, each
// watched by a CloseTimerTask on the shared wheel (closes it when read- or write-idle beyond
// ServerOptions::heartbeat.resolved().closeTimeout). Heartbeat requests are answered by the
// channel itself (one whole 17-byte response, same id); every other frame goes to the handler.
//
//   EventLoop loop;
//   core::HashedWheelTimer& timer = sharedTimer();
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
// Threads: listen(), stop(), shutdown(), port(), connections(): any thread. Off the loop thread
// listen() and stop() wait for the loop; on the loop thread (inside a handler) listen() runs inline
// and stop() only begins the shutdown. The handler's callbacks run on the loop thread.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/tasks/task_listener.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

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
  // Validates `options` (std::invalid_argument, see options.h). The loop and the timer must
  // outlive the server. options.taskListener / taskMetrics observe the close-idle tasks.
  TcpServer(EventLoop& loop, core::HashedWheelTimer& timer, ServerOptions options,
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
  // Channels open now (accepted, not yet fully closed).
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
  // holds `notified` and `inFlightAtStart`). After stop() or a second call: closes what is left
  // and reports zeros. Throws std::invalid_argument for a negative `grace`.
  ShutdownReport shutdown(std::chrono::nanoseconds grace);
  // shutdown(options.shutdownGrace).
  ShutdownReport shutdown();
  // Requests received and not yet answered, over every open channel. Any thread.
  [[nodiscard]] std::int64_t unanswered() const noexcept;

private:
  EventLoop& loop_;
  std::shared_ptr<detail::ServerCore> core_;
};

}  // namespace wheelbeat::net
