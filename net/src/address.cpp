#include "address.h"

#include <array>
#include <cstring>

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

Endpoint peerOf(const uv_tcp_t* tcp) { return nameOf(tcp, &uv_tcp_getpeername); }
Endpoint localOf(const uv_tcp_t* tcp) { return nameOf(tcp, &uv_tcp_getsockname); }

}  // namespace wheelbeat::net::detail
