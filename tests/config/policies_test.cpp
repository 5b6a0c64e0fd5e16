// Named retry policies: definition in "retry", references by name from policy fields.
#include "helpers.h"

#include <doctest/doctest.h>

#include <chrono>

using namespace std::chrono_literals;
using wheelbeat::config::loadString;

TEST_SUITE("config") {

TEST_CASE("named policies: a reference copies the entry whole") {
  const auto c = loadString(R"({
    "heartbeat":{"reconnect":"slow"},
    "failback":{"registry_retry":"slow","invocation_retry":"slow"},
    "retry":{"slow":{"backoff":"fixed","initial_delay":"10s","max_delay":"10s","jitter":"none",
                     "max_attempts":2,"retry_on":["timeout"]}}})");
  const auto& slow = c.retry.at("slow");
  CHECK(slow.backoff == wheelbeat::tasks::Backoff::Fixed);
  CHECK(slow.initialDelay == 10s);
  CHECK(slow.multiplier == 1.6);  // a named entry starts from RetryOptions{}
  CHECK(slow.retryOn == std::vector<std::string>{"timeout"});
  wheelbeat::config::Config want;
  want.retry["slow"] = slow;
  want.heartbeat.reconnectBackoff = slow;
  want.server.heartbeat = want.heartbeat;
  want.client.heartbeat = want.heartbeat;
  want.failback.registryRetry = slow;
  want.failback.invocationRetry = slow;
  CHECK(c == want);
}

TEST_CASE("named policies: references may come before the definition") {
  const auto c = loadString(R"({"heartbeat":{"reconnect":"r"},"retry":{"r":{"max_attempts":9}}})");
  CHECK(c.heartbeat.reconnectBackoff.maxAttempts == 9);
}

TEST_CASE("named policies: an unknown name lists the known ones") {
  CHECK(
      wbtest::messagesOf(R"({"retry":{"b":{},"a":{}},"failback":{"registry_retry":"c"}})") ==
      std::vector<std::string>{
          R"(/failback/registry_retry: "c" (expected: the name of an entry of /retry: "a", "b"))"});
}

TEST_CASE("named policies: a reference to a bad entry reports the entry only") {
  CHECK(wbtest::messagesOf(R"({"heartbeat":{"reconnect":"p"},"retry":{"p":{"multiplier":"2"}}})") ==
        std::vector<std::string>{R"(/retry/p/multiplier: "2" (expected: a number >= 1))"});
}

TEST_CASE("named policies: names are not resolved inside retry entries") {
  CHECK(wbtest::messagesOf(R"({"retry":{"a":{},"b":"a"}})") ==
        std::vector<std::string>{R"(/retry/b: "a" (expected: an object))"});
}

}  // TEST_SUITE("config")
