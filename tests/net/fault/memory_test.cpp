// Hostile peers against a server process whose address space is limited to what it uses plus
// 64 MiB (wheelbeat_memory_server, RLIMIT_AS): 200 peers each announce an 8 MiB body and send
// 1 MiB of it, then stall. The server must stay up, keep answering a healthy client, and close
// every hostile peer with a reason:
//   - with the default partial-frame budget (32 MiB per loop), those that would exceed it with
//     "resource: partial-frame budget", the few it holds by the close-idle timeout;
//   - with the budget off (0), the allocations themselves fail: "resource: out of memory".
// Skipped under ASan / TSan: their shadow memory makes an address-space limit meaningless.
#include "../support.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <map>
#include <memory>
#include <sstream>

extern char** environ;

using namespace wbnet;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

constexpr int kHostilePeers = 200;
constexpr std::size_t kAnnounced = std::size_t{8} << 20;
constexpr std::size_t kSent = std::size_t{1} << 20;

// "key=value" fields of one line of the server.
std::map<std::string, std::string> fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  // resource_text runs to the end of the line.
  if (const auto at = line.find("resource_text="); at != std::string::npos) {
    out["resource_text"] = line.substr(at + 14);
  }
  return out;
}

// wheelbeat_memory_server as a child, talked to through pipes; killed and reaped at the end.
class MemoryServer {
public:
  explicit MemoryServer(std::size_t maxPartialBytes) {
    int in[2];
    int out[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    const std::string budget = std::to_string(maxPartialBytes);
    char* argv[] = {const_cast<char*>(WHEELBEAT_MEMORY_SERVER),
                    const_cast<char*>("--max-partial-bytes"),
                    const_cast<char*>(budget.c_str()),
                    const_cast<char*>("--headroom-mib"),
                    const_cast<char*>("64"),
                    nullptr};
    const int rc = posix_spawn(&pid_, WHEELBEAT_MEMORY_SERVER, &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    toServer_ = in[1];
    fromServer_ = out[0];
    REQUIRE(rc == 0);
    ready = fields(readLine(10s));
    REQUIRE(ready.count("port") == 1);
    port = static_cast<std::uint16_t>(std::stoi(ready["port"]));
  }
  ~MemoryServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(toServer_);
    ::close(fromServer_);
  }
  MemoryServer(const MemoryServer&) = delete;
  MemoryServer& operator=(const MemoryServer&) = delete;

  std::map<std::string, std::string> stats() {
    send("stats\n");
    return fields(readLine(10s));
  }
  [[nodiscard]] bool alive() const { return ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  // quit: the exit status (0 = stopped cleanly).
  int quit() {
    send("quit\n");
    (void)readLine(10s);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::map<std::string, std::string> ready;
  std::uint16_t port = 0;

private:
  void send(std::string_view text) const {
    REQUIRE(::write(toServer_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  std::string readLine(ns timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      pollfd p{fromServer_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      char buf[512];
      const ssize_t n = ::read(fromServer_, buf, sizeof buf);
      if (n <= 0) break;
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
    FAIL("no line from the memory server within the time limit");
    return {};
  }

  pid_t pid_ = -1;
  int toServer_ = -1;
  int fromServer_ = -1;
  std::string buffer_;
};

// A peer that announces kAnnounced bytes and sends kSent of them, then stalls. The server may
// close it while it sends: the rest is simply not sent.
std::unique_ptr<RawSocket> hostilePeer(std::uint16_t port, const std::string& body) {
  auto peer = std::make_unique<RawSocket>();
  REQUIRE(peer->connect(port));
  const timeval sendTimeout{5, 0};
  ::setsockopt(peer->fd(), SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, sizeof sendTimeout);
  std::string header = frame(0xC2, 0, 7, "");  // request | two-way | hessian2, no body yet
  header[12] = static_cast<char>(kAnnounced >> 24);
  header[13] = static_cast<char>((kAnnounced >> 16) & 0xff);
  header[14] = static_cast<char>((kAnnounced >> 8) & 0xff);
  header[15] = static_cast<char>(kAnnounced & 0xff);
  (void)peer->sendAll(header + body);
  return peer;
}

// Requests from a healthy client: how many of `n` were answered "pong".
int healthyCalls(Env& env, std::uint16_t port, int n) {
  Recorder rec;
  TcpClient client(env.loop, env.timer, clientOptions(port), rec.handler());
  client.start();
  REQUIRE(waitFor([&] { return client.state() == ClientState::Connected; }, 10s));
  std::atomic<int> ok{0};
  std::atomic<int> done{0};
  for (int i = 0; i < n; ++i) {
    const auto sent = client.channel().request("ping", 5s, [&](const CallResult& r) {
      if (r.status == CallStatus::Ok && r.body == "pong") ++ok;
      ++done;
    });
    if (sent.sent != SendResult::Queued) ++done;
  }
  REQUIRE(waitFor([&] { return done.load() == n; }, 10s));
  client.close();
  return ok.load();
}

void runFlood(std::size_t maxPartialBytes, const std::string& expectedText) {
  if (kSanitized) {
    MESSAGE("skipped: RLIMIT_AS is meaningless under a sanitizer's shadow memory");
    return;
  }
  MemoryServer server(maxPartialBytes);
  MESSAGE("server baseline " << server.ready["baseline_kib"] << " KiB, limit "
                             << server.ready["limit_kib"] << " KiB");
  Env env;
  CHECK(healthyCalls(env, server.port, 10) == 10);

  const std::string body(kSent, 'x');
  std::vector<std::unique_ptr<RawSocket>> peers;
  for (int i = 0; i < kHostilePeers; ++i) peers.push_back(hostilePeer(server.port, body));
  CHECK(server.alive());
  CHECK(healthyCalls(env, server.port, 50) == 50);  // served during the flood

  // Every hostile peer is closed: at once by the budget or memory, the rest by close-idle (3 s).
  int closed = 0;
  for (auto& peer : peers) closed += peer->waitPeerClosed(15s) ? 1 : 0;
  CHECK(closed == kHostilePeers);
  REQUIRE(server.alive());
  // A peer sees its socket closed a moment before the server's close callback has run.
  std::map<std::string, std::string> stats;
  CHECK(waitFor([&] { return (stats = server.stats())["open"] == "0"; }, 10s));
  MESSAGE("server: " << stats["resource"] << " resource closes, " << stats["idle"]
                     << " idle closes; " << stats["resource_text"]);
  const int resource = std::stoi(stats["resource"]);
  const int idle = std::stoi(stats["idle"]);
  // Every one with a reason: the budget or memory, or (those it could hold) the idle timeout.
  CHECK(resource + idle == kHostilePeers);
  CHECK(resource > 0);
  CHECK(stats["resource_text"].find(expectedText) != std::string::npos);
  CHECK(std::stoi(stats["protocol"]) == 0);
  CHECK(healthyCalls(env, server.port, 10) == 10);
  CHECK(server.quit() == 0);
}

}  // namespace

TEST_SUITE("fault") {

TEST_CASE(
    "200 peers announcing 8 MiB: the partial-frame budget closes them, the server serves on") {
  runFlood(LoopOptions{}.maxPartialBytes, "partial-frame budget: ");
}

TEST_CASE(
    "200 peers announcing 8 MiB with no budget: allocation failures close them, not the server") {
  runFlood(0, "out of memory growing the buffer of a 8388624-byte frame");
}

}  // TEST_SUITE("fault")
