// A real redis-server (Debian's /usr/bin/redis-server) as a child process of the test, on a free
// loopback port below 32768 (outside Linux's ephemeral range, so no outgoing connection of the
// machine takes it between a kill and a restart), no persistence: a restart starts empty.
// RAII: the destructor stops the child (SIGCONT in case it was paused, SIGTERM, SIGKILL after
// 3 s) and reaps it, also when a test fails half-way. A tiny blocking RESP client lets tests
// look at and tamper with the server's data.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace wbredis {

// One RESP reply: type '+', '-', ':', '$' (text = the value; nil → type '_'), '*' (items = the
// elements' texts, one level deep).
struct Resp {
  char type = '_';
  std::string text;
  std::vector<std::string> items;
};

class RedisServer {
public:
  // Picks a port and starts the server (REQUIREs that it answers PING within 5 s; retries with
  // another port on the rare collision).
  RedisServer();
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] bool running() const noexcept { return pid_ > 0; }

  // Starts again on the same port (after kill() or stop()); true once it answers PING (<= 5 s).
  bool start();
  void stop();    // SIGTERM, reaped within 3 s, else SIGKILL
  void kill();    // SIGKILL and reaped: the data is gone, clients see their links die
  void pause();   // SIGSTOP: the process holds its sockets but answers nothing
  void resume();  // SIGCONT

  // Sends one command on a fresh connection and returns the reply (type '!' if no reply in 2 s).
  Resp command(const std::vector<std::string>& args) const;

private:
  bool spawn();
  bool waitReady() const;
  void reap(int signal, int graceMs);

  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace wbredis
