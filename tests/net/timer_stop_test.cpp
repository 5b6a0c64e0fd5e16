// A wheel stopped under the objects that use it (core/users.h): nothing is left serving or
// "connected" with its tasks silently off. (The client's case is in lifecycle_test.cpp.)
#include "support.h"

#include <doctest/doctest.h>

using namespace wbnet;

TEST_SUITE("net") {
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
