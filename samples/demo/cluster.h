// The demo driver's view of the cluster: child processes (fork/exec of wheelbeat_demo_node, or
// redis-server), their status lines read from one pipe each, and the signals the fault
// scenario sends them. Every child is reaped: stopAll() terminates (SIGTERM, then SIGKILL after
// a grace period) and waitpid()s each one; a child also dies with the driver (PR_SET_PDEATHSIG).
// Single-threaded: the driver's main thread does everything.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace demo {

using SteadyClock = std::chrono::steady_clock;

// The last "STATUS k=v ..." line of a node.
struct NodeStatus {
  std::map<std::string, std::string> fields;
  SteadyClock::time_point at{};

  [[nodiscard]] std::string text(const std::string& key) const;
  [[nodiscard]] std::uint64_t number(const std::string& key) const;           // 0 when absent
  [[nodiscard]] std::vector<std::string> list(const std::string& key) const;  // "a,b" -> {a, b}
};

// One provider as a consumer sees it ("port:ok:failed:inUse"): the calls it answered and failed,
// and whether it answered one within the last second (the consumer calls round robin, so a
// provider its cluster client still uses answers several a second).
struct LinkView {
  std::string port;
  std::uint64_t ok = 0;
  std::uint64_t failed = 0;
  bool usable = false;
};
[[nodiscard]] std::vector<LinkView> linksOf(const NodeStatus& status);

// Stopping: sent SIGTERM on purpose (terminate()); it is expected to exit, with cleanExit.
enum class Life { Running, Frozen, Killed, Stopping, Exited };

struct Node {
  std::string name;
  std::string role;  // registry, provider, consumer, redis
  std::vector<std::string> argv;
  pid_t pid = -1;
  bool hasStatus = true;  // writes STATUS lines (redis-server does not)
  int fd = -1;            // read end of its stdout pipe, -1 when none
  std::string buffer;     // a partial line
  NodeStatus status;
  Life life = Life::Exited;
  int exitStatus = -1;  // after reaping: the exit code, or 128 + signal
  // The status of a clean stop on SIGTERM: 0, or 143 (128 + SIGTERM) for a JVM, which exits so
  // once its shutdown hooks ran.
  int cleanExit = 0;
};

class Cluster {
public:
  // `logDir` receives one <name>.log per node (its stderr).
  explicit Cluster(std::string logDir);
  ~Cluster();  // stopAll()
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Starts a node (fork + exec). Throws std::runtime_error if fork or pipe fail.
  Node& start(std::string name, std::string role, std::vector<std::string> argv,
              bool hasStatus = true);
  // Starts `name` again with the same command line (after kill()).
  void restart(const std::string& name);

  // Reads status lines for up to `wait` (poll on every pipe) and reaps children that died.
  void pump(std::chrono::milliseconds wait);

  void kill(const std::string& name);    // SIGKILL + waitpid
  void freeze(const std::string& name);  // SIGSTOP
  void thaw(const std::string& name);    // SIGCONT
  // SIGTERM, without waiting: pump() reaps it (life stays Stopping; exitStatus tells how).
  void terminate(const std::string& name);
  // SIGTERM (and SIGCONT) to every live child, up to `grace` for them to exit, then SIGKILL;
  // every child reaped. Returns how many exited with a non-zero status.
  int stopAll(std::chrono::milliseconds grace = std::chrono::seconds(10));

  [[nodiscard]] Node& node(const std::string& name);
  [[nodiscard]] std::deque<Node>& nodes() noexcept { return nodes_; }
  [[nodiscard]] const std::string& logDir() const noexcept { return logDir_; }

private:
  void spawn(Node& node);
  void readFrom(Node& node);
  void reap(Node& node, bool block);

  std::string logDir_;
  std::deque<Node> nodes_;  // a deque: references to nodes stay valid as nodes are added
};

// A TCP port on 127.0.0.1 that was free a moment ago.
[[nodiscard]] std::uint16_t freeLoopbackPort();

// A ZooKeeper on 127.0.0.1:port answers "srvr" with its mode: it takes sessions now (asks once,
// waits at most 1 s for the answer).
[[nodiscard]] bool zookeeperServing(std::uint16_t port);

}  // namespace demo
