// Loopback addresses and free ports for the servers the registry tests start as child processes
// (redis-server, ZooKeeper). Test-only.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <thread>

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

// Ends a child server: SIGCONT (a paused child would not act on the signal), `signal`, then
// SIGKILL once `grace` has passed; reaped either way. `pid` is -1 afterwards.
inline void reap(pid_t& pid, int signal, std::chrono::milliseconds grace) {
  if (pid <= 0) return;
  ::kill(pid, SIGCONT);
  ::kill(pid, signal);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling the child, bounded
  }
  pid = -1;
}

}  // namespace wbports
