// Loopback addresses and free ports for the servers the registry tests start as child processes
// (redis-server, ZooKeeper). Test-only.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <random>

namespace wbports {

inline sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// A port in [20000, 32767] (below Linux's ephemeral range: no outgoing connection takes it between
// a server's stop and its restart) that nobody listens on now: bind succeeds, then it is released.
// 0 if 100 random picks were all taken.
inline std::uint16_t freePort() {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> pick(20000, 32767);
  for (int i = 0; i < 100; ++i) {
    const auto port = static_cast<std::uint16_t>(pick(rng));
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in a = loopback(port);
    const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0;
    ::close(fd);
    if (ok) return port;
  }
  return 0;
}

}  // namespace wbports
