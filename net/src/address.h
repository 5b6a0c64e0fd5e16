// Endpoint <-> sockaddr: IP literals (IPv4 or IPv6) at once, host names by blocking resolution
// (for callers off the loop thread; clients resolve asynchronously, see tcp_client.cpp).
// Private to net/.
#pragma once

#include <wheelbeat/net/error.h>
#include <wheelbeat/net/options.h>

#include <netdb.h>
#include <uv.h>

namespace wheelbeat::net::detail {

// Fills `out` from an IPv4 or IPv6 literal; UV_EINVAL for anything else (host names are not
// resolved here: that would block the loop).
[[nodiscard]] NetError toSockaddr(const Endpoint& endpoint, sockaddr_storage& out) noexcept;
// getaddrinfo hints for a TCP endpoint of any family (IPv4 or IPv6), with `flags` (AI_*).
[[nodiscard]] addrinfo tcpHints(int flags = 0) noexcept;
// An IP literal as toSockaddr(); otherwise resolves the host name with getaddrinfo (blocking:
// never on a loop thread) and takes the first address. UV_EAI_* codes on failure.
[[nodiscard]] NetError resolveBlocking(const Endpoint& endpoint, sockaddr_storage& out) noexcept;
// The address of a connected/bound socket; {"?", 0} if libuv cannot tell.
[[nodiscard]] Endpoint peerOf(const uv_tcp_t* tcp);
[[nodiscard]] Endpoint localOf(const uv_tcp_t* tcp);

}  // namespace wheelbeat::net::detail
