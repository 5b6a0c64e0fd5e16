#include "chaos_lab.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace chaos {

namespace {

constexpr std::string_view kPrefix = "wbchaos-";
// What the kernel keeps of the test executable's name (/proc/PID/comm: 15 characters).
constexpr std::string_view kComm = "wheelbeat_chaos";

std::string describe(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

// argv as the char* array execv wants (pointers into `argv`, which must outlive it).
std::vector<char*> cArgv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  out.reserve(argv.size() + 1);
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// fork + exec of `path` with stdout and stderr on `outFd`, in a process group of its own (a
// Ctrl-C in the terminal reaches the test, which stops its children itself), SIGKILLed by the
// kernel if the test process dies. Only async-signal-safe calls between fork and exec.
pid_t forkExec(const std::string& path, const std::vector<std::string>& argv, int outFd) {
  auto args = cArgv(argv);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    const int devNull = ::open("/dev/null", O_RDONLY);
    if (devNull >= 0) ::dup2(devNull, STDIN_FILENO);
    ::dup2(outFd, STDOUT_FILENO);
    ::dup2(outFd, STDERR_FILENO);
    ::execv(path.c_str(), args.data());
    ::_exit(127);
  }
  return pid;
}

bool pidIsTestProcess(long pid) {
  if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) != 0) return false;
  std::ifstream comm(fmt::format("/proc/{}/comm", pid));
  std::string name;
  std::getline(comm, name);
  return name.rfind(kComm, 0) == 0;
}

}  // namespace

double secondsOf(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// ---- Interruption -------------------------------------------------------------------------------

std::atomic<int> gInterrupted{0};

namespace {
extern "C" void onInterrupt(int sig) { gInterrupted.store(sig); }
}  // namespace

void installInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
}

Interrupted::Interrupted(int sig)
    : std::runtime_error(fmt::format("interrupted by signal {} ({})", sig, ::strsignal(sig))) {}

void throwIfInterrupted() {
  if (const int sig = gInterrupted.load(); sig != 0) throw Interrupted(sig);
}

// ---- Commands -----------------------------------------------------------------------------------

