// A wheelbeat client against a real server process (build/bin/echo_server as a child):
//   - frozen with SIGSTOP: the socket stays open and silent, so only the heartbeat machinery can
//     tell; the half-open link is detected within idle timeout + one check interval, and once
//     the peer is thawed (SIGCONT) the forced reconnect succeeds;
//   - killed with SIGKILL and started again on the same port: the client reconnects within its
//     backoff bound.
#include "../support.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <optional>

extern char** environ;

using namespace wbnet;

namespace {

// echo_server on `port` as a child process; SIGKILLed and reaped by the destructor.
class EchoServerProcess {
public:
  explicit EchoServerProcess(std::uint16_t port) {
    const std::string portText = std::to_string(port);
    char* argv[] = {const_cast<char*>(WHEELBEAT_ECHO_SERVER), const_cast<char*>("--port"),
                    const_cast<char*>(portText.c_str()), nullptr};
    REQUIRE(posix_spawn(&pid_, WHEELBEAT_ECHO_SERVER, nullptr, nullptr, argv, environ) == 0);
    // Ready when it accepts a connection (bounded).
    REQUIRE(waitFor([port] { return canConnect(port); }, 10s));
  }
  ~EchoServerProcess() { kill(SIGKILL); }
  EchoServerProcess(const EchoServerProcess&) = delete;
  EchoServerProcess& operator=(const EchoServerProcess&) = delete;

  void signal(int sig) const { ::kill(pid_, sig); }
  void kill(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);  // a stopped process must run to die of SIGTERM
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  static bool canConnect(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
  }

private:
  pid_t pid_ = -1;
};

// A free loopback port: bind port 0, read it, release it (the server binds it right after).
std::uint16_t freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Records state changes with the time they happened.
struct States {
  std::mutex mutex;
  std::vector<std::pair<ClientState, Clock::time_point>> seen;

  TcpClient::StateCallback callback() {
    return [this](ClientState, ClientState to) {
      std::lock_guard lock(mutex);
      seen.emplace_back(to, Clock::now());
    };
  }
  std::optional<Clock::time_point> firstAfter(ClientState state, Clock::time_point t) {
    std::lock_guard lock(mutex);
    for (const auto& [s, at] : seen) {
      if (s == state && at >= t) return at;
    }
    return std::nullopt;
  }
};

}  // namespace

TEST_SUITE("fault") {

TEST_CASE("fault: a peer frozen by SIGSTOP is detected as half-open and rejoins after SIGCONT") {
  Env env;
  const std::uint16_t port = freePort();
  EchoServerProcess peer(port);
  States states;
  ClientOptions options = clientOptions(port);  // heartbeat 100 ms, idle 300 ms, checks 100 ms
  TcpClient client(env.loop, env.timer, options, {}, states.callback());
  client.start();
  REQUIRE(waitFor([&] { return client.state() == ClientState::Connected; }));
  REQUIRE(waitFor([&] { return client.channel().lastHeartbeatRtt() > ns(0); }));  // answered
  const auto frozenAt = Clock::now();
  peer.signal(SIGSTOP);
  // Detected: the reconnect task tears the silent link down (idle 300 ms + one 100 ms check,
  // plus a tick and scheduling slack on a loaded machine).
  REQUIRE(
      waitFor([&] { return states.firstAfter(ClientState::Disconnected, frozenAt).has_value(); }));
  const auto detected = *states.firstAfter(ClientState::Disconnected, frozenAt);
  // Idle counts from the last read before the freeze, which was at most a heartbeat plus a check
  // (133 ms) earlier: never sooner than that after the freeze.
  CHECK(detected - frozenAt >= 300ms - 140ms);
  CHECK(detected - frozenAt < 300ms + 100ms + 1s);
  // While frozen the kernel still accepts connections (backlog), but no heartbeat is answered,
  // so the client never stays connected for long: thaw it and the link comes back for good.
  const auto thawedAt = Clock::now();
  peer.signal(SIGCONT);
  REQUIRE(waitFor([&] {
    return client.state() == ClientState::Connected &&
           client.channel().lastRead() > env.timer.now() - 150ms;
  }));
  CHECK(Clock::now() - thawedAt < 5s);
  client.close();
}

TEST_CASE(
    "fault: a server killed and restarted on the same port is reached again within the backoff "
    "bound") {
  Env env;
  const std::uint16_t port = freePort();
  std::optional<EchoServerProcess> peer(std::in_place, port);
  States states;
  TcpClient client(env.loop, env.timer, clientOptions(port), {}, states.callback());
  client.start();
  REQUIRE(waitFor([&] { return client.state() == ClientState::Connected; }));
  peer->kill(SIGKILL);
  REQUIRE(waitFor([&] { return client.state() != ClientState::Connected; }));
  peer.emplace(port);
  const auto restartedAt = Clock::now();
  REQUIRE(
      waitFor([&] { return states.firstAfter(ClientState::Connected, restartedAt).has_value(); }));
  // Backoff 50 ms x2 capped at 200 ms (+20 % jitter): the next attempt after the restart starts
  // within 240 ms; allow a connect, a tick and scheduling slack.
  CHECK(*states.firstAfter(ClientState::Connected, restartedAt) - restartedAt < 240ms + 1s);
  client.close();
}

}  // TEST_SUITE("fault")
