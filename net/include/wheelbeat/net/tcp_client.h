// TcpClient: one connection to a server that keeps itself alive. A HeartbeatTimerTask and a
// ReconnectTimerTask on the shared wheel watch the client's channel: heartbeats when the
// connection is idle, and a reconnect (backoff with jitter from heartbeat.reconnect) when
// it is down or read-idle beyond idleTimeout (half-open). The channel (channel()) is one stable
// object across reconnects: each (re)connect swaps the socket underneath it.
//
//   TcpClient client(loop, timer, options, ChannelHandler{
//       .onClosed = [](Channel&, const CloseReason& why) { fmt::print("closed: {}\n", why); }});
//   client.start();
//   client.channel().request("ping", 1s, [](const CallResult& r) { /* loop thread */ });
//   ...
//   client.close();   // tasks cancelled, socket closed; no reconnect after this
//
// States: Disconnected (initially, and after a connection or an attempt failed) -> Connecting ->
// Connected -> Disconnected -> Connecting ... ; Closed (close(): final). The state callback runs
// on the loop thread for every change, before the handler's onConnected/onClosed of that change.
// Every connection and every failed attempt ends with exactly one onClosed(reason): refused,
// resolve, connect-timeout, reset, eof, protocol, reconnect (forced, e.g. half-open),
// closed-by-owner. Three read-idle reconnects in a row with no read on the connections between
// them log one Warn ("client 127.0.0.1:9000: 3 read-idle reconnects in a row (idle timeout 300ms,
// heartbeat interval 100ms): the peer answers slower than the idle timeout?"); a read starts the
// count again.
//
// The connect timeout is a one-shot on the shared wheel (no uv_timer per client): cancelled when
// the attempt completes, so an idle client holds exactly the two task timeouts.
//
// Threads: start(), close(), state(), channel() and the counters: any thread. Off the loop
// thread close() waits until the client is Closed; on the loop thread it only begins closing.
// Once the loop has stopped (its shutdown closed the socket: LoopStopped), close() completes on
// the calling thread, and the state callback of that last change runs there too.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/event_loop_group.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/tasks/task_listener.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace wheelbeat::net {

// ReadOnly: connected, and the server sent Dubbo's READONLY event (it is shutting down
// gracefully): calls in flight are answered, new calls belong elsewhere. Left when that
// connection closes (Disconnected, then a reconnect starts writable again).
enum class ClientState : std::uint8_t { Disconnected, Connecting, Connected, ReadOnly, Closed };
// "disconnected", "connecting", "connected", "read-only", "closed".
[[nodiscard]] std::string_view clientStateName(ClientState state) noexcept;

// The client's state as its connectivity callback reports it: ClientState plus Idle (before the
// first attempt). The enumerators follow gRPC's connectivity states (Ready = connected,
// TransientFailure = disconnected, Shutdown = closed); their names (connectivityName) are
// wheelbeat's one vocabulary, the words of clientStateName(), in logs, metric labels and docs.
enum class Connectivity : std::uint8_t {
  Idle,              // "idle": start() not called yet, or its first attempt not begun
  Connecting,        // "connecting"
  Ready,             // "connected"
  TransientFailure,  // "disconnected": the last connection or attempt failed; a reconnect follows
  ReadOnly,          // "read-only" (ClientState::ReadOnly)
  Shutdown           // "closed": closed for good
};
// "idle", "connecting", "connected", "disconnected", "read-only", "closed": for every state but
// Idle, clientStateName() of the same state.
[[nodiscard]] std::string_view connectivityName(Connectivity c) noexcept;

// One transition with why it happened, e.g. {Ready, TransientFailure, "eof: the peer closed the
// connection"} or {Connecting, Ready, "connected to 10.0.0.5:20880"}.
struct ConnectivityChange {
  Connectivity from = Connectivity::Idle;
  Connectivity to = Connectivity::Idle;
  std::string reason;
};

namespace detail {
class ClientChannel;
}

class TcpClient {
public:
  using StateCallback = std::function<void(ClientState from, ClientState to)>;
  // Every connectivity transition, with its reason; on the loop thread (or on the closing
  // thread once the loop is gone).
  using ConnectivityCallback = std::function<void(const ConnectivityChange&)>;

  // Validates `options` against the timer's tick (core::OptionError, see validate(options, tick)
  // in options.h). options.server.host is an IP
  // literal or a host name; a name is resolved afresh for every connect attempt, off the loop
  // (libuv's thread pool), within connectTimeout, each attempt taking the next address of the
  // answer; a failed resolution closes the attempt as Resolve ("resolve: HOST:PORT: EAI_NONAME
  // (unknown node or service)"), and the reconnect task retries it as any failed attempt.
  // The loop and the timer must outlive the client. options.taskListener / taskMetrics observe its
  // heartbeat and reconnect tasks.
  TcpClient(EventLoop& loop, core::HashedWheelTimer& timer, ClientOptions options,
            ChannelHandler handler = {}, StateCallback onStateChange = {});
  // The same on group.next() (the group's round robin; validated first, so a rejected call does
  // not move it). The group must outlive the client.
  TcpClient(EventLoopGroup& group, core::HashedWheelTimer& timer, ClientOptions options,
            ChannelHandler handler = {}, StateCallback onStateChange = {});
  // close().
  ~TcpClient();

  TcpClient(const TcpClient&) = delete;
  TcpClient& operator=(const TcpClient&) = delete;

  // Starts the first connect and the heartbeat and reconnect tasks. Throws std::logic_error if
  // called twice or after close(), std::runtime_error if the loop is stopped (as
  // TcpServer::listen()), and what the timer throws (TimerStoppedError, ...).
  void start();

  // Closes for good: cancels the heartbeat and reconnect tasks and the connect timeout at once
  // (their timeouts leave timer.pendingTimeouts() before this returns), closes the socket
  // (onClosed: ClosedByOwner with `reason`), fails pending requests, and never reconnects.
  // Idempotent. Also what channel().close(reason) does, without the waiting.
  void close(std::string_view reason = "TcpClient::close()");

  [[nodiscard]] ClientState state() const noexcept;
  // state() as Connectivity (Idle before the first attempt). Any thread.
  [[nodiscard]] Connectivity connectivity() const noexcept;
  // Sets the connectivity callback. Before start() only (std::logic_error after). Any thread.
  void onConnectivity(ConnectivityCallback callback);
  // The stable channel (send, request, attachment, timestamps). Valid as long as the client.
  [[nodiscard]] Channel& channel() const noexcept;
  // Connect attempts begun so far (the first one included).
  [[nodiscard]] std::uint64_t connectAttempts() const noexcept;

private:
  void build(core::HashedWheelTimer& timer, ClientOptions options, ChannelHandler handler,
             StateCallback onStateChange);

  EventLoop& loop_;
  core::Users::Use loopUse_;  // the loop and the timer must outlive the client (core/users.h)
  core::Users::Use timerUse_;
  std::shared_ptr<tasks::TaskListener> listener_;
  std::shared_ptr<tasks::TaskMetrics> metrics_;
  std::shared_ptr<detail::ClientChannel> channel_;
};

}  // namespace wheelbeat::net
