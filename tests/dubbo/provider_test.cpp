// Provider and consumer end to end on loopback: a TcpServer serving a Provider, a TcpClient's
// channel calling it with dubbo::invoke(): values, application exceptions, $echo, generic
// calls, Dubbo's answers to unknown services and methods, version and group, a late answer.
#include "../net/support.h"
#include "support.h"

#include <wheelbeat/dubbo/consumer.h>
#include <wheelbeat/dubbo/provider.h>

#include <doctest/doctest.h>

#include <future>

using namespace wbdubbo;
using namespace wbnet;

namespace {

const ServiceId kGreeter{.interface = "org.example.Greeter", .version = "", .group = ""};
constexpr const char* kString = "Ljava/lang/String;";

// A provider with sayHello(String), fail(String) and a late answer after (int ms), a server and
// a connected client.
struct Rig {
  Env env;
  Provider provider;
  std::unique_ptr<TcpServer> server;
  std::unique_ptr<TcpClient> client;

  Rig() {
    provider.add(kGreeter, "sayHello", kString, [](const Request& r) {
      return h::Value::string("hello " + r.args.at(0).asString());
    });
    provider.add(kGreeter, "fail", kString, [](const Request& r) -> h::Value {
      throw ApplicationException("org.example.GreeterException", r.args.at(0).asString());
    });
    provider.add(kGreeter, "nothing", "", [](const Request&) { return h::Value(); });
    provider.addAsync(kGreeter, "later", "I", [this](const Request& r, Reply reply) {
      auto shared = std::make_shared<Reply>(std::move(reply));
      (void)env.timer.newTimeout([shared] { shared->value(h::Value::string("late")); },
                                 std::chrono::milliseconds(r.args.at(0).asInt()));
    });
    provider.add({.interface = "org.example.Greeter", .version = "2.0.0", .group = "blue"},
                 "sayHello", kString, [](const Request&) { return h::Value::string("blue"); });
    server = std::make_unique<TcpServer>(env.loop, env.timer, serverOptions(),
                                         provider.channelHandler());
    const std::uint16_t port = server->listen();
    client = std::make_unique<TcpClient>(env.loop, env.timer, clientOptions(port));
    client->start();
    REQUIRE(waitFor([&] { return client->state() == ClientState::Connected; }));
  }
  ~Rig() {
    client->close();
    server->stop();
  }

  Outcome call(const Call& c) {
    auto promise = std::make_shared<std::promise<Outcome>>();
    auto future = promise->get_future();
    invoke(client->channel(), c, [promise](const Outcome& o) { promise->set_value(o); });
    REQUIRE(future.wait_for(10s) == std::future_status::ready);
    return future.get();
  }
};

Call greet(std::string method, std::vector<h::Value> args, std::string descriptor = kString) {
  return Call{.interface = "org.example.Greeter",
              .method = std::move(method),
              .descriptor = std::move(descriptor),
              .args = std::move(args)};
}

}  // namespace