std::string findProgram(std::string_view name) {
  if (name.find('/') != std::string_view::npos) return std::string(name);
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/sbin:/usr/bin:/sbin:/bin";
  dirs += ":/usr/sbin:/sbin";  // root's tools, even when PATH lacks them
  std::stringstream in(dirs);
  for (std::string dir; std::getline(in, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

CommandResult run(const std::vector<std::string>& argv) {
  CommandResult result;
  const std::string path = findProgram(argv.at(0));
  if (path.empty()) {
    result.output = fmt::format("{}: not found in PATH", argv.at(0));
    return result;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const pid_t pid = forkExec(path, argv, fds[1]);
  ::close(fds[1]);
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string runOrThrow(const std::vector<std::string>& argv) {
  CommandResult r = run(argv);
  if (r.status != 0) {
    throw std::runtime_error(
        fmt::format("`{}` failed (status {}): {}", describe(argv), r.status, r.output));
  }
  return std::move(r.output);
}

std::optional<std::string> unavailable() {
  if (::geteuid() != 0) return "not running as root (namespaces, veth and nft need it)";
  if (findProgram("ip").empty()) return "`ip` (iproute2) not found";
  if (findProgram("nft").empty()) return "`nft` (nftables) not found";
  if (findProgram("stdbuf").empty()) return "`stdbuf` (coreutils) not found";
  if (findProgram("ss").empty()) return "`ss` (iproute2) not found";
  // Namespaces may still be refused (a container without CAP_SYS_ADMIN, no netns support).
  const std::string probe = fmt::format("{}{}-probe", kPrefix, ::getpid());
  const CommandResult add = run({"ip", "netns", "add", probe});
  if (add.status != 0) return fmt::format("`ip netns add` failed: {}", add.output);
  const CommandResult nft = run({"ip", "netns", "exec", probe, "nft", "list", "tables"});
  run({"ip", "netns", "del", probe});
  if (nft.status != 0) return fmt::format("`nft` does not work in a namespace: {}", nft.output);
  return std::nullopt;
}

void sweepLeftovers() {
  const CommandResult list = run({"ip", "netns", "list"});
  std::stringstream in(list.output);
  for (std::string line; std::getline(in, line);) {
    const std::string name = line.substr(0, line.find(' '));
    if (name.rfind(kPrefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + kPrefix.size(), nullptr, 10);
    if (pidIsTestProcess(pid)) continue;  // a run in progress
    // Processes still inside (a child whose parent was killed outright dies with it, but be sure).
    std::stringstream pids(run({"ip", "netns", "pids", name}).output);
    for (long p = 0; pids >> p;) ::kill(static_cast<pid_t>(p), SIGKILL);
    const CommandResult del = run({"ip", "netns", "del", name});
    fmt::print("chaos: removed leftover namespace {} of an earlier run{}\n", name,
               del.status == 0 ? "" : fmt::format(" (failed: {})", del.output));
  }
  // Config directories (TempDir): /tmp/wbchaos-<pid>-XXXXXX.
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/tmp", ignored)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0 || !entry.is_directory(ignored)) continue;
    if (pidIsTestProcess(std::strtol(name.c_str() + kPrefix.size(), nullptr, 10))) continue;
    std::filesystem::remove_all(entry.path(), ignored);
    fmt::print("chaos: removed leftover directory {} of an earlier run\n", entry.path().string());
  }
}

// ---- Processes ----------------------------------------------------------------------------------

Process::Process(std::string name, const std::vector<std::string>& argv)
    : name_(std::move(name)), started_(Clock::now()) {
  const std::string path = findProgram(argv.at(0));
  if (path.empty()) throw std::runtime_error(fmt::format("{}: not found", argv.at(0)));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  try {
    pid_ = forkExec(path, argv, fds[1]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  reader_ = std::thread([this, fd = fds[0]] { readLoop(fd); });
}

Process::~Process() {
  kill();
  if (reader_.joinable()) reader_.join();
}

void Process::readLoop(int fd) {
  std::string partial;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const auto at = Clock::now();
    partial.append(buffer, static_cast<std::size_t>(n));
    std::size_t start = 0;
    std::vector<Line> batch;
    for (std::size_t nl = partial.find('\n'); nl != std::string::npos;
         nl = partial.find('\n', start)) {
      batch.push_back(Line{at, partial.substr(start, nl - start)});
      start = nl + 1;
    }
    partial.erase(0, start);
    if (batch.empty()) continue;
    for (const auto& line : batch) {
      // The whole conversation, for a failing run's output (ctest --output-on-failure).
      fmt::print("  [{:7.3f} {}] {}\n", secondsOf(line.at - started_), name_, line.text);
    }
    std::fflush(stdout);
    {
      std::lock_guard lock(mutex_);
      for (auto& line : batch) lines_.push_back(std::move(line));
    }
    changed_.notify_all();
  }
  ::close(fd);
  {
    std::lock_guard lock(mutex_);
    eof_ = true;
  }
  changed_.notify_all();
}

std::optional<Line> Process::waitLine(std::string_view needle, Clock::time_point after,
                                      Clock::time_point deadline) {
  return waitMatch(
      [needle](const std::string& text) { return text.find(needle) != std::string::npos; }, after,
      deadline);
}

std::optional<Line> Process::waitMatch(const std::function<bool(const std::string&)>& match,
                                       Clock::time_point after, Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  std::size_t checked = 0;
  for (;;) {
    for (; checked < lines_.size(); ++checked) {
      const Line& line = lines_[checked];
      if (line.at >= after && match(line.text)) return line;
    }
    throwIfInterrupted();
    const auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    // Woken by every new line; at least every 50 ms to notice a signal.
    changed_.wait_until(lock, std::min(deadline, now + milliseconds(50)));
  }
}

Line Process::expectLine(std::string_view needle, Clock::time_point after,
                         Clock::duration timeout) {
  const auto start = Clock::now();
  if (auto line = waitLine(needle, after, start + timeout)) return *line;
  throw std::runtime_error(fmt::format("{}: no line containing \"{}\" within {:.2f} s", name_,
                                       needle, secondsOf(timeout)));
}

std::vector<Line> Process::lines(std::string_view needle, Clock::time_point from,
                                 Clock::time_point to) {
  std::lock_guard lock(mutex_);
  std::vector<Line> out;
  for (const auto& line : lines_) {
    if (line.at >= from && line.at < to && line.text.find(needle) != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

void Process::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

int Process::reap(Clock::duration timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (r < 0 && errno != EINTR) {
      pid_ = -1;
      return -1;
    }
    if (Clock::now() >= deadline) return -2;
    std::this_thread::sleep_for(milliseconds(5));  // polling a child's exit, bounded
  }
}

int Process::stop(Clock::duration grace) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGCONT);
  ::kill(pid_, SIGTERM);
  const int status = reap(grace);
  if (status != -2) return status;
  kill();
  return -1;
}

void Process::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

// ---- Topology -----------------------------------------------------------------------------------

Lab::Lab()
    : server_(fmt::format("{}{}-srv", kPrefix, ::getpid())),
      client_(fmt::format("{}{}-cli", kPrefix, ::getpid())) {
  throwIfInterrupted();
  try {
    runOrThrow({"ip", "netns", "add", server_});
    runOrThrow({"ip", "netns", "add", client_});
    runOrThrow({"ip", "link", "add", kDevice, "netns", server_, "type", "veth", "peer", "name",
                kDevice, "netns", client_});
    for (const auto& [ns, address] :
         {std::pair{server_, kServerAddress}, {client_, kClientAddress}}) {
      runOrThrow({"ip", "-n", ns, "addr", "add", fmt::format("{}/30", address), "dev", kDevice});
      runOrThrow({"ip", "-n", ns, "link", "set", "lo", "up"});
      runOrThrow({"ip", "-n", ns, "link", "set", kDevice, "up"});
    }
  } catch (...) {
    destroy();
    throw;
  }
}

Lab::~Lab() { destroy(); }

void Lab::destroy() noexcept {
  for (auto it = processes_.rbegin(); it != processes_.rend(); ++it)
    (*it)->kill();  // clients first
  processes_.clear();
  // Deleting a namespace deletes its end of the veth pair (and so the pair) and its nft tables.
  run({"ip", "netns", "del", client_});
  run({"ip", "netns", "del", server_});
}

const std::string& Lab::netns(Side side) const { return side == Side::Server ? server_ : client_; }

std::shared_ptr<Process> Lab::spawn(Side side, std::string name,
                                    const std::vector<std::string>& argv) {
  throwIfInterrupted();
  std::vector<std::string> full{"ip",  "netns", "exec", netns(side), findProgram("stdbuf"),
                                "-oL", "-eL"};
  full.insert(full.end(), argv.begin(), argv.end());
  auto process = std::make_shared<Process>(std::move(name), full);
  processes_.push_back(process);
  return process;
}

std::string Lab::ip(Side side, const std::vector<std::string>& args) const {
  std::vector<std::string> full{"ip", "-n", netns(side)};
  full.insert(full.end(), args.begin(), args.end());
  return runOrThrow(full);
}

std::string Lab::exec(Side side, const std::vector<std::string>& args) const {
  std::vector<std::string> full{"ip", "netns", "exec", netns(side)};
  full.insert(full.end(), args.begin(), args.end());
  return runOrThrow(full);
}

void Lab::setLink(Side side, bool up) const {
  ip(side, {"link", "set", kDevice, up ? "up" : "down"});
}

std::uint16_t Lab::clientPortTo(std::uint16_t port) const {
  // "0 0 10.231.0.2:41234 10.231.0.1:20880" per established connection.
  const std::string out = exec(Side::Client, {"ss", "-tnH", "state", "established", "dst",
                                              fmt::format("{}:{}", kServerAddress, port)});
  std::stringstream in(out);
  for (std::string recvq, sendq, local, peer; in >> recvq >> sendq >> local >> peer;) {
    const auto colon = local.rfind(':');
    if (colon != std::string::npos) {
      return static_cast<std::uint16_t>(std::stoul(local.substr(colon + 1)));
    }
  }
  return 0;
}

int Lab::connectFrom(Side side, const char* host, std::uint16_t port) const {
  // A socket belongs to the namespace of the thread that creates it: enter, create, come back.
  Fd home(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  Fd target(::open(fmt::format("/run/netns/{}", netns(side)).c_str(), O_RDONLY | O_CLOEXEC));
  if (home.get() < 0 || target.get() < 0) throw std::runtime_error("open netns failed");
  if (::setns(target.get(), CLONE_NEWNET) != 0) {
    throw std::runtime_error(fmt::format("setns: {}", std::strerror(errno)));
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::setns(home.get(), CLONE_NEWNET) != 0) std::abort();  // cannot go on in the wrong one
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, host, &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(fmt::format("connect to {}:{}: {}", host, port, std::strerror(err)));
  }
  return fd;
}

NftRules::NftRules(const Lab& lab, Side side, const std::vector<std::string>& rules)
    : lab_(lab), side_(side), count_(rules.size()) {
  std::string script =
      "add table inet wbchaos; "
      "add chain inet wbchaos input { type filter hook input priority 0; policy accept; }; ";
  for (const auto& rule : rules) script += fmt::format("add rule inet wbchaos input {}; ", rule);
  lab_.exec(side_, {"nft", script});
  present_ = true;
}

NftRules::~NftRules() {
  try {
    remove();
  } catch (...) {  // the namespace is going away anyway (Lab's destructor)
  }
}

void NftRules::remove() {
  if (!present_) return;
  present_ = false;
  lab_.exec(side_, {"nft", "delete table inet wbchaos"});
}

long long NftRules::packets(std::size_t index) const {
  if (!present_ || index >= count_) return -1;
  const std::string out = lab_.exec(side_, {"nft", "list", "chain", "inet", "wbchaos", "input"});
  std::size_t seen = 0;
  for (std::size_t at = out.find("counter packets "); at != std::string::npos;
       at = out.find("counter packets ", at + 1)) {
    if (seen++ == index) return std::stoll(out.substr(at + 16));
  }
  return -1;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

TempDir::TempDir() {
  std::string pattern = fmt::format("/tmp/{}{}-XXXXXX", kPrefix, ::getpid());
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const std::string file = path_ + "/" + name;
  std::ofstream out(file);
  out << text;
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", file));
  return file;
}

}  // namespace chaos
