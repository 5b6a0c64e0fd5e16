// The transport's decision lines at Debug, over loopback: connect attempt / connected / closed
// with its reason on both ends, a refused attempt named by its number followed by the
// reconnect task's schedule, and heartbeats sent and answered with their RTT; at Info none.
#include "../log_capture.h"
#include "support.h"

#include <doctest/doctest.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

using namespace wbnet;
using wbtest::LevelLogCapture;
using wheelbeat::core::LogLevel;
using Lines = std::vector<std::string>;

namespace {

struct Accepted {
  std::atomic<std::uint64_t> id{0};
  std::atomic<std::uint16_t> port{0};
  ChannelHandler handler() {
    return ChannelHandler{.onConnected = [this](Channel& ch) {
      port = ch.remote().port;
      id = ch.id();
    }};
  }
};

// One client connects to a server and closes; no heartbeat is due within the test (60 s).
struct ConnectClose {
  std::uint16_t serverPort = 0;
  std::uint64_t channelId = 0;
  std::uint16_t clientPort = 0;
};

// For failure messages: doctest cannot print a vector.
std::string joined(const Lines& lines) { return fmt::format("{}", fmt::join(lines, "\n")); }

ConnectClose connectAndClose() {
  Env env;
  Accepted accepted;
  TcpServer srv(env.loop, env.timer, serverOptions(), accepted.handler());
  ConnectClose out;
  out.serverPort = srv.listen();
  ClientOptions options = clientOptions(out.serverPort);
  options.heartbeat.interval = 60s;
  TcpClient cli(env.loop, env.timer, options);
  cli.start();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected && accepted.id != 0; }));
  cli.close("done");
  REQUIRE(waitFor([&] { return srv.connections() == 0; }));
  srv.stop();
  out.channelId = accepted.id;
  out.clientPort = accepted.port;
  return out;
}

}  // namespace

TEST_SUITE("net") {

TEST_CASE("decision log: a loopback connect and close on both ends") {
  ConnectClose c;
  Lines client;
  Lines server;
  {
    LevelLogCapture log(LogLevel::Debug);
    c = connectAndClose();
    client = log.matching(fmt::format("client 127.0.0.1:{}:", c.serverPort));
    server = log.matching(fmt::format("channel {} from", c.channelId));
    CHECK(log.lines().size() == client.size() + server.size());  // nothing else was logged
  }
  const std::string me = fmt::format("DEBUG client 127.0.0.1:{}: ", c.serverPort);
  CHECK(
      client ==
      Lines{me + fmt::format("idle -> connecting: connect attempt 1 to 127.0.0.1:{}", c.serverPort),
            me + fmt::format("connecting -> connected: connected to 127.0.0.1:{}", c.serverPort),
            me + "connected -> closed: closed-by-owner: done"});
  const std::string it =
      fmt::format("DEBUG channel {} from 127.0.0.1:{}: ", c.channelId, c.clientPort);
  const Lines expected{it + "accepted", it + "closed: eof: the peer closed the connection"};
  CHECK_MESSAGE(server == expected, joined(server));

  LevelLogCapture quiet(LogLevel::Info);
  (void)connectAndClose();
  CHECK(quiet.lines().empty());
}

TEST_CASE("decision log: a refused attempt names its number then the reconnect is scheduled") {
  LevelLogCapture log(LogLevel::Debug);
  Env env;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);  // bound, not listening: connects refused
  sockaddr_in a = RawSocket::loopback(0);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::uint16_t port = ntohs(a.sin_port);
  ClientOptions options = clientOptions(port);
  options.heartbeat.reconnect.jitter = wheelbeat::tasks::Jitter::None;
  TcpClient cli(env.loop, env.timer, options);
  const std::string me = fmt::format("DEBUG client 127.0.0.1:{}: ", port);
  cli.start();
  REQUIRE(waitFor([&] { return log.lines().size() >= 5; }));
  cli.close();
  ::close(fd);
  const Lines lines = log.lines();
  CHECK(lines.at(0) ==
        me + fmt::format("idle -> connecting: connect attempt 1 to 127.0.0.1:{}", port));
  CHECK(lines.at(1) == me + fmt::format("connecting -> disconnected: connect attempt 1 "
                                        "failed: refused: connect to 127.0.0.1:{}",
                                        port));
  CHECK(lines.at(2) == me + "reconnect #1 in 50ms: disconnected");
  CHECK(lines.at(3) == me + fmt::format("disconnected -> connecting: connect attempt 2 to "
                                        "127.0.0.1:{}",
                                        port));
  CHECK(lines.at(4).starts_with(me + "connecting -> disconnected: connect attempt 2 failed: "));
}

TEST_CASE("decision log: heartbeats sent and answered with their RTT") {
  LevelLogCapture log(LogLevel::Debug);
  auto metrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  std::uint16_t port = 0;
  {
    Env env;
    TcpServer srv(env.loop, env.timer, serverOptions(), ChannelHandler{});
    port = srv.listen();
    ClientOptions options = clientOptions(port);
    options.taskMetrics = metrics;
    TcpClient cli(env.loop, env.timer, options);
    cli.start();
    REQUIRE(waitFor([&] { return cli.channel().lastHeartbeatRtt() > 0ns; }));
    cli.close();
    srv.stop();
  }
  const std::string me = fmt::format("client 127.0.0.1:{}: ", port);
  const Lines sent = log.matching(me + "heartbeat sent (read idle ");
  const Lines all = log.matching(me + "heartbeat ");
  CHECK(sent.size() == metrics->snapshot().heartbeatsSent);
  std::size_t answered = 0;
  for (const auto& line : all) {
    std::string_view rest(line);
    REQUIRE(rest.starts_with("DEBUG " + me + "heartbeat "));
    rest.remove_prefix(("DEBUG " + me + "heartbeat ").size());
    if (rest.starts_with("sent (read idle ")) {  // "sent (read idle 100ms, write idle 100ms)"
      rest.remove_prefix(std::string_view("sent (read idle ").size());
      const auto comma = rest.find(", write idle ");
      REQUIRE_MESSAGE(comma != std::string_view::npos, line);
      CHECK_MESSAGE(wbtest::isHumanDuration(rest.substr(0, comma)), line);
      rest.remove_prefix(comma + std::string_view(", write idle ").size());
      REQUIRE_MESSAGE(rest.ends_with(")"), line);
      CHECK_MESSAGE(wbtest::isHumanDuration(rest.substr(0, rest.size() - 1)), line);
    } else {  // "3 answered in 187us"
      const auto at = rest.find(" answered in ");
      REQUIRE_MESSAGE(at != std::string_view::npos, line);
      CHECK_MESSAGE(rest.substr(0, at).find_first_not_of("0123456789") == std::string_view::npos,
                    line);
      CHECK_MESSAGE(wbtest::isHumanDuration(rest.substr(at + 13)), line);
      ++answered;
    }
  }
  CHECK(answered >= 1);            // the RTT we waited for was logged
  CHECK(answered <= sent.size());  // never more answers than pings
}

}  // TEST_SUITE("net")
