// Host names: a client resolves its server's name for every attempt (off the loop) and rotates
// through the answer; an unknown name fails the attempt as Resolve with the resolver's error and
// the client keeps retrying; a server resolves its listen name on the caller's thread.
// "localhost" comes from /etc/hosts, a malformed name ("a..b") is refused by the resolver itself,
// and ".invalid" never resolves (RFC 2606), so no test needs a DNS server to answer.
#include "support.h"

namespace wbnet {

TEST_SUITE("net") {

TEST_CASE("a client connects to a host name and heartbeats over it") {
  Env env;
  Recorder server;
  TcpServer srv(env.loop, env.timer, serverOptions(), server.handler());
  const std::uint16_t port = srv.listen();
  ClientOptions options = clientOptions(port);
  options.server.host = "localhost";
  Recorder client;
  auto metrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  options.taskMetrics = metrics;
  TcpClient cli(env.loop, env.timer, options, client.handler(), client.stateCallback());
  cli.start();
  // localhost may also resolve to ::1, where nothing listens: that attempt is refused and the
  // next one takes the next address.
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }, 10s));
  REQUIRE(waitFor([&] { return metrics->snapshot().heartbeatsSent >= 2; }, 5s));
  CHECK(cli.channel().lastHeartbeatRtt() > ns(0));
  CHECK(cli.channel().remote().host == "localhost");
  CHECK(srv.connections() == 1);
  for (const CloseReason& why : client.closeReasons()) {
    CHECK(why.kind == CloseKind::Refused);  // only an address that was not listening
  }
  cli.close();
  CHECK(cli.state() == ClientState::Closed);
}

// Each attempt's reasons: kind Resolve, the target as its text, the resolver's EAI_* code; the
// reconnect task retries (the error name is "disconnected", as for a refused connect).
void checkUnresolvable(const std::string& host) {
  Env env;
  ClientOptions options = clientOptions(9);
  options.server.host = host;
  // Generous: the attempt must end in the resolver, not in the connect timeout.
  options.connectTimeout = 10s;
  Recorder client;
  TcpClient cli(env.loop, env.timer, options, client.handler(), client.stateCallback());
  cli.start();
  REQUIRE(waitFor([&] { return client.closed.load() >= 2; }, 20s));
  const auto reasons = client.closeReasons();
  for (const CloseReason& why : reasons) {
    CHECK(why.kind == CloseKind::Resolve);
    CHECK(why.text == host + ":9");
    CHECK(std::string(why.error.name()).starts_with("EAI_"));
    CHECK(errorName(why.error) == "disconnected");
    CHECK(fmt::format("{}", why) ==
          fmt::format("resolve: {}:9: {} ({})", host, why.error.name(), why.error.message()));
  }
  CHECK(cli.connectAttempts() >= 2);
  CHECK(client.connected.load() == 0);
  cli.close();
  CHECK(cli.state() == ClientState::Closed);
}

TEST_CASE("a malformed host name fails each attempt as resolve and the client retries") {
  checkUnresolvable("wheelbeat..invalid");
}

TEST_CASE("an unknown host name fails each attempt as resolve and the client retries") {
  checkUnresolvable("no-such-host.invalid");
}

TEST_CASE("a server listens on a host name and an unknown one throws naming it") {
  Env env;
  Recorder server;
  ServerOptions options = serverOptions();
  options.listen.host = "localhost";
  TcpServer srv(env.loop, env.timer, options, server.handler());
  RawSocket raw;
  REQUIRE(raw.connect(srv.listen()));  // /etc/hosts: localhost is 127.0.0.1 first
  REQUIRE(raw.sendAll(heartbeatRequest(3)));
  CHECK(raw.recvExactly(17) == heartbeatResponse(3));

  ServerOptions bad = serverOptions();
  bad.listen.host = "wheelbeat..invalid";
  TcpServer nowhere(env.loop, env.timer, bad, server.handler());
  try {
    (void)nowhere.listen();
    FAIL("listen on an unknown host did not throw");
  } catch (const NetException& e) {
    CHECK(std::string(e.error().name()).starts_with("EAI_"));
    CHECK(std::string(e.what()).starts_with("listen on wheelbeat..invalid:0: EAI_"));
  }
  CHECK(nowhere.port() == 0);
  CHECK_THROWS_AS((void)nowhere.listen(), NetException);  // the failed call left no state behind
}

}  // TEST_SUITE("net")

}  // namespace wbnet
