#include "provider_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace wheelbeat::bench::grpcbench {
namespace {

std::runtime_error sysError(const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

// This binary's path, as argv[0] of the providers (so that ps and pgrep show what they are).
std::string selfPath() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "wheelbeat_grpc_bench";
}

int msUntil(Clock::time_point limit) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(limit - Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 100));
}

}  // namespace

// posix_spawn, not fork: the driver has gRPC's threads running by the second row, and a forked
// copy of a threaded process may only make async-signal-safe calls before its exec.
ProviderProcess::ProviderProcess(int index, const std::vector<std::string>& args) : index_(index) {
  int toChild[2];
  int fromChild[2];
  if (::pipe2(toChild, O_CLOEXEC) != 0) throw sysError("pipe2");
  if (::pipe2(fromChild, O_CLOEXEC) != 0) {
    ::close(toChild[0]);
    ::close(toChild[1]);
    throw sysError("pipe2");
  }
  in_ = toChild[1];
  out_ = fromChild[0];
  std::vector<std::string> strings{selfPath()};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO);  // dup2 clears CLOEXEC
  posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO);
  const int rc = ::posix_spawn(&pid_, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(toChild[0]);
  ::close(fromChild[1]);
  if (rc != 0) {
    pid_ = -1;
    ::close(in_);
    ::close(out_);
    errno = rc;
    throw sysError(fmt::format("provider {}: posix_spawn", index_));
  }
}

ProviderProcess::~ProviderProcess() {
  reap(Clock::now() + std::chrono::seconds(5));
  if (out_ >= 0) ::close(out_);
}

void ProviderProcess::pause() const {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void ProviderProcess::resume() const {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

std::string ProviderProcess::readLine(Clock::time_point limit) {
  while (true) {
    const auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (interrupted()) throw std::runtime_error("interrupted");
    if (Clock::now() >= limit) {
      throw std::runtime_error(
          fmt::format("provider {} (pid {}): no answer in time", index_, pid_));
    }
    pollfd p{out_, POLLIN, 0};
    const int r = ::poll(&p, 1, msUntil(limit));
    if (r < 0 && errno != EINTR) throw sysError("poll");
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error(
          fmt::format("provider {} (pid {}) exited unexpectedly", index_, pid_));
    }
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

int ProviderProcess::awaitPort(Clock::time_point limit) {
  const std::string line = readLine(limit);
  int port = 0;
  if (std::sscanf(line.c_str(), "ready %d", &port) != 1 || port <= 0 || port > 65535) {
    throw std::runtime_error(
        fmt::format("provider {}: '{}' (expected 'ready PORT')", index_, line));
  }
  return port;
}

ProviderCounts ProviderProcess::finish(Clock::time_point limit) {
  resume();
  closeStdin();
  ProviderCounts c;
  const std::string line = readLine(limit);
  std::istringstream in(line);
  std::string word;
  if (!(in >> word >> c.calls >> c.measured >> c.retried) || word != "done") {
    throw std::runtime_error(
        fmt::format("provider {}: '{}' (expected 'done CALLS MEASURED RETRIED')", index_, line));
  }
  reap(limit);
  return c;
}

void ProviderProcess::closeStdin() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

void ProviderProcess::reap(Clock::time_point limit) {
  if (reaped_ || pid_ <= 0) return;
  resume();  // a stopped process would never read its EOF
  closeStdin();
  int status = 0;
  while (!reaped_) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      reaped_ = true;
    } else if (Clock::now() >= limit) {
      fmt::print(stderr, "wheelbeat_grpc_bench: provider {} did not exit in time: SIGKILL\n",
                 index_);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      reaped_ = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

}  // namespace wheelbeat::bench::grpcbench
