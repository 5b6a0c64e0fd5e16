// Defaults: a missing key takes the struct's default; the heartbeat section is shared.
#include "helpers.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using wheelbeat::config::Config;
using wheelbeat::config::loadString;

TEST_SUITE("config") {

TEST_CASE("defaults: the empty document equals a default Config") {
  CHECK(loadString("{}") == Config{});
  CHECK(loadString(R"({"wheel":{},"heartbeat":{},"retry":{},"retry_budget":{},"failback":{},
                       "loop":{},"registry":{},"server":{},"client":{}})") == Config{});
}

TEST_CASE("defaults: the values are the structs' own (Dubbo's where Dubbo has one)") {
  const Config c = loadString("{}");
  CHECK(c.logLevel == wheelbeat::core::LogLevel::Info);
  CHECK(c.wheel.tickDuration == 100ms);
  CHECK(c.wheel.ticksPerWheel == 512);
  CHECK(c.heartbeat.interval == 60s);
  CHECK(c.heartbeat.idleTimeout == 0s);  // 0 = 3 × interval, resolved by the tasks
  CHECK(c.retry.empty());
  CHECK(c.failback.registryRetry.backoff == wheelbeat::tasks::Backoff::Fixed);
  CHECK(c.failback.invocationRetry.maxAttempts == 3);
  CHECK(c.loop.maxPartialBytes == 32u << 20);
  CHECK(c.registry.session == 60s);
  CHECK(c.server.listen == wheelbeat::net::Endpoint{"0.0.0.0", 20880});
  CHECK(c.server.maxConnections == 0);  // unlimited
  CHECK(c.client.connectTimeout == 3s);
  CHECK(c.client.codec.maxBody == 8u << 20);
}

TEST_CASE(
    "defaults: the failure detector is the fixed one with Akka's phi options and a 1 s pause") {
  const Config c = loadString("{}");
  CHECK(c.heartbeat.detector == wheelbeat::tasks::DetectorKind::Fixed);
  CHECK(c.heartbeat.phi.threshold == 8.0);
  CHECK(c.heartbeat.phi.minStdDeviation == 100ms);
  CHECK(c.heartbeat.phi.acceptablePause == 1s);
  CHECK(c.heartbeat.phi.window == 1000);
  CHECK(loadString(R"({"heartbeat":{"detector":"fixed","phi":{}}})") == Config{});
}

TEST_CASE("defaults: without a service section there is no service (ServiceOptions' defaults)") {
  const Config c = loadString("{}");
  CHECK(c.service == wheelbeat::registry::ServiceOptions{});
  CHECK(c.service.interface.empty());
  CHECK(c.service.application == "wheelbeat");
  CHECK(c.service.version.empty());
  CHECK(c.service.group.empty());
  CHECK(c.service.methods.empty());
  CHECK(c.service.timeout == 1000ms);
  CHECK(c.service.protocol == "dubbo");
}

TEST_CASE("defaults: a service section with only its interface keeps the other defaults") {
  const Config c = loadString(R"({"service":{"interface":"org.example.Greeter"}})");
  wheelbeat::registry::ServiceOptions want;
  want.interface = "org.example.Greeter";
  CHECK(c.service == want);
  Config expected;
  expected.service = want;
  CHECK(c == expected);
}

TEST_CASE("defaults: service values at the edges are accepted") {
  const Config c = loadString(R"({"service":{"interface":"*","application":"a","version":"*",
      "group":"a,b","methods":[],"timeout":"1ms","protocol":"tri"}})");
  CHECK(c.service.interface == "*");
  CHECK(c.service.version == "*");
  CHECK(c.service.group == "a,b");   // a consumer's list of groups
  CHECK(c.service.methods.empty());  // a consumer's: providerUrl() asks for one
  CHECK(c.service.timeout == 1ms);
  CHECK(c.service.protocol == "tri");
  for (const std::string timeout :
       {R"("1ms")", R"("1000us")", R"("1000000ns")", R"("1h")", R"("2147483647ms")"}) {
    CAPTURE(timeout);
    CHECK(wbtest::messagesOf(R"({"service":{"interface":"i","timeout":)" + timeout + "}}").empty());
  }
  const Config methods =
      loadString(R"({"service":{"interface":"a.B$C","methods":["sayHello","say_bye","$echo"]}})");
  CHECK(methods.service.methods == std::vector<std::string>{"sayHello", "say_bye", "$echo"});
  CHECK(loadString(R"({"service":{"interface":"i","timeout":"1500ms"}})").service.timeout ==
        1500ms);
}

