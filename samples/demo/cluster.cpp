#include "cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>
#include <thread>

namespace demo {

std::string NodeStatus::text(const std::string& key) const {
  const auto it = fields.find(key);
  return it == fields.end() ? std::string() : it->second;
}

std::uint64_t NodeStatus::number(const std::string& key) const {
  try {
    return std::stoull(text(key));
  } catch (const std::exception&) {
    return 0;
  }
}

namespace {
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(sep, begin), text.size());
    out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}
}  // namespace

std::vector<std::string> NodeStatus::list(const std::string& key) const {
  const std::string value = text(key);
  if (value.empty() || value == "-") return {};
  return split(value, ',');
}

std::vector<LinkView> linksOf(const NodeStatus& status) {
  std::vector<LinkView> out;
  for (const std::string& record : status.list("links")) {
    const auto f = split(record, ':');
    if (f.size() != 4) continue;
    out.push_back({f[0], std::stoull(f[1]), std::stoull(f[2]), f[3] == "1"});
  }
  return out;
}

Cluster::Cluster(std::string logDir) : logDir_(std::move(logDir)) {}

Cluster::~Cluster() { stopAll(std::chrono::seconds(2)); }

Node& Cluster::start(std::string name, std::string role, std::vector<std::string> argv,
                     bool hasStatus) {
  Node& node = nodes_.emplace_back();
  node.name = std::move(name);
  node.role = std::move(role);
  node.argv = std::move(argv);
  node.hasStatus = hasStatus;
  spawn(node);
  return node;
}

void Cluster::restart(const std::string& name) {
  Node& n = node(name);
  if (n.life == Life::Running || n.life == Life::Frozen || n.life == Life::Stopping) kill(name);
  n.status = {};
  n.buffer.clear();
  spawn(n);
}

// Everything the child needs is prepared before fork(): after it, only async-signal-safe calls.
void Cluster::spawn(Node& node) {
  int fds[2] = {-1, -1};
  const bool wantsPipe = node.hasStatus;
  if (wantsPipe && ::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const std::string logPath = fmt::format("{}/{}.log", logDir_, node.name);
  std::vector<char*> args;
  for (auto& a : node.argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the driver died (even by SIGKILL): so do we
    const int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) ::dup2(log, STDERR_FILENO);
    ::dup2(wantsPipe ? fds[1] : (log >= 0 ? log : STDERR_FILENO), STDOUT_FILENO);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  if (wantsPipe) {
    ::close(fds[1]);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    node.fd = fds[0];
  }
  node.pid = pid;
  node.life = Life::Running;
  node.exitStatus = -1;
}

void Cluster::readFrom(Node& node) {
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(node.fd, chunk, sizeof chunk);
    if (n <= 0) {
      if (n == 0) {  // EOF: the node exited (or closed stdout)
        ::close(node.fd);
        node.fd = -1;
      }
      return;
    }
    node.buffer.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t eol; (eol = node.buffer.find('\n')) != std::string::npos;) {
      const std::string line = node.buffer.substr(0, eol);
      node.buffer.erase(0, eol + 1);
      // "2026-11-25T14:03:07.412Z INFO  STATUS k=v k=v" (samples/common/say.h's line).
      const std::size_t at = line.find(" STATUS ");
      if (at == std::string::npos) continue;
      node.status.fields.clear();
      for (const std::string& kv : split(line.substr(at + 8), ' ')) {
        const auto eq = kv.find('=');
        if (eq != std::string::npos) node.status.fields[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      node.status.at = SteadyClock::now();
    }
  }
}

void Cluster::pump(std::chrono::milliseconds wait) {
  std::vector<pollfd> fds;
  std::vector<Node*> owners;
  for (Node& n : nodes_) {
    if (n.fd >= 0) {
      fds.push_back({n.fd, POLLIN, 0});
      owners.push_back(&n);
    }
  }
  if (fds.empty()) {
    std::this_thread::sleep_for(wait);
  } else if (::poll(fds.data(), fds.size(), static_cast<int>(wait.count())) > 0) {
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) readFrom(*owners[i]);
    }
  }
  for (Node& n : nodes_) reap(n, false);
}

void Cluster::reap(Node& node, bool block) {
  if (node.pid <= 0) return;
  int status = 0;
  const pid_t r = ::waitpid(node.pid, &status, block ? 0 : WNOHANG);
  if (r != node.pid) return;
  node.exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (node.life != Life::Killed && node.life != Life::Stopping) node.life = Life::Exited;
  node.pid = -1;
  if (node.fd >= 0) {
    readFrom(node);  // the last lines it wrote
    if (node.fd >= 0) ::close(node.fd);
    node.fd = -1;
  }
}

void Cluster::kill(const std::string& name) {
  Node& n = node(name);
  if (n.pid <= 0) return;
  ::kill(n.pid, SIGKILL);
  n.life = Life::Killed;
  reap(n, true);
}

void Cluster::terminate(const std::string& name) {
  Node& n = node(name);
  if (n.pid > 0 && ::kill(n.pid, SIGTERM) == 0) n.life = Life::Stopping;
}

void Cluster::freeze(const std::string& name) {
  Node& n = node(name);
  if (n.pid > 0 && ::kill(n.pid, SIGSTOP) == 0) n.life = Life::Frozen;
}

void Cluster::thaw(const std::string& name) {
  Node& n = node(name);
  if (n.pid > 0 && ::kill(n.pid, SIGCONT) == 0) n.life = Life::Running;
}

int Cluster::stopAll(std::chrono::milliseconds grace) {
  for (Node& n : nodes_) {
    if (n.pid <= 0) continue;
    ::kill(n.pid, SIGTERM);
    ::kill(n.pid, SIGCONT);  // a frozen node must run to handle its SIGTERM
  }
  const auto end = SteadyClock::now() + grace;
  auto alive = [this] {
    for (const Node& n : nodes_) {
      if (n.pid > 0) return true;
    }
    return false;
  };
  while (alive() && SteadyClock::now() < end) pump(std::chrono::milliseconds(20));
  int failed = 0;
  for (Node& n : nodes_) {
    if (n.pid > 0) {
      ::kill(n.pid, SIGKILL);  // did not stop in time: counted as a failure
      reap(n, true);
      ++failed;
    } else if (n.life == Life::Exited && n.exitStatus != n.cleanExit) {
      ++failed;
    }
  }
  return failed;
}

Node& Cluster::node(const std::string& name) {
  for (Node& n : nodes_) {
    if (n.name == name) return n;
  }
  throw std::invalid_argument("no node named " + name);
}

std::uint16_t freeLoopbackPort() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  std::uint16_t port = 0;
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
      ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(s);
  if (port == 0) throw std::runtime_error("no free loopback port");
  return port;
}

bool zookeeperServing(std::uint16_t port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  std::string answer;
  if (::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(s, "srvr", 4, MSG_NOSIGNAL) == 4) {
    const auto end = SteadyClock::now() + std::chrono::seconds(1);
    char buf[1024];
    while (SteadyClock::now() < end) {  // the server answers, then closes the connection
      pollfd p{s, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(s, buf, sizeof buf, 0);
      if (n <= 0) break;
      answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(s);
  return answer.find("Mode: ") != std::string::npos;
}

}  // namespace demo
