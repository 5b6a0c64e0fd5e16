#include "proc_stats.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace wheelbeat::bench {
namespace {

std::system_error sysError(const char* what, int err) {
  return {err, std::generic_category(), what};
}

std::chrono::nanoseconds ofTimeval(const timeval& tv) {
  return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
}

// Spawns /proc/self/exe with its stdout on the write end of a pipe; returns the pid.
pid_t spawnWithStdout(const std::vector<std::string>& args, int writeFd) {
  std::vector<std::string> strings{"/proc/self/exe"};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(strings.size() + 1);
  for (auto& s : strings) argv.push_back(s.data());  // posix_spawn wants char*, not const char*
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, writeFd, STDOUT_FILENO);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) throw sysError("posix_spawn /proc/self/exe", err);
  return pid;
}

std::string readAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got > 0) {
      out.append(buf, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      return out;
    }
  }
}

}  // namespace

std::int64_t vmRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      std::int64_t kib = 0;
      status >> kib;  // the kernel always reports kB
      return kib * 1024;
    }
    status.ignore(1 << 16, '\n');
  }
  throw std::runtime_error("VmRSS not found in /proc/self/status");
}

std::chrono::nanoseconds processCpu() {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) throw sysError("getrusage", errno);
  return ofTimeval(ru.ru_utime) + ofTimeval(ru.ru_stime);
}

std::chrono::nanoseconds threadCpu() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) throw sysError("clock_gettime", errno);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

clockid_t threadCpuClock() {
  clockid_t clock{};
  const int err = pthread_getcpuclockid(pthread_self(), &clock);
  if (err != 0) throw sysError("pthread_getcpuclockid", err);
  return clock;
}

std::chrono::nanoseconds cpuOfClock(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) throw sysError("clock_gettime", errno);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

std::string runSelf(const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw sysError("pipe2", errno);
  pid_t pid = 0;
  try {
    pid = spawnWithStdout(args, fds[1]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  std::string out = readAll(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(
        fmt::format("child '{}' failed (wait status {})", args.front(), status));
  }
  return out;
}

}  // namespace wheelbeat::bench