TEST_SUITE("dubbo") {
TEST_CASE("dubbo provider: a value, a null, an application exception") {
  Rig rig;
  const Outcome hello = rig.call(greet("sayHello", {h::Value::string("world")}));
  CHECK(hello.kind == OutcomeKind::Value);
  CHECK(hello.status == status::kOk);
  CHECK(hello.value.asString() == "hello world");
  CHECK(hello.attachments.stringOr("dubbo", "") == "2.0.2");

  const Outcome none = rig.call(greet("nothing", {}, ""));
  CHECK(none.kind == OutcomeKind::Value);
  CHECK(none.value.isNull());

  const Outcome fail = rig.call(greet("fail", {h::Value::string("no luck")}));
  CHECK(fail.kind == OutcomeKind::Exception);
  CHECK(fail.exceptionClass == "org.example.GreeterException");
  CHECK(fail.message == "no luck");
  const auto stats = rig.provider.stats();
  CHECK(stats.requests == 3);
  CHECK(stats.values == 2);
  CHECK(stats.exceptions == 1);
  CHECK(stats.errors == 0);
}

TEST_CASE("dubbo provider: $echo for every service, generic $invoke") {
  Rig rig;
  const Outcome echo = rig.call(greet("$echo", {h::Value::int64(7)}, "Ljava/lang/Object;"));
  CHECK(echo.kind == OutcomeKind::Value);
  CHECK(echo.value.asLong() == 7);
  const Outcome generic = rig.call(
      genericCall(greet("", {}), "sayHello", {"java.lang.String"}, {h::Value::string("generic")}));
  CHECK(generic.kind == OutcomeKind::Value);
  CHECK(generic.value.asString() == "hello generic");
}

TEST_CASE("dubbo provider: unknown service, method, version and group get Dubbo's status") {
  Rig rig;
  Call unknownService = greet("sayHello", {h::Value::string("x")});
  unknownService.interface = "org.example.Nobody";
  const Outcome a = rig.call(unknownService);
  CHECK(a.kind == OutcomeKind::Error);
  CHECK(a.status == status::kBadRequest);
  CHECK(a.error == "bad-request");
  CHECK(a.message ==
        "status 40 (bad-request): Fail to decode request due to: "
        "java.lang.IllegalArgumentException: Service not found:org.example.Nobody, sayHello (no "
        "service org.example.Nobody here)");

  const Outcome b = rig.call(greet("sayGoodbye", {h::Value::string("x")}));
  CHECK(b.status == status::kBadRequest);
  CHECK(b.message ==
        "status 40 (bad-request): Fail to decode request due to: "
        "java.lang.IllegalArgumentException: Service not found:org.example.Greeter, sayGoodbye "
        "(no method sayGoodbye(Ljava/lang/String;) in org.example.Greeter)");

  // The same method with another descriptor is another method.
  const Outcome c = rig.call(greet("sayHello", {h::Value::int32(1)}, "I"));
  CHECK(c.status == status::kBadRequest);

  Call wrongVersion = greet("sayHello", {h::Value::string("x")});
  wrongVersion.version = "9.9.9";
  const Outcome d = rig.call(wrongVersion);
  CHECK(d.status == status::kServiceError);
  CHECK(d.error == "rejected");
  CHECK(d.message ==
        "status 70 (service-error): Not found exported service: org.example.Greeter:9.9.9 in "
        "[org.example.Greeter, blue/org.example.Greeter:2.0.0], may be version or group mismatch");

  Call blue = greet("sayHello", {h::Value::string("x")});
  blue.version = "2.0.0";
  blue.group = "blue";
  CHECK(rig.call(blue).value.asString() == "blue");
  // "0.0.0" is no version.
  Call zero = greet("sayHello", {h::Value::string("x")});
  zero.version = "0.0.0";
  CHECK(rig.call(zero).value.asString() == "hello x");
  CHECK(rig.provider.stats().errors == 4);
}

TEST_CASE("dubbo provider: a malformed body and another serialization get status 40") {
  Rig rig;
  auto promise = std::make_shared<std::promise<CallResult>>();
  auto future = promise->get_future();
  (void)rig.client->channel().request("\x91", 5s,
                                      [promise](const CallResult& r) { promise->set_value(r); });
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  const Outcome bad = interpret(future.get());
  CHECK(bad.status == status::kBadRequest);
  CHECK(bad.message ==
        "status 40 (bad-request): Fail to decode request due to: dubbo request body: at byte 0: "
        "dubbo version: expected a string, got int");

  auto promise2 = std::make_shared<std::promise<CallResult>>();
  auto future2 = promise2->get_future();
  (void)rig.client->channel().request(
      "x", 5s, [promise2](const CallResult& r) { promise2->set_value(r); }, 6);
  REQUIRE(future2.wait_for(10s) == std::future_status::ready);
  const CallResult raw = future2.get();
  CHECK(raw.frameStatus == status::kBadRequest);
  CHECK(decodeErrorMessage(raw.body) ==
        "Fail to decode request due to: serialization id 6 (expected 2, hessian2)");
}

TEST_CASE("dubbo provider: an async handler answers from the wheel - a timeout is 'timeout'") {
  Rig rig;
  const Outcome late = rig.call(greet("later", {h::Value::int32(30)}, "I"));
  CHECK(late.kind == OutcomeKind::Value);
  CHECK(late.value.asString() == "late");
  Call tooLate = greet("later", {h::Value::int32(2000)}, "I");
  tooLate.timeout = 100ms;
  const Outcome timeout = rig.call(tooLate);
  CHECK(timeout.kind == OutcomeKind::Error);
  CHECK(timeout.error == "timeout");
  CHECK(timeout.status == 0);
}

TEST_CASE("dubbo provider: bad registrations are refused, the provider url lists the methods") {
  Provider p;
  CHECK_THROWS_WITH_AS(p.add({}, "m", "", [](const Request&) { return h::Value(); }),
                       "dubbo: Provider::add: ServiceId.interface = \"\" (expected a name)",
                       std::invalid_argument);
  CHECK_THROWS_AS(p.add(kGreeter, "m", "Lx", [](const Request&) { return h::Value(); }),
                  std::invalid_argument);
  p.add(kGreeter, "b", "", [](const Request&) { return h::Value(); });
  p.add(kGreeter, "a", "I", [](const Request&) { return h::Value(); });
  p.add(kGreeter, "a", "J", [](const Request&) { return h::Value(); });
  CHECK_THROWS_WITH_AS(p.add(kGreeter, "a", "J", [](const Request&) { return h::Value(); }),
                       "dubbo: Provider::add: org.example.Greeter.a(J) is served already",
                       std::invalid_argument);
  CHECK(p.methods(kGreeter) == std::vector<std::string>{"a", "b"});
  wheelbeat::registry::ServiceOptions options;
  options.interface = "org.example.Greeter";
  const std::string url = p.providerUrl(options, {"127.0.0.1", 20880}, 1s);
  CHECK(url.find("methods=a,b&") != std::string::npos);
  options.interface = "org.example.Other";
  CHECK_THROWS_WITH_AS((void)p.providerUrl(options, {"127.0.0.1", 20880}, 1s),
                       "dubbo: Provider::providerUrl: no method served for org.example.Other "
                       "(expected add() first)",
                       std::invalid_argument);
}
}  // TEST_SUITE("dubbo")
