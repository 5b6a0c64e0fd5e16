// A wheel stopped under the objects that use it (core/users.h): nothing is left serving or
// "connected" with its tasks silently off.
#include "support.h"

#include <doctest/doctest.h>

using namespace wbnet;

TEST_SUITE("net") {
TEST_CASE("a timer stopped under a connected client closes it, with the reason") {
  Env env;
  HashedWheelTimer clientTimer{WheelOptions{.tickDuration = 10ms}};  // only this client's tasks
  Recorder server;
  TcpServer srv(env.loop, env.timer, serverOptions(), server.handler());
  Recorder client;
  TcpClient cli(env.loop, clientTimer, clientOptions(srv.listen()), client.handler(),
                client.stateCallback());
  cli.start();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  CHECK(clientTimer.users() ==
        std::vector<std::string>{fmt::format("TcpClient 127.0.0.1:{}", srv.port())});
  // Not left "connected" with its heartbeats off: closed, its tasks cancelled, nothing handed
  // back by stop().
  CHECK(clientTimer.stop().empty());
  CHECK(cli.state() == ClientState::Closed);
  REQUIRE(waitFor([&] { return client.closed.load() == 1; }));
  const auto reasons = client.closeReasons();
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0].kind == CloseKind::ClosedByOwner);
  CHECK(reasons[0].text == "the timer stopped");
  CHECK(client.stateList().back() == ClientState::Closed);
  REQUIRE(waitFor([&] { return server.closed.load() == 1; }));  // the server saw it go
}

TEST_CASE("a timer stopped under a serving server stops it: its channels close and nothing more") {
  Env env;
  HashedWheelTimer serverTimer{WheelOptions{.tickDuration = 10ms}};  // only this server's tasks
  Recorder server;
  TcpServer srv(env.loop, serverTimer, serverOptions(), server.handler());
  const std::uint16_t port = srv.listen();
  Recorder client;
  TcpClient cli(env.loop, env.timer, clientOptions(port), client.handler(), client.stateCallback());
  cli.start();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  REQUIRE(waitFor([&] { return srv.connections() == 1; }));
  CHECK(serverTimer.users() == std::vector<std::string>{fmt::format("TcpServer 127.0.0.1:0")});
  CHECK(serverTimer.stop().empty());  // the server stopped with it: its idle checks cancelled
  CHECK(srv.connections() == 0);
  REQUIRE(waitFor([&] { return server.closed.load() == 1; }));
  REQUIRE(waitFor([&] { return client.closed.load() >= 1; }));  // the client saw it go
  srv.stop();                                                   // idempotent after the timer's
  CHECK(srv.connections() == 0);
  cli.close();
}
}  // TEST_SUITE("net")
