// ChildProcess: this binary run again as a server or client, driven over a pipe pair (the
// child's stdin and stdout; its stderr is ours). Every wait is bounded by a deadline and gives
// up early when SIGINT/SIGTERM/SIGHUP arrived (installInterruptHandlers()); the destructor always
// reaps the child: EOF on its stdin (it quits), a grace period, then SIGKILL.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace wheelbeat::bench::netbench {

using Clock = std::chrono::steady_clock;

// Thrown by a wait that saw SIGINT/SIGTERM.
class Interrupted : public std::runtime_error {
public:
  Interrupted() : std::runtime_error("interrupted") {}
};

// SIGINT/SIGTERM/SIGHUP set a flag that the waits below check (no SA_RESTART: poll() returns
// EINTR); SIGPIPE is ignored (a child that died shows up as EOF or EPIPE, reported as an error).
void installInterruptHandlers();
[[nodiscard]] bool interrupted() noexcept;

class ChildProcess {
public:
  // Starts /proc/self/exe with `args`; `name` appears in errors ("client 2"). The child gets
  // SIGKILL if the driver dies (PR_SET_PDEATHSIG), so no process outlives a killed driver.
  ChildProcess(std::string name, const std::vector<std::string>& args);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  void send(const std::string& line);
  // The next line of the child's stdout. Throws std::runtime_error on EOF (the child died) or
  // when the deadline passes, Interrupted on a signal.
  std::string readLine(Clock::time_point deadline);
  // send(command) + readLine(deadline).
  std::string ask(const std::string& command, Clock::time_point deadline);

  // Closes the child's stdin (it quits) and waits for it until `deadline`, then SIGKILLs it.
  // Returns its wait status; idempotent.
  int finish(Clock::time_point deadline);

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] int stdoutFd() const noexcept { return out_; }

private:
  bool takeLine(std::string& line);

  std::string name_;
  pid_t pid_ = -1;
  int in_ = -1;   // the child's stdin (we write)
  int out_ = -1;  // the child's stdout (we read)
  std::string buffer_;
  bool reaped_ = false;
  int status_ = 0;
};

// Waits until `deadline` while watching every child: any output line or EOF before then is an
// error (a child that prints or dies during a measurement window spoils it). Throws
// std::runtime_error naming the child, or Interrupted.
void watchUntil(std::vector<ChildProcess*> children, Clock::time_point deadline);

}  // namespace wheelbeat::bench::netbench
