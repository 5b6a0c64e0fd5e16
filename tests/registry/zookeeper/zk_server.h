// A real standalone ZooKeeper (Debian's `zookeeper` package: java + /usr/share/java/zookeeper.jar,
// main class org.apache.zookeeper.server.ZooKeeperServerMain) as a child process of the test, on
// a free loopback port below 32768 (outside Linux's ephemeral range: no outgoing connection takes
// it between a stop and a restart), with its own temporary directory (zoo.cfg, data, server.log).
//
// Timing: tickTime 200 ms, session timeouts clamped to [kMinSessionTimeout, kMaxSessionTimeout]
// = [2 s, 10 s]: a session asking 2 s expires 2-2.4 s after its client falls silent (the server
// checks every tick); 10 s lets a test's session outlive a server restart however slow the JVM.
//
// RAII: the destructor stops the child (SIGCONT, SIGTERM, SIGKILL after 5 s), reaps it and
// removes the directory, also when a test fails half-way. The child is started with
// PR_SET_PDEATHSIG = SIGKILL, so it dies with the thread that started it if the test process
// crashes: start and restart it from the test's main thread. Only a crash leaves the directory.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace wbzk {

inline constexpr std::chrono::milliseconds kTickTime{200};
inline constexpr std::chrono::milliseconds kMinSessionTimeout{2000};
inline constexpr std::chrono::milliseconds kMaxSessionTimeout{10000};

class ZkServer {
public:
  // Picks a port and starts the server: REQUIREs that it serves within 30 s (the message then
  // carries the log's tail); retries with another port if the chosen one was taken meanwhile.
  ZkServer();
  ~ZkServer();
  ZkServer(const ZkServer&) = delete;
  ZkServer& operator=(const ZkServer&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] std::string hosts() const;  // "127.0.0.1:<port>"
  [[nodiscard]] bool running() const noexcept { return pid_ > 0; }
  [[nodiscard]] const std::string& dir() const noexcept { return dir_; }
  // How long the last successful start took, spawn to serving.
  [[nodiscard]] std::chrono::milliseconds lastStartTime() const noexcept { return startTime_; }

  // Starts on the same port with whatever the data directory holds. True once it serves ("srvr"
  // reports its mode; <= 30 s); false (error() says why, with the log tail) otherwise.
  bool start();
  // SIGTERM, reaped within 5 s, else SIGKILL. Clients see their connections drop.
  void stop();
  // stop(), optionally wipe the data directory (sessions and znodes gone), start().
  bool restart(bool wipeData);

  // A four-letter command ("ruok", "srvr", "cons"...) on a fresh connection; "" if no answer in 2
  // s.
  [[nodiscard]] std::string fourLetter(const std::string& command) const;
  // The last `lines` lines of the server's output.
  [[nodiscard]] std::string logTail(std::size_t lines = 20) const;
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

private:
  void writeConfig() const;
  bool spawn();
  bool waitServing();
  void reap(int signal, int graceMs);

  std::string dir_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
  std::chrono::milliseconds startTime_{0};
  std::string error_;
};

}  // namespace wbzk
