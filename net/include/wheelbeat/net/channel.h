// net::Channel: one TCP connection as the application (an embedding RPC) sees it, and as the
// timer tasks see it (it is a tasks::Channel). TcpServer creates one per accepted connection;
// TcpClient has exactly one, which survives its reconnects.
//
// Threads
//   Handler callbacks run on the loop thread. send(), request(), close(), the tasks::Channel
//   actions and every query are callable from any thread and never block: actions are handed to
//   the loop (EventLoop::post) and return. attachment() is for the loop thread (the handler).
//
// Actions of tasks::Channel
//   close(reason): closes for good. A server channel: this connection (onClosed: ClosedByOwner
//   with `reason`). A client's channel: the whole client, as TcpClient::close() but without
//   waiting. reconnect(reason): a client's channel drops its socket (onClosed: Reconnect) and
//   connects again; a server channel cannot dial back and closes instead. sendHeartbeat(): queues
//   one 17-byte heartbeat request (its response gives lastHeartbeatRtt()).
//
// Time
//   lastRead()/lastWrite() are on the shared timer's clock (HashedWheelTimer::now()); a
//   (re)connect stamps both. A read stamps lastRead once per read callback (every inbound byte,
//   hence every inbound frame, counts); a completed write stamps lastWrite.
//
// Lifetime
//   Owned by its server or client (std::shared_ptr inside). A reference handed to a callback is
//   valid during that callback; keep a channel beyond it only through the server/client API.
#pragma once

#include <wheelbeat/net/codec.h>
#include <wheelbeat/net/error.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/tasks/channel.h>

#include <any>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace wheelbeat::net {

// The outcome of a send. Anything but Queued means nothing was queued.
enum class SendResult : std::uint8_t {
  Queued,        // handed to the loop; written whole (one frame is never split across writes)
  QueueFull,     // the bytes queued would exceed maxSendQueue (back-pressure)
  NotConnected,  // not connected (connecting, disconnected or closed)
  BodyTooLarge,  // body above CodecOptions::maxBody
};
// "queued", "queue-full", "not-connected", "body-too-large".
[[nodiscard]] std::string_view sendResultName(SendResult result) noexcept;

// How a request() ended. Exactly one of these reaches the callback, once, on the loop thread.
enum class CallStatus : std::uint8_t {
  Ok,       // the response arrived (its status may still be an error status of the protocol)
  Timeout,  // no response within the request's timeout
  Closed,   // the connection closed first (error holds the close reason)
};
// "ok", "timeout", "closed".
[[nodiscard]] std::string_view callStatusName(CallStatus status) noexcept;

struct CallResult {
  CallStatus status = CallStatus::Ok;
  std::uint64_t id = 0;          // the request's id
  std::uint8_t flags = 0;        // the response's flags (Ok only)
  std::uint8_t frameStatus = 0;  // the response's status byte (Ok only), kStatusOk = 20
  std::string body;              // the response's body (Ok only)
  std::string error;             // Timeout/Closed: what happened, e.g. "no response within 200ms"
};
using ResponseCallback = std::function<void(const CallResult&)>;

// The shared error name (tasks/error_names.h) of a call's outcome, for a RetryRunner's AttemptDone
// or a failback CallResult; "" = success. Timeout → "timeout", Closed → "disconnected"; Ok with a
// Dubbo status byte other than kStatusOk (20): 30 / 31 (client / server timeout) → "timeout",
// 35 (channel inactive) → "disconnected", 40 / 90 (bad request / client error) → "bad-request",
// 100 (server thread pool exhausted) → "overloaded", any other (50 bad response, 60 service not
// found, 70 service error, 80 server error, ...) → "rejected". Thread: any.
[[nodiscard]] std::string_view errorName(const CallResult& result) noexcept;
// Of a refused send or request: "" for Queued, NotConnected → "disconnected", QueueFull →
// "overloaded", BodyTooLarge → "bad-request". Thread: any.
[[nodiscard]] std::string_view errorName(SendResult result) noexcept;

struct RequestResult {
  SendResult sent = SendResult::Queued;  // not Queued: the callback will never be called
  std::uint64_t id = 0;                  // the request id used on the wire
};

class Channel;

