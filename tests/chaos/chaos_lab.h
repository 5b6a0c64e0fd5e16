// The chaos lab: two network namespaces joined by a veth pair, real processes started inside them
// with `ip netns exec`, nftables rules as faults, and every line those processes print stamped
// with the steady clock when it arrives.
//
//   Lab lab;                                   // wbchaos-<pid>-srv / -cli, 10.231.0.1 / .2
//   auto server = lab.spawn(Side::Server, "srv", {echoServer, "--config", file});
//   server->waitLine("listening on", ...);
//   NftRules drop(lab, Side::Server, "tcp dport 20880 counter drop");   // removed by ~NftRules
//
// Everything the lab creates is removed on every exit path: the destructors (normal end, failed
// check, exception), a SIGINT / SIGTERM of the test (the handler only sets a flag; every wait
// polls it and throws Interrupted, so the destructors run), children that get SIGKILL when the
// test process dies (PR_SET_PDEATHSIG), and a start-up sweep of namespaces left by a run that
// was killed outright (their name carries the PID of a test process that no longer exists).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace chaos {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Seconds as a double, for printing and for bounds.
[[nodiscard]] double secondsOf(Clock::duration d);

// ---- Interruption -------------------------------------------------------------------------------

// Set by the SIGINT / SIGTERM handler (installInterruptHandlers()); 0 otherwise.
extern std::atomic<int> gInterrupted;
void installInterruptHandlers();

struct Interrupted : std::runtime_error {
  explicit Interrupted(int sig);
};
// Throws Interrupted when a signal arrived.
void throwIfInterrupted();

// ---- Commands -----------------------------------------------------------------------------------

struct CommandResult {
  int status = -1;     // exit status, or -1 if it did not exit normally
  std::string output;  // stdout and stderr together
};
// Runs argv[0] (searched in PATH) to completion; never throws for a non-zero exit.
CommandResult run(const std::vector<std::string>& argv);
// The same; throws std::runtime_error with the command and its output unless it exits 0.
std::string runOrThrow(const std::vector<std::string>& argv);
// The absolute path of `name` in PATH; empty if not found.
[[nodiscard]] std::string findProgram(std::string_view name);

// Why the suite cannot run here (not root, no `ip netns`, no nft), or nothing.
[[nodiscard]] std::optional<std::string> unavailable();
// Removes namespaces "wbchaos-<pid>-..." whose test process is gone (and whatever runs in them),
// and config directories /tmp/wbchaos-<pid>-... likewise.
void sweepLeftovers();

// ---- Processes ----------------------------------------------------------------------------------

struct Line {
  Clock::time_point at;  // when the test read it
  std::string text;
};

// A child process whose stdout and stderr are read line by line by a thread of ours. SIGKILLed
// and reaped by the destructor (and by the kernel if the test process dies first).
class Process {
public:
  Process(std::string name, const std::vector<std::string>& argv);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] pid_t pid() const { return pid_; }

  // The first line read at or after `after` that contains `needle`, waiting until `deadline`.
  std::optional<Line> waitLine(std::string_view needle, Clock::time_point after,
                               Clock::time_point deadline);
  // The first line read at or after `after` for which `match` holds, waiting until `deadline`.
  std::optional<Line> waitMatch(const std::function<bool(const std::string&)>& match,
                                Clock::time_point after, Clock::time_point deadline);
  // Like waitLine, but throws (naming the process, the needle and the time waited) on a timeout.
  Line expectLine(std::string_view needle, Clock::time_point after, Clock::duration timeout);
  // Every line read in [from, to) that contains `needle`.
  [[nodiscard]] std::vector<Line> lines(std::string_view needle, Clock::time_point from,
                                        Clock::time_point to = Clock::time_point::max());

  void signal(int sig) const;
  // SIGTERM, then waits for the exit (SIGKILL after `grace`); returns the exit status or -1.
  int stop(Clock::duration grace = std::chrono::seconds(3));
  // SIGKILL and reap now.
  void kill();
  [[nodiscard]] bool running() const { return pid_ > 0; }

private:
  void readLoop(int fd);
  int reap(Clock::duration timeout);

  std::string name_;
  pid_t pid_ = -1;
  Clock::time_point started_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Line> lines_;
  bool eof_ = false;
  std::thread reader_;
};

// ---- Topology -----------------------------------------------------------------------------------

enum class Side { Server, Client };

class Lab {
public:
  static constexpr const char* kServerAddress = "10.231.0.1";
  static constexpr const char* kClientAddress = "10.231.0.2";
  static constexpr const char* kDevice = "veth0";  // the same name inside both namespaces

  // Creates both namespaces and the veth pair, addresses, links up; throws on any failure (what
  // was created is removed again).
  Lab();
  // Kills the processes it spawned, then deletes both namespaces (with the veth pair and every
  // nft table in them).
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  [[nodiscard]] const std::string& netns(Side side) const;
  // A process inside a namespace: ip netns exec NS stdbuf -oL -eL argv... (line-buffered output:
  // the samples flush stdout only once a second otherwise).
  std::shared_ptr<Process> spawn(Side side, std::string name, const std::vector<std::string>& argv);
  // `ip -n NS <args>`, `ip netns exec NS <args>`.
  std::string ip(Side side, const std::vector<std::string>& args) const;
  std::string exec(Side side, const std::vector<std::string>& args) const;
  void setLink(Side side, bool up) const;
  // The local port of the client's established TCP connection to `port` (via ss); 0 if none.
  [[nodiscard]] std::uint16_t clientPortTo(std::uint16_t port) const;
  // A TCP socket made inside `side`'s namespace and connected (blocking) to host:port. The
  // caller owns the descriptor.
  [[nodiscard]] int connectFrom(Side side, const char* host, std::uint16_t port) const;

private:
  void destroy() noexcept;

  std::string server_;
  std::string client_;
  std::vector<std::shared_ptr<Process>> processes_;
};

// One nft table ("inet wbchaos") in a namespace with an input chain holding `rules` (one rule
// each, nft syntax); deleted by remove() or the destructor.
class NftRules {
public:
  NftRules(const Lab& lab, Side side, const std::vector<std::string>& rules);
  ~NftRules();
  NftRules(const NftRules&) = delete;
  NftRules& operator=(const NftRules&) = delete;

  // Packets counted by the `counter` of rule `index` (in the order given); -1 if none.
  [[nodiscard]] long long packets(std::size_t index) const;
  void remove();

private:
  const Lab& lab_;
  Side side_;
  std::size_t count_;
  bool present_ = false;
};

// A file descriptor closed by the destructor.
class Fd {
public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd();
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }

private:
  int fd_;
};

// A directory under /tmp removed (with its files) by the destructor.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Writes `text` to <dir>/<name>; returns the path.
  std::string write(const std::string& name, const std::string& text) const;

private:
  std::string path_;
};

}  // namespace chaos
