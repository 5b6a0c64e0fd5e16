// Named retry policies: definition in "retry", references by name from policy fields.
#include "helpers.h"

#include <wheelbeat/tasks/error_names.h>

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>

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
  want.heartbeat.reconnect = slow;
  want.server.heartbeat = want.heartbeat;
  want.client.heartbeat = want.heartbeat;
  want.cluster.directory.client = want.client;
  want.failback.registryRetry = slow;
  want.failback.invocationRetry = slow;
  want.cluster.failback = want.failback;
  CHECK(c == want);
}

TEST_CASE("named policies: references may come before the definition") {
  const auto c = loadString(R"({"heartbeat":{"reconnect":"r"},"retry":{"r":{"max_attempts":9}}})");
  CHECK(c.heartbeat.reconnect.maxAttempts == 9);
}

TEST_CASE("named policies: an unknown name lists the known ones") {
  CHECK(
      wbtest::messagesOf(R"({"retry":{"b":{},"a":{}},"failback":{"registry_retry":"c"}})") ==
      std::vector<std::string>{
          R"(/failback/registry_retry: "c" (expected: the name of an entry of /retry: "a", "b"))"});
}

TEST_CASE("named policies: a reference to a bad entry reports the entry only") {
  CHECK(wbtest::messagesOf(R"({"heartbeat":{"reconnect":"p"},"retry":{"p":{"multiplier":"2"}}})") ==
        std::vector<std::string>{R"(/retry/p/multiplier: "2" (expected: a number))"});
}

TEST_CASE("named policies: names are not resolved inside retry entries") {
  CHECK(wbtest::messagesOf(R"({"retry":{"a":{},"b":"a"}})") ==
        std::vector<std::string>{R"(/retry/b: "a" (expected: an object))"});
}

TEST_CASE("named policies: cfg.retry(name) hands out the named policy") {
  const auto c = loadString(R"({"retry":{"payments":{"max_attempts":5,"deadline":"1m30s"},
                                          "registry":{"backoff":"fixed","max_delay":"1s"}}})");
  const wheelbeat::tasks::RetryOptions& payments = c.retry("payments");
  CHECK(payments.maxAttempts == 5);
  CHECK(payments.deadline == 90s);
  CHECK(&payments == &c.retry.at("payments"));
  CHECK(c.retry("registry").backoff == wheelbeat::tasks::Backoff::Fixed);
}

TEST_CASE("named policies: cfg.retry(name) of a missing name names it and the names that exist") {
  const auto c = loadString(R"({"retry":{"payments":{},"registry":{}}})");
  CHECK_THROWS_WITH_AS((void)c.retry("paymnts"),
                       R"(retry policy "paymnts" not found (expected: the name of an entry of )"
                       R"(/retry: "payments", "registry"))",
                       std::out_of_range);
  const wheelbeat::config::Config none;
  CHECK_THROWS_WITH_AS((void)none.retry("payments"),
                       R"(retry policy "payments" not found (expected: the name of an entry of )"
                       R"(/retry (there is none)))",
                       std::out_of_range);
}

TEST_CASE("named policies: retry_on and ignore take every shared error name and nothing else") {
  std::string names;
  for (std::string_view n : wheelbeat::tasks::errors::kAll) {
    names += (names.empty() ? "\"" : ",\"") + std::string(n) + "\"";
  }
  const auto c =
      loadString(R"({"retry":{"p":{"retry_on":[)" + names + R"(],"ignore":[)" + names + "]}}}");
  CHECK(c.retry("p").retryOn.size() == 9);
  CHECK(c.retry("p").ignore.size() == 9);
  // What CallStatus::Closed was once called, and a case variant: neither is a shared name.
  CHECK(wbtest::messagesOf(R"({"heartbeat":{"reconnect":{"ignore":["closed"]}}})") ==
        std::vector<std::string>{
            R"(/heartbeat/reconnect/ignore/0: "closed" (expected: an error name: one of )"
            R"("timeout", "disconnected", "read-idle", "overloaded", "rejected", "bad-request", )"
            R"("no-endpoint", "exception", "failback-rejected"))"});
}

}  // TEST_SUITE("config")
