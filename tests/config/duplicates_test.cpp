// Duplicate keys: each key written twice in one object is an error at its pointer (nlohmann alone
// keeps the last silently), in objects at any depth and inside arrays, once per key.
#include "helpers.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

std::string dup(const std::string& pointerAndValue) {
  return pointerAndValue + " (expected: a key written once in its object)";
}

}  // namespace

TEST_SUITE("config") {

TEST_CASE("duplicate keys: a top-level key written twice") {
  CHECK(wbtest::messagesOf(R"({"log_level":"info","log_level":"warn"})") ==
        std::vector<std::string>{dup(R"(/log_level: "warn")")});
}

TEST_CASE("duplicate keys: a nested key is named by its pointer with the value kept") {
  CHECK(wbtest::messagesOf(R"({"heartbeat":{"interval":"1s","phi":{"window":5,"window":6}}})") ==
        std::vector<std::string>{dup("/heartbeat/phi/window: 6")});
}

TEST_CASE("duplicate keys: a key written three times is reported once") {
  CHECK(wbtest::messagesOf(R"({"wheel":{"tick":"1ms","tick":"2ms","tick":"3ms"}})") ==
        std::vector<std::string>{dup(R"(/wheel/tick: "3ms")")});
}

TEST_CASE("duplicate keys: the same key in two different objects is no duplicate") {
  CHECK(wbtest::messagesOf(R"({"retry":{"a":{"deadline":"1s"},"b":{"deadline":"1s"}},
                              "server":{"max_body":100},"client":{"max_body":100}})")
            .empty());
}

TEST_CASE("duplicate keys: inside an array the pointer carries the index") {
  // Unknown keys inside an array element are not the loader's business here: methods must be
  // strings, so the objects are also errors of their own, after the duplicate.
  CHECK(
      wbtest::messagesOf(
          R"({"service":{"interface":"i","methods":["a",{"x":1},{"y":1,"y":2}]}})") ==
      std::vector<std::string>{
          dup("/service/methods/2/y: 2"),
          R"(/service/methods/1: {"x":1} (expected: a non-empty method name without whitespace or ','))",
          R"(/service/methods/2: {"y":2} (expected: a non-empty method name without whitespace or ','))"});
}

TEST_CASE("duplicate keys: escaped in the pointer and reported before the other errors") {
  CHECK(wbtest::messagesOf(R"({"retry":{"a/b~c":{},"a/b~c":{"max_attempts":-2}}})") ==
        std::vector<std::string>{
            dup(R"(/retry/a~1b~0c: {"max_attempts":-2})"),
            "/retry/a~1b~0c/max_attempts: -2 (expected: -1 (forever), 0 (none) or > 0)"});
}

TEST_CASE("duplicate keys: a document with one never yields a Config") {
  const auto result = wheelbeat::config::tryLoadString(R"({"wheel":{"tick":"1s","tick":"1s"}})");
  CHECK_FALSE(result.ok());
  CHECK(result.errors().size() == 1);
  CHECK_THROWS_WITH_AS(
      (void)wheelbeat::config::loadString(R"({"wheel":{"tick":"1s","tick":"1s"}})"),
      R"(/wheel/tick: "1s" (expected: a key written once in its object))",
      wheelbeat::config::ConfigErrors);
}

}  // TEST_SUITE("config")
