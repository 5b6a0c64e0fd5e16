#include "redis_server.h"

#include "../loopback_port.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iterator>
#include <random>
#include <thread>

extern char** environ;

namespace wbredis {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kRedisServer = "/usr/bin/redis-server";

using wbports::freePort;
using wbports::loopback;

// Reads one RESP line (without CRLF) from `buf`, refilling it from `fd`; false on timeout/EOF.
bool readLine(int fd, std::string& buf, std::string& line, Clock::time_point deadline) {
  for (;;) {
    if (const auto pos = buf.find("\r\n"); pos != std::string::npos) {
      line = buf.substr(0, pos);
      buf.erase(0, pos + 2);
      return true;
    }
    pollfd p{fd, POLLIN, 0};
    if (Clock::now() >= deadline) return false;
    if (::poll(&p, 1, 10) <= 0) continue;
    char tmp[4096];
    const ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<std::size_t>(n));
  }
}

// Bulk strings here never contain CRLF (urls, numbers), so a bulk is read as its line.
bool readReply(int fd, std::string& buf, Resp& out, Clock::time_point deadline) {
  std::string line;
  if (!readLine(fd, buf, line, deadline) || line.empty()) return false;
  out.type = line[0];
  out.text = line.substr(1);
  if (out.type == '$') {
    if (out.text == "-1") return out.type = '_', true;
    return readLine(fd, buf, out.text, deadline);
  }
  if (out.type != '*') return true;
  const int n = std::stoi(out.text);
  for (int i = 0; i < n; ++i) {
    Resp item;
    if (!readReply(fd, buf, item, deadline)) return false;
    out.items.push_back(item.text);
  }
  return true;
}

}  // namespace

RedisServer::RedisServer() {
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = freePort();
    REQUIRE(port_ != 0);
    if (start()) return;
    kill();  // lost the port to someone else between the probe and the spawn: another one
  }
  FAIL("redis-server did not start");
}

RedisServer::~RedisServer() { stop(); }

bool RedisServer::spawn() {
  const std::string port = std::to_string(port_);
  std::vector<std::string> args = {
      kRedisServer,  "--port", port,    "--bind", "127.0.0.1",  "--save", "", "--appendonly", "no",
      "--daemonize", "no",     "--dir", "/tmp",   "--loglevel", "warning"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const int rc = posix_spawn(&pid_, kRedisServer, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) pid_ = -1;
  return rc == 0;
}

bool RedisServer::start() {
  if (pid_ > 0) return true;
  return spawn() && waitReady();
}

bool RedisServer::waitReady() const {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) return false;  // it exited: port taken?
    if (command({"PING"}).text == "PONG") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void RedisServer::reap(int signal, int graceMs) {
  wbports::reap(pid_, signal, std::chrono::milliseconds(graceMs));
}

void RedisServer::stop() { reap(SIGTERM, 3000); }
void RedisServer::kill() { reap(SIGKILL, 3000); }
void RedisServer::pause() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}
void RedisServer::resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

Resp RedisServer::command(const std::vector<std::string>& args) const {
  Resp out;
  out.type = '!';
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in a = loopback(port_);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return out;
  }
  // fmt, not "*" + std::to_string(...): GCC 12 at -O3 sees an impossible memcpy bound there.
  std::string req = fmt::format("*{}\r\n", args.size());
  for (const auto& arg : args)
    fmt::format_to(std::back_inserter(req), "${}\r\n{}\r\n", arg.size(), arg);
  std::string buf;
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
    if (!readReply(fd, buf, out, Clock::now() + std::chrono::seconds(2))) out = Resp{'!', {}, {}};
  }
  ::close(fd);
  return out;
}

}  // namespace wbredis
