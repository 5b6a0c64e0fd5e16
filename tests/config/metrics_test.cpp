// The "metrics" section (net::MetricsEndpointOptions): absent = no endpoint, present = one to
// serve with listen required; round trip, duplicates, the sample. Bad values with their exact
// messages are in bad_documents_test.cpp.
#include "helpers.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using wheelbeat::config::Config;
using wheelbeat::config::loadString;
using wheelbeat::config::toJson;
using wheelbeat::net::MetricsEndpointOptions;

TEST_SUITE("config") {

TEST_CASE("metrics: without the section there is no endpoint and none is written") {
  const Config c = loadString("{}");
  CHECK_FALSE(c.metrics.has_value());
  CHECK_FALSE(nlohmann::json::parse(toJson(c)).contains("metrics"));
}

TEST_CASE("metrics: a section with only listen keeps MetricsEndpointOptions' defaults") {
  const Config c = loadString(R"({"metrics":{"listen":"127.0.0.1:9464"}})");
  REQUIRE(c.metrics.has_value());
  CHECK(c.metrics->listen == "127.0.0.1:9464");
  CHECK(c.metrics->maxHeaderBytes == 8192);
  CHECK(c.metrics->requestTimeout == 5000ms);
  CHECK(c.metrics->maxConnections == 64);
  Config expected;
  expected.metrics = MetricsEndpointOptions{.listen = "127.0.0.1:9464"};
  CHECK(c == expected);
}

TEST_CASE("metrics: every key is read at the edges of its range") {
  const Config c = loadString(R"({"metrics":{"listen":"[::1]:0","max_header_bytes":256,
      "request_timeout":"1ms","max_connections":1}})");
  REQUIRE(c.metrics.has_value());
  CHECK(c.metrics->listen == "[::1]:0");  // port 0 = any free port
  CHECK(c.metrics->maxHeaderBytes == 256);
  CHECK(c.metrics->requestTimeout == 1ms);
  CHECK(c.metrics->maxConnections == 1);
  CHECK(loadString(R"({"metrics":{"listen":"localhost:65535","request_timeout":"0.25s"}})")
            .metrics->requestTimeout == 250ms);  // any unit, whole milliseconds
}

TEST_CASE("metrics: round trip with every key changed and equality sees each one") {
  Config c;
  c.metrics = MetricsEndpointOptions{
      .listen = "[::1]:9464", .maxHeaderBytes = 300, .requestTimeout = 1500ms, .maxConnections = 3};
  const Config back = loadString(toJson(c));
  CHECK(back == c);
  const auto j = nlohmann::json::parse(toJson(c))["metrics"];
  CHECK(j == nlohmann::json{{"listen", "[::1]:9464"},
                            {"max_header_bytes", 300},
                            {"request_timeout", "1500ms"},
                            {"max_connections", 3}});
  Config d = c;
  d.metrics->listen = "[::1]:9465";
  CHECK_FALSE(d == c);
  d = c;
  d.metrics->maxHeaderBytes = 301;
  CHECK_FALSE(d == c);
  d = c;
  d.metrics->requestTimeout = 1501ms;
  CHECK_FALSE(d == c);
  d = c;
  d.metrics->maxConnections = 4;
  CHECK_FALSE(d == c);
  d = c;
  d.metrics.reset();
  CHECK_FALSE(d == c);
  CHECK(d == Config{});
}

TEST_CASE("metrics: a key written twice is rejected with its pointer") {
  CHECK(wbtest::messagesOf(R"({"metrics":{"listen":"127.0.0.1:1","listen":"127.0.0.1:2"}})") ==
        std::vector<std::string>{
            R"(/metrics/listen: "127.0.0.1:2" (expected: a key written once in its object))"});
  CHECK(wbtest::messagesOf(R"({"metrics":{"listen":"127.0.0.1:1"},"metrics":{"listen":":2"}})") ==
        std::vector<std::string>{
            R"(/metrics: {"listen":":2"} (expected: a key written once in its object))",
            R"(/metrics/listen: ":2" (expected: "host:port" (IPv6: "[::1]:20880") with a port )"
            R"(in 0..65535, 0 = any free port))"});
}

TEST_CASE("metrics: full.json serves the endpoint on 127.0.0.1:9464") {
  const Config c = wheelbeat::config::load(wbtest::samplesDir() / "full.json");
  REQUIRE(c.metrics.has_value());
  CHECK(c.metrics->listen == "127.0.0.1:9464");
  CHECK(c.metrics->maxHeaderBytes == 8192);
  CHECK(c.metrics->requestTimeout == 5s);
  CHECK(c.metrics->maxConnections == 64);
}

}  // TEST_SUITE("config")