TEST_CASE("defaults: phi keys left out keep their defaults and boundaries are accepted") {
  const Config c = loadString(R"({"heartbeat":{"detector":"phi","phi":{"threshold":0.5}}})");
  CHECK(c.heartbeat.detector == wheelbeat::tasks::DetectorKind::Phi);
  CHECK(c.heartbeat.phi.threshold == 0.5);
  CHECK(c.heartbeat.phi.minStdDeviation == 100ms);
  CHECK(c.heartbeat.phi.window == 1000);
  const Config edge = loadString(R"({"heartbeat":{"phi":{"threshold":1e-300,
      "min_std_deviation":"1ns","acceptable_pause":"0s","window":1}}})");
  CHECK(edge.heartbeat.phi.threshold == 1e-300);
  CHECK(edge.heartbeat.phi.minStdDeviation == 1ns);
  CHECK(edge.heartbeat.phi.window == 1);
  CHECK(loadString(R"({"heartbeat":{"phi":{"window":100000,"acceptable_pause":"1.5s"}}})")
            .heartbeat.phi.acceptablePause == 1500ms);
}

TEST_CASE("defaults: heartbeat is copied into server and client") {
  const Config c = loadString(R"({"heartbeat":{"interval":"20s","close_timeout":"1m"}})");
  CHECK(c.heartbeat.interval == 20s);
  CHECK(c.server.heartbeat.interval == 20s);
  CHECK(c.server.heartbeat.closeTimeout == 1min);
  CHECK(c.client.heartbeat.interval == 20s);
  const Config phi = loadString(R"({"heartbeat":{"detector":"phi","phi":{"threshold":12,
                                    "acceptable_pause":"2s","window":50}}})");
  for (const auto* h : {&phi.server.heartbeat, &phi.client.heartbeat}) {
    CHECK(h->detector == wheelbeat::tasks::DetectorKind::Phi);
    CHECK(h->phi.threshold == 12.0);
    CHECK(h->phi.acceptablePause == 2s);
    CHECK(h->phi.window == 50);
  }
}

TEST_CASE("defaults: an inline failback policy starts from that field's default policy") {
  const Config c = loadString(R"({"failback":{"registry_retry":{"max_attempts":7},
                                              "invocation_retry":{"initial_delay":"1s"}}})");
  auto expected = wheelbeat::tasks::FailbackOptions::defaultRegistryRetry();
  expected.maxAttempts = 7;
  Config want;
  want.failback.registryRetry = expected;
  want.failback.invocationRetry.initialDelay = 1s;
  want.cluster.failback = want.failback;  // the cluster's failback mode retries the same way
  CHECK(c == want);
}

TEST_CASE("defaults: boundary values are accepted") {
  const Config c = loadString(R"({
    "wheel":{"tick":"1ms","ticks_per_wheel":1073741824},
    "heartbeat":{"interval":"1m","idle_timeout":"2m"},
    "retry":{"p":{"initial_delay":"3s","max_delay":"3s","multiplier":1,"jitter_ratio":1,
                  "max_attempts":0}},
    "retry_budget":{"ratio":1000,"min_retries_per_second":0,"window":"1ms"},
    "loop":{"max_partial_bytes":18446744073709551615,"io_threads":1024},
    "registry":{"session":"1s","address":"h:65535"},
    "server":{"listen":"[::]:0","backlog":65535,"max_connections":18446744073709551615,
              "max_body":2147483647,"max_send_queue":2147483663},
    "client":{"server":"a:1","max_body":1,"max_send_queue":17}})");
  CHECK(c.wheel.ticksPerWheel == 1073741824);
  CHECK(c.heartbeat.idleTimeout == 2min);
  CHECK(c.loop.maxPartialBytes == 18446744073709551615u);
  CHECK(c.loop.ioThreads == 1024);
  CHECK(c.server.listen == wheelbeat::net::Endpoint{"::", 0});
  CHECK(c.server.maxConnections == 18446744073709551615u);
  CHECK(c.client.maxSendQueue == 17);
}

TEST_CASE("defaults: loop.io_threads is 0 (one per core) when absent and read when given") {
  CHECK(Config{}.loop.ioThreads == 0);
  CHECK(loadString("{}").loop.ioThreads == 0);
  CHECK(loadString(R"({"loop":{"io_threads":3}})").loop.ioThreads == 3);
  CHECK(loadString(R"({"loop":{"io_threads":3}})").loop.maxPartialBytes == 33554432);
}

TEST_CASE("defaults: 0 is accepted where it means unlimited") {
  const Config c = loadString(R"({"loop":{"max_partial_bytes":0,"io_threads":0},
                                  "server":{"max_connections":0},"wheel":{"max_pending":0}})");
  CHECK(c.loop.maxPartialBytes == 0);
  CHECK(c.loop.ioThreads == 0);  // one loop per core
  CHECK(c.server.maxConnections == 0);
  CHECK(c.wheel.maxPendingTimeouts == 0);
}

}  // TEST_SUITE("config")
