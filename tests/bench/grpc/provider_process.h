// ProviderProcess: one provider, this binary run again with --role provider, driven over its stdin
// (closed: stop) and stdout (its "ready PORT" and "done ..." lines; its stderr is ours).
// The process cannot outlive the driver: it asks the kernel for SIGKILL on the driver's death
// (providerMain), and the destructor of this class always reaps it (SIGCONT first, in case it is
// stopped; EOF on its stdin; SIGKILL after a grace period).
// Thread: the driver's main thread, except pause() / resume(), which the fault thread may call
// while the main thread waits (they only send a signal to a pid that stays reserved until the
// destructor reaps it).
#pragma once

#include "grpc_bench.h"

#include <sys/types.h>

#include <string>
#include <vector>

namespace wheelbeat::bench::grpcbench {

class ProviderProcess {
public:
  // Starts the provider (throws std::runtime_error if it cannot).
  ProviderProcess(int index, const std::vector<std::string>& args);
  ~ProviderProcess();
  ProviderProcess(const ProviderProcess&) = delete;
  ProviderProcess& operator=(const ProviderProcess&) = delete;

  // Its port, once it serves. Throws std::runtime_error on an exit or no answer by `limit`, or
  // when interrupted.
  int awaitPort(Clock::time_point limit);
  // Stops it (SIGCONT, EOF on stdin) and returns its counts; throws std::runtime_error if it does
  // not report by `limit`. The process is reaped either way.
  ProviderCounts finish(Clock::time_point limit);

  void pause() const;   // SIGSTOP
  void resume() const;  // SIGCONT

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

private:
  std::string readLine(Clock::time_point limit);
  void closeStdin();
  void reap(Clock::time_point limit);

  int index_;
  pid_t pid_ = -1;
  int in_ = -1;   // its stdin (we write nothing: closing it is the stop signal)
  int out_ = -1;  // its stdout
  std::string buffer_;
  bool reaped_ = false;
};

}  // namespace wheelbeat::bench::grpcbench
