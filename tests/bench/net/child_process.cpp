#include "child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

namespace wheelbeat::bench::netbench {
namespace {

std::atomic<bool> gInterrupted{false};

extern "C" void onSignal(int /*sig*/) { gInterrupted.store(true); }

std::runtime_error sysError(const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

int msUntil(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1000));
}

// In the forked child, before exec: only async-signal-safe calls.
[[noreturn]] void execChild(int inFd, int outFd, std::vector<char*>& argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::dup2(inFd, STDIN_FILENO);
  ::dup2(outFd, STDOUT_FILENO);
  ::execv("/proc/self/exe", argv.data());
  ::_exit(127);
}

}  // namespace

void installInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked poll() returns EINTR and the wait checks the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool interrupted() noexcept { return gInterrupted.load(); }

ChildProcess::ChildProcess(std::string name, const std::vector<std::string>& args)
    : name_(std::move(name)) {
  int toChild[2];
  int fromChild[2];
  if (::pipe2(toChild, O_CLOEXEC) != 0) throw sysError("pipe2");
  if (::pipe2(fromChild, O_CLOEXEC) != 0) {
    ::close(toChild[0]);
    ::close(toChild[1]);
    throw sysError("pipe2");
  }
  std::vector<std::string> strings{"/proc/self/exe"};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) execChild(toChild[0], fromChild[1], argv);  // dup2 clears O_CLOEXEC
  ::close(toChild[0]);
  ::close(fromChild[1]);
  in_ = toChild[1];
  out_ = fromChild[0];
  if (pid_ < 0) {
    ::close(in_);
    ::close(out_);
    throw sysError("fork");
  }
}

ChildProcess::~ChildProcess() {
  try {
    finish(Clock::now() + std::chrono::seconds(20));
  } catch (...) {  // a destructor reaps; it cannot report
  }
  if (out_ >= 0) ::close(out_);
}

void ChildProcess::send(const std::string& line) {
  const std::string data = line + "\n";
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(in_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw sysError(fmt::format("{}: writing '{}'", name_, line));
    done += static_cast<std::size_t>(n);
  }
}

bool ChildProcess::takeLine(std::string& line) {
  const auto nl = buffer_.find('\n');
  if (nl == std::string::npos) return false;
  line = buffer_.substr(0, nl);
  buffer_.erase(0, nl + 1);
  return true;
}

std::string ChildProcess::readLine(Clock::time_point deadline) {
  std::string line;
  while (!takeLine(line)) {
    if (interrupted()) throw Interrupted();
    if (Clock::now() >= deadline)
      throw std::runtime_error(fmt::format("{}: no reply in time", name_));
    pollfd p{out_, POLLIN, 0};
    const int r = ::poll(&p, 1, msUntil(deadline));
    if (r < 0 && errno != EINTR) throw sysError("poll");
    if (r <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(fmt::format("{} (pid {}) exited unexpectedly", name_, pid_));
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
  return line;
}

std::string ChildProcess::ask(const std::string& command, Clock::time_point deadline) {
  send(command);
  return readLine(deadline);
}

int ChildProcess::finish(Clock::time_point deadline) {
  if (reaped_ || pid_ <= 0) return status_;
  if (in_ >= 0) ::close(in_);
  in_ = -1;
  while (!reaped_) {
    const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      reaped_ = true;
    } else if (Clock::now() >= deadline) {
      fmt::print(stderr, "wheelbeat_net_bench: {} did not exit in time: SIGKILL\n", name_);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      reaped_ = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return status_;
}

void watchUntil(std::vector<ChildProcess*> children, Clock::time_point deadline) {
  std::vector<pollfd> fds;
  for (auto* c : children) fds.push_back({c->stdoutFd(), POLLIN, 0});
  while (Clock::now() < deadline) {
    if (interrupted()) throw Interrupted();
    const int r = ::poll(fds.data(), fds.size(), msUntil(deadline));
    if (r < 0 && errno != EINTR) throw sysError("poll");
    for (std::size_t i = 0; r > 0 && i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      // Reading the line (or the EOF) reports what happened.
      const std::string line = children[i]->readLine(Clock::now() + std::chrono::seconds(1));
      throw std::runtime_error(
          fmt::format("{} said '{}' during the measurement", children[i]->name(), line));
    }
  }
}

}  // namespace wheelbeat::bench::netbench
