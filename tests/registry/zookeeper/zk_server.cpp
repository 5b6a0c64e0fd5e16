#include "zk_server.h"

#include "../loopback_port.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <random>
#include <system_error>
#include <thread>
#include <vector>

extern char** environ;

namespace wbzk {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kJava = "/usr/bin/java";
constexpr const char* kZooKeeperJar =
    "/usr/share/java/zookeeper.jar";  // its manifest lists the rest
constexpr const char* kSlf4jSimple = "/usr/share/java/slf4j-simple.jar";  // warnings to the log
constexpr auto kStartBound = 30s;

using wbports::freePort;
using wbports::loopback;

std::string makeTempDir() {
  std::string templ = (fs::temp_directory_path() / "wbzk-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return {};
  return templ;
}

}  // namespace

ZkServer::ZkServer() {
  dir_ = makeTempDir();
  REQUIRE_MESSAGE(!dir_.empty(), "cannot create a temporary directory");
  fs::create_directories(fs::path(dir_) / "data");
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = freePort();
    REQUIRE(port_ != 0);
    writeConfig();
    if (start()) return;
    stop();  // the port was taken between the probe and the bind, or the JVM failed: again
  }
  FAIL("ZooKeeper did not start: " << error_);
}

ZkServer::~ZkServer() {
  stop();
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string ZkServer::hosts() const { return fmt::format("127.0.0.1:{}", port_); }

void ZkServer::writeConfig() const {
  std::ofstream cfg(fs::path(dir_) / "zoo.cfg", std::ios::trunc);
  cfg << "tickTime=" << kTickTime.count() << "\n"
      << "minSessionTimeout=" << kMinSessionTimeout.count() << "\n"
      << "maxSessionTimeout=" << kMaxSessionTimeout.count() << "\n"
      << "dataDir=" << (fs::path(dir_) / "data").string() << "\n"
      << "clientPort=" << port_ << "\n"
      << "clientPortAddress=127.0.0.1\n"
      << "maxClientCnxns=0\n"
      << "admin.enableServer=false\n"  // no Jetty on port 8080
      << "4lw.commands.whitelist=ruok,srvr,cons,stat\n"
      << "preAllocSize=1024\n"  // KiB: small transaction logs in /tmp
      << "snapCount=100000\n";
}

bool ZkServer::spawn() {
  const std::string classpath =
      fs::exists(kSlf4jSimple) ? fmt::format("{}:{}", kZooKeeperJar, kSlf4jSimple) : kZooKeeperJar;
  std::vector<std::string> args = {kJava,
                                   "-Xmx256m",
                                   "-XX:+UseSerialGC",
                                   "-XX:TieredStopAtLevel=1",  // starts faster; plenty for tests
                                   "-Djava.awt.headless=true",
                                   "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                                   "-Dzookeeper.jmx.log4j.disable=true",
                                   "-cp",
                                   classpath,
                                   "org.apache.zookeeper.server.ZooKeeperServerMain",
                                   (fs::path(dir_) / "zoo.cfg").string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = (fs::path(dir_) / "server.log").string();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    error_ = fmt::format("fork: {}", std::strerror(errno));
    return false;
  }
  if (pid == 0) {  // the child: async-signal-safe calls only, then exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::execve(kJava, argv.data(), environ);
    ::_exit(127);
  }
  pid_ = pid;
  return true;
}

bool ZkServer::start() {
  if (pid_ > 0) return true;
  const auto t0 = Clock::now();
  if (!spawn()) return false;
  if (!waitServing()) return false;
  startTime_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  return true;
}

bool ZkServer::waitServing() {
  const auto deadline = Clock::now() + kStartBound;
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = fmt::format("the server exited (status {:#x}) on port {}; log tail:\n{}", status,
                           port_, logTail());
      return false;
    }
    // "ruok" answers before the server takes sessions; "srvr" reports a mode only then.
    if (fourLetter("srvr").find("Mode: ") != std::string::npos) return true;
    std::this_thread::sleep_for(20ms);  // polling a condition with a deadline
  }
  error_ = fmt::format("the server did not serve on port {} within {} s; log tail:\n{}", port_,
                       kStartBound.count(), logTail());
  return false;
}

void ZkServer::reap(int signal, int graceMs) {
  wbports::reap(pid_, signal, std::chrono::milliseconds(graceMs));
}

void ZkServer::stop() { reap(SIGTERM, 5000); }

bool ZkServer::restart(bool wipeData) {
  stop();
  if (wipeData) {
    std::error_code ec;
    fs::remove_all(fs::path(dir_) / "data", ec);
    fs::create_directories(fs::path(dir_) / "data", ec);
  }
  return start();
}

std::string ZkServer::fourLetter(const std::string& command) const {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return {};
  const sockaddr_in a = loopback(port_);
  std::string out;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0 &&
      ::send(fd, command.data(), command.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(command.size())) {
    const auto deadline = Clock::now() + 2s;
    char buf[4096];
    while (Clock::now() < deadline) {  // the server answers, then closes the connection
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

std::string ZkServer::logTail(std::size_t lines) const {
  std::ifstream in(fs::path(dir_) / "server.log");
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (tail.size() > lines) tail.pop_front();
  }
  std::string out;
  for (const auto& l : tail) out += l + "\n";
  return out.empty() ? "(empty)\n" : out;
}

}  // namespace wbzk
