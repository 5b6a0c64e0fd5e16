// Objects made by a runtime and still held when it is destroyed: closed but valid (their loops
// and wheel stay allocated, stopped), never a crash, never an abort; released in any order.
#include "support.h"

#include <wheelbeat/runtime/runtime.h>

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using runtime_test::waitUntil;
using wheelbeat::Runtime;
namespace net = wheelbeat::net;

TEST_SUITE("runtime") {
TEST_CASE("objects outliving their runtime: closed - still answering - released without abort") {
  auto rt = std::make_unique<Runtime>(wheelbeat::config::loadString(R"({
      "loop": { "io_threads": 2 }, "wheel": { "tick": "5ms" },
      "server": { "listen": "127.0.0.1:0" }, "retry": { "p": {} },
      "metrics": { "listen": "127.0.0.1:0" } })"));
  auto server = rt->server({});
  auto client = rt->client("127.0.0.1", server->listen());
  client->start();
  REQUIRE(waitUntil([&] { return client->state() == net::ClientState::Connected; }));
  auto idle = rt->client();  // never started
  auto runner = rt->retry("p");
  auto registry = rt->registry();
  auto consumer = rt->serviceClient("org.example.Echo");
  wheelbeat::core::HashedWheelTimer& timer = rt->timer();
  rt.reset();

  CHECK(client->state() == net::ClientState::Closed);
  CHECK(idle->state() == net::ClientState::Closed);
  CHECK(server->connections() == 0);
  CHECK(timer.isStopped());
  CHECK_THROWS_AS(client->start(), std::logic_error);
  CHECK_THROWS_WITH_AS((void)server->listen(), doctest::Contains("stopped"), std::exception);
  CHECK_THROWS_AS(
      (void)runner->run([](std::int64_t, wheelbeat::tasks::AttemptDone d) { d.succeed(); },
                        [](const wheelbeat::tasks::RetryResult&) {}),
      wheelbeat::core::TimerStoppedError);
  CHECK_THROWS_AS(consumer->call("x", {}, [](const wheelbeat::cluster::CallOutcome&) {}),
                  std::logic_error);
  // Released in an order that would be wrong for the bare objects: the wheel and the loops go
  // with the last of them.
  registry.reset();
  idle.reset();
  consumer.reset();
  server.reset();
  runner.reset();
  CHECK(client->connectAttempts() == 1);
  client.reset();
}

TEST_CASE("a runtime destroyed with nothing made - and one never run") {
  const auto timers = wheelbeat::core::HashedWheelTimer::instanceCount();
  { Runtime rt; }
  { Runtime rt = Runtime::fromJson(R"({ "metrics": { "listen": "127.0.0.1:0" } })"); }
  CHECK(wheelbeat::core::HashedWheelTimer::instanceCount() == timers);
}
}  // TEST_SUITE("runtime")
