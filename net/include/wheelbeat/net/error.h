// NetError (a libuv error code with its name and message) and CloseReason (why a channel closed).
//
// Every network outcome of a channel reaches the application through one path:
// ChannelHandler::onClosed(channel, reason). The reason's kind says which outcome it was; its
// error carries the libuv code when there is one (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EOF, ...)
// and its text says what happened in words. Both types are fmt-formattable.
// Thread: plain values, any thread.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelbeat::net {

// A libuv error code (negative errno-style value, e.g. UV_ECONNREFUSED); 0 = no error.
class NetError {
public:
  constexpr NetError() noexcept = default;
  constexpr explicit NetError(int code) noexcept : code_(code) {}

  [[nodiscard]] constexpr int code() const noexcept { return code_; }
  [[nodiscard]] constexpr bool ok() const noexcept { return code_ == 0; }
  [[nodiscard]] constexpr explicit operator bool() const noexcept { return code_ != 0; }
  // libuv's name, e.g. "ECONNREFUSED", "EOF"; "OK" for 0.
  [[nodiscard]] std::string_view name() const noexcept;
  // libuv's message, e.g. "connection refused"; "success" for 0.
  [[nodiscard]] std::string_view message() const noexcept;

  friend constexpr bool operator==(NetError, NetError) noexcept = default;

private:
  int code_ = 0;
};

// A synchronous failure of a call that talks to the OS (e.g. TcpServer::listen(): EADDRINUSE).
// what() reads "listen on 0.0.0.0:20880: EADDRINUSE (address already in use)".
class NetException : public std::runtime_error {
public:
  NetException(NetError error, const std::string& context);
  [[nodiscard]] NetError error() const noexcept { return error_; }

private:
  NetError error_;
};

// Which outcome closed a channel (one kind per outcome).
enum class CloseKind : std::uint8_t {
  Refused,         // connect refused (ECONNREFUSED) or otherwise failed before connecting
  Resolve,         // the server's host name could not be resolved (a UV_EAI_* code)
  ConnectTimeout,  // connect did not complete within ClientOptions::connectTimeout
  Reset,           // the peer reset the connection (ECONNRESET, EPIPE)
  Eof,             // the peer closed its side cleanly, at a frame boundary
  Protocol,        // bad magic, body above the limit, stream ended inside a frame
  IoError,         // any other libuv read/write/accept error
  ClosedByOwner,   // Channel::close(), TcpClient::close(), TcpServer::stop()
  Idle,            // server: the CloseTimerTask found the channel idle beyond closeTimeout
  Reconnect,       // client: the ReconnectTimerTask forced a reconnect (e.g. read idle: half-open)
  LoopStopped,     // EventLoop::stop() found the channel still open
  Resource,        // this process ran short: the loop's partial-frame budget, or memory
};

// "refused", "resolve", "connect-timeout", "reset", "eof", "protocol", "io-error",
// "closed-by-owner", "idle", "reconnect", "loop-stopped", "resource".
[[nodiscard]] std::string_view closeKindName(CloseKind kind) noexcept;

struct CloseReason {
  CloseKind kind = CloseKind::ClosedByOwner;
  NetError error{};  // the libuv code behind it, if any (0 otherwise)
  std::string text;  // e.g. "bad magic 0x4745 (expected: 0xdabb)", "read idle 310ms > ..."
};

// Whether the formatted reason names `error`: not when there is none, nor when it is the code
// the kind stands for and so adds nothing (ECONNREFUSED for Refused, ETIMEDOUT for
// ConnectTimeout, EOF for Eof and for a Protocol close at the end of the stream). Thread: any.
[[nodiscard]] bool closeErrorShown(const CloseReason& reason) noexcept;

// The shared error name (tasks/error_names.h) a retry policy matches for `error`: "" for no
// error; "timeout" for ETIMEDOUT; "overloaded" when this process ran short (ENOMEM, ENOBUFS,
// EMFILE, ENFILE, EAGAIN); "disconnected" for every other code (refused, reset, unreachable, EOF,
// ...: the connection is not there), a failed name resolution (UV_EAI_*, CloseKind::Resolve)
// included: no connection was made, and the reconnect task retries it as any other.
// Thread: any.
[[nodiscard]] std::string_view errorName(NetError error) noexcept;

// Builds the reason a libuv error code stands for: ECONNREFUSED -> Refused, UV_EAI_* (getaddrinfo)
// -> Resolve, ETIMEDOUT -> ConnectTimeout while connecting, ECONNRESET/EPIPE -> Reset, EOF -> Eof,
// others -> IoError (or Refused while connecting). `context` becomes the text, e.g. "connect to
// 127.0.0.1:9".
[[nodiscard]] CloseReason reasonFromError(NetError error, bool connecting, std::string context);

}  // namespace wheelbeat::net

// "ECONNREFUSED (connection refused)", or "OK" for no error.
template <>
struct fmt::formatter<wheelbeat::net::NetError> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const wheelbeat::net::NetError& e, FormatContext& ctx) const {
    if (e.ok()) return fmt::formatter<std::string_view>::format("OK", ctx);
    return fmt::format_to(ctx.out(), "{} ({})", e.name(), e.message());
  }
};

// Reads once: the kind, what happened, then the libuv code only when it adds to the kind
// (closeErrorShown). E.g. "refused: connect to 127.0.0.1:9" (ECONNREFUSED is what refused
// means), "refused: connect to 10.0.0.5:9: EHOSTUNREACH (host is unreachable)", "eof: the peer
// closed the connection", "reset: read: ECONNRESET (connection reset by peer)".
template <>
struct fmt::formatter<wheelbeat::net::CloseReason> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const wheelbeat::net::CloseReason& r, FormatContext& ctx) const {
    // An output iterator of fmt's choosing (a pointer in some instantiations): plain auto.
    auto out =  // NOLINT(readability-qualified-auto)
        fmt::format_to(ctx.out(), "{}", wheelbeat::net::closeKindName(r.kind));
    if (!r.text.empty()) out = fmt::format_to(out, ": {}", r.text);
    if (wheelbeat::net::closeErrorShown(r)) out = fmt::format_to(out, ": {}", r.error);
    return out;
  }
};
