// How a CloseReason reads: the kind, what happened, then the libuv code only when it adds to the
// kind. One exact string per kind, built the way the channel builds it (reasonFromError for a
// libuv error, the literal texts of the closing paths otherwise).
#include "support.h"

#include <uv.h>

namespace wbnet {

namespace {
std::string text(const CloseReason& why) { return fmt::format("{}", why); }
}  // namespace

TEST_SUITE("net") {

TEST_CASE("close reasons: every kind reads its kind once and a code only when it adds to it") {
  using wheelbeat::net::reasonFromError;
  CHECK(text(reasonFromError(NetError(UV_ECONNREFUSED), true, "connect to 127.0.0.1:9")) ==
        "refused: connect to 127.0.0.1:9");
  CHECK(text(reasonFromError(NetError(UV_EHOSTUNREACH), true, "connect to 10.0.0.5:9")) ==
        "refused: connect to 10.0.0.5:9: EHOSTUNREACH (host is unreachable)");
  CHECK(text(reasonFromError(NetError(UV_EAI_NONAME), true, "no-such-host.invalid:20880")) ==
        "resolve: no-such-host.invalid:20880: EAI_NONAME (unknown node or service)");
  CHECK(text(CloseReason{CloseKind::ConnectTimeout, NetError(UV_ETIMEDOUT),
                         "no connection to 10.0.0.5:9 within 200ms"}) ==
        "connect-timeout: no connection to 10.0.0.5:9 within 200ms");
  CHECK(text(reasonFromError(NetError(UV_ECONNRESET), false, "read")) ==
        "reset: read: ECONNRESET (connection reset by peer)");
  CHECK(text(reasonFromError(NetError(UV_EPIPE), false, "write")) ==
        "reset: write: EPIPE (broken pipe)");
  CHECK(text(reasonFromError(NetError(UV_EOF), false, "the peer closed the connection")) ==
        "eof: the peer closed the connection");
  CHECK(text(CloseReason{CloseKind::Protocol, {}, "bad magic 0x4745 (expected: 0xdabb)"}) ==
        "protocol: bad magic 0x4745 (expected: 0xdabb)");
  CHECK(text(CloseReason{CloseKind::Protocol, NetError(UV_EOF),
                         "stream ended after 5 bytes of a 16-byte header"}) ==
        "protocol: stream ended after 5 bytes of a 16-byte header");
  CHECK(text(reasonFromError(NetError(UV_EBADF), false, "write")) ==
        "io-error: write: EBADF (bad file descriptor)");
  CHECK(text(CloseReason{CloseKind::ClosedByOwner, {}, "TcpClient::close()"}) ==
        "closed-by-owner: TcpClient::close()");
  CHECK(text(CloseReason{CloseKind::Idle, {}, "read idle 5s > closeTimeout 4s"}) ==
        "idle: read idle 5s > closeTimeout 4s");
  CHECK(text(CloseReason{CloseKind::Reconnect, {}, "read idle 310ms > idleTimeout 300ms"}) ==
        "reconnect: read idle 310ms > idleTimeout 300ms");
  CHECK(text(CloseReason{CloseKind::LoopStopped, {}, "the channel was still open"}) ==
        "loop-stopped: the channel was still open");
  CHECK(text(CloseReason{CloseKind::Resource, {}, "out of memory on the read path"}) ==
        "resource: out of memory on the read path");
  CHECK(text(CloseReason{CloseKind::ClosedByOwner, {}, {}}) == "closed-by-owner");
}

TEST_CASE("close reasons: the kind's own code is left out and any other code is named") {
  CHECK_FALSE(closeErrorShown(CloseReason{CloseKind::Refused, NetError(UV_ECONNREFUSED), {}}));
  CHECK_FALSE(closeErrorShown(CloseReason{CloseKind::ConnectTimeout, NetError(UV_ETIMEDOUT), {}}));
  CHECK_FALSE(closeErrorShown(CloseReason{CloseKind::Eof, NetError(UV_EOF), {}}));
  CHECK_FALSE(closeErrorShown(CloseReason{CloseKind::Protocol, NetError(UV_EOF), {}}));
  CHECK_FALSE(closeErrorShown(CloseReason{CloseKind::Reset, {}, {}}));
  CHECK(closeErrorShown(CloseReason{CloseKind::Refused, NetError(UV_ENETUNREACH), {}}));
  CHECK(closeErrorShown(CloseReason{CloseKind::Reset, NetError(UV_ECONNRESET), {}}));
  CHECK(closeErrorShown(CloseReason{CloseKind::Reset, NetError(UV_ETIMEDOUT), {}}));
  CHECK(closeErrorShown(CloseReason{CloseKind::IoError, NetError(UV_EOF), {}}));
  // The code is kept in the reason whether or not the text names it: errorName() reads it.
  const CloseReason refused =
      wheelbeat::net::reasonFromError(NetError(UV_ECONNREFUSED), true, "connect to 127.0.0.1:9");
  CHECK(refused.error == NetError(UV_ECONNREFUSED));
  CHECK(errorName(refused.error) == "disconnected");
}

TEST_CASE("close reasons: every getaddrinfo error is resolve and retried as disconnected") {
  for (const int code : {UV_EAI_NONAME, UV_EAI_AGAIN, UV_EAI_FAIL, UV_EAI_NODATA, UV_EAI_SERVICE,
                         UV_EAI_FAMILY, UV_EAI_ADDRFAMILY}) {
    for (const bool connecting : {true, false}) {
      const CloseReason why =
          wheelbeat::net::reasonFromError(NetError(code), connecting, "no-such-host.invalid:1");
      CHECK(why.kind == CloseKind::Resolve);
      CHECK(closeErrorShown(why));
      CHECK(errorName(why.error) == "disconnected");
    }
  }
  CHECK(closeKindName(CloseKind::Resolve) == "resolve");
  CHECK(wheelbeat::net::reasonFromError(NetError(UV_ECONNREFUSED), true, "x").kind ==
        CloseKind::Refused);
}

}  // TEST_SUITE("net")

}  // namespace wbnet
