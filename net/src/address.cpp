#include "address.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>

namespace wheelbeat::net::detail {
namespace {

Endpoint fromSockaddr(const sockaddr_storage& ss) {
  std::array<char, 64> name{};
  if (ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    uv_ip4_name(in, name.data(), name.size());
    return Endpoint{name.data(), ntohs(in->sin_port)};
  }
  if (ss.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    uv_ip6_name(in6, name.data(), name.size());
    return Endpoint{name.data(), ntohs(in6->sin6_port)};
  }
  return Endpoint{"?", 0};
}

using NameFn = int (*)(const uv_tcp_t*, sockaddr*, int*);

Endpoint nameOf(const uv_tcp_t* tcp, NameFn fn) {
  sockaddr_storage ss{};
  int len = sizeof(ss);
  if (fn(tcp, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return Endpoint{"?", 0};
  return fromSockaddr(ss);
}

}  // namespace

NetError toSockaddr(const Endpoint& endpoint, sockaddr_storage& out) noexcept {
  std::memset(&out, 0, sizeof(out));
  auto* in = reinterpret_cast<sockaddr_in*>(&out);
  if (uv_ip4_addr(endpoint.host.c_str(), endpoint.port, in) == 0) return {};
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (uv_ip6_addr(endpoint.host.c_str(), endpoint.port, in6) == 0) return {};
  return NetError(UV_EINVAL);
}

namespace {

// getaddrinfo's EAI_* codes as libuv's UV_EAI_* (libuv keeps its own translation private).
int uvCodeOf(int eai) noexcept {
  switch (eai) {
    case EAI_AGAIN: return UV_EAI_AGAIN;
    case EAI_BADFLAGS: return UV_EAI_BADFLAGS;
    case EAI_FAMILY: return UV_EAI_FAMILY;
    case EAI_MEMORY: return UV_EAI_MEMORY;
    case EAI_NONAME: return UV_EAI_NONAME;
    case EAI_SERVICE: return UV_EAI_SERVICE;
    case EAI_SOCKTYPE: return UV_EAI_SOCKTYPE;
    case EAI_SYSTEM: return errno != 0 ? -errno : UV_EAI_FAIL;
    default: return UV_EAI_FAIL;
  }
}

}  // namespace

addrinfo tcpHints(int flags) noexcept {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  hints.ai_flags = flags;
  return hints;
}

NetError resolveBlocking(const Endpoint& endpoint, sockaddr_storage& out) noexcept {
  if (toSockaddr(endpoint, out).ok()) return {};
  const addrinfo hints = tcpHints(AI_PASSIVE);
  addrinfo* list = nullptr;
  const std::string port = std::to_string(endpoint.port);
  if (int rc = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &list); rc != 0) {
    return NetError(uvCodeOf(rc));
  }
  std::memset(&out, 0, sizeof(out));
  std::memcpy(&out, list->ai_addr, std::min<std::size_t>(list->ai_addrlen, sizeof(out)));
  ::freeaddrinfo(list);
  return {};
}

Endpoint peerOf(const uv_tcp_t* tcp) { return nameOf(tcp, &uv_tcp_getpeername); }
Endpoint localOf(const uv_tcp_t* tcp) { return nameOf(tcp, &uv_tcp_getsockname); }

}  // namespace wheelbeat::net::detail