// The application's callbacks; each may be empty. All run on the loop thread. A callback may
// call any Channel method (including close()); an exception it throws is logged and dropped.
struct ChannelHandler {
  // The channel is connected (accepted, or a client's (re)connect succeeded).
  // (Each member defaults to empty, so designated initializers may name only what they set.)
  std::function<void(Channel&)> onConnected = {};
  // An inbound non-heartbeat frame (requests, responses not claimed by request(), any
  // serialization). `frame.body` is valid only during the call.
  std::function<void(Channel&, const FrameView&)> onFrame = {};
  // The connection is gone, with why: called once per connection (and once per failed connect
  // attempt of a client), from libuv's close callback, when the socket is fully closed.
  std::function<void(Channel&, const CloseReason&)> onClosed = {};
};

class Channel : public tasks::Channel {
public:
  // Queues one whole frame (header + body). Any thread. A frame queued before the connection
  // closes but not yet written is dropped with it (onClosed reports the close).
  [[nodiscard]] virtual SendResult send(std::uint8_t flags, std::uint8_t status, std::uint64_t id,
                                        std::string_view body) = 0;
  // The response to `request` (same id and serialization, no request bit): what an RPC server
  // sends for each two-way request. Any thread; `request` is only read during the call.
  [[nodiscard]] SendResult reply(const FrameView& request, std::string_view body,
                                 std::uint8_t status = kStatusOk) {
    return send(request.serialization(), status, request.id, body);
  }

  // Sends a two-way request (flags kRequest | kTwoWay | serialization) with a fresh id and
  // calls `done` once with its response, or with Timeout when none arrived within `timeout`
  // (measured on the shared wheel, so up to one tick late), or with Closed when the connection
  // closed first. A response frame whose id is pending here is consumed (onFrame never sees
  // it). Any thread; `done` runs on the loop thread. If the send is refused, `done` is dropped
  // uncalled and the result says why.
  // The default argument binds on the static type: every implementation declares the same one.
  // NOLINTNEXTLINE(google-default-arguments)
  virtual RequestResult request(std::string_view body, std::chrono::nanoseconds timeout,
                                ResponseCallback done, std::uint8_t serialization = kHessian2) = 0;

  // Process-unique id of this channel (a client keeps its id across reconnects). Any thread.
  [[nodiscard]] virtual std::uint64_t id() const noexcept = 0;
  // The peer's address. Fixed before onConnected; any thread after that.
  [[nodiscard]] virtual const Endpoint& remote() const noexcept = 0;
  // Free slot for the embedding RPC's per-connection state. Loop thread only.
  [[nodiscard]] virtual std::any& attachment() noexcept = 0;

  // Round trip of the last heartbeat answered (0 before the first): from the write that carried
  // the request to the read that brought its answer, both on the loop thread, as a ping measures
  // it. Any thread.
  [[nodiscard]] virtual std::chrono::nanoseconds lastHeartbeatRtt() const noexcept = 0;
  // Bytes accepted by send() and not yet written by the kernel. Any thread.
  [[nodiscard]] virtual std::size_t queuedBytes() const noexcept = 0;
  // Inbound heartbeat requests answered. Any thread.
  [[nodiscard]] virtual std::uint64_t heartbeatsAnswered() const noexcept = 0;
  // The peer sent Dubbo's READONLY event on this connection (codec.h): it is shutting down
  // gracefully; send it no new calls (calls in flight are still answered). A client's next
  // connection starts writable again. Any thread.
  [[nodiscard]] virtual bool isReadOnly() const noexcept = 0;
  // Two-way requests received on this connection and not yet answered: each inbound two-way
  // non-event request counts one, each response (non-event) sent with send() answers one
  // (ids are not matched). What a graceful shutdown waits for. Any thread.
  [[nodiscard]] virtual std::int64_t unanswered() const noexcept = 0;
  // Requests this side sent with request() that await their response (or timeout). Any thread.
  [[nodiscard]] virtual std::size_t pendingRequests() const noexcept = 0;
  // How long the heartbeat of lastHeartbeatRtt() waited in this process before its write: from
  // sendHeartbeat() (the wheel's decision) to the write, i.e. the loop's queue (a tick's burst of
  // heartbeats, posted work, a busy handler); lastHeartbeatRtt() + this = decision to answer.
  // Any thread. (Last in the class: the slots of the older virtuals stay where they were.)
  [[nodiscard]] virtual std::chrono::nanoseconds lastHeartbeatSendWait() const noexcept = 0;
};

}  // namespace wheelbeat::net
