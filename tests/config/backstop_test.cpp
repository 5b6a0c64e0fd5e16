// The backstop: the layers' validate() after the loader's own checks. It must catch what the
// loader misses, and no document, good or bad, may ever need it.
#include "helpers.h"
#include "sections.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>

using namespace std::chrono_literals;
using wheelbeat::config::Config;
using wheelbeat::config::ConfigError;
using wheelbeat::config::detail::backstopErrors;
using wheelbeat::config::detail::backstopHits;

namespace {

constexpr const char* kExpected =
    "options the layers accept (the loader missed this rule: a wheelbeat bug)";

// Documents at the edges of every rule, valid or just past the edge.
const std::vector<std::string> kEdgeDocuments = {
    R"({"wheel":{"tick":"1ns","ticks_per_wheel":1}})",
    R"({"wheel":{"tick":"2562047h","ticks_per_wheel":1}})",  // no heartbeat spans 2 such ticks
    R"({"wheel":{"tick":"4611686018427387903ns","ticks_per_wheel":1},"heartbeat":{"interval":"9223372036854775806ns"}})",
    R"({"wheel":{"tick":"4503599627370495ns","ticks_per_wheel":1024},"heartbeat":{"interval":"9007199254740990ns"}})",
    R"({"wheel":{"tick":"4503599627370496ns","ticks_per_wheel":2048}})",
    R"({"wheel":{"tick":"8589934591ns","ticks_per_wheel":1073741824}})",
    R"({"wheel":{"tick":"1ms"},"heartbeat":{"interval":"2ms","idle_timeout":"4ms"}})",
    R"({"wheel":{"tick":"1ns"},"heartbeat":{"interval":"1999999ns"}})",  // the timer runs 1ms
    R"({"wheel":{"tick":"100ms"},"heartbeat":{"interval":"1s","close_timeout":"199ms"}})",
    R"({"heartbeat":{"interval":"9223372036854775807ns","idle_timeout":"9223372036854775807ns"}})",
    R"({"heartbeat":{"interval":"9223372036854775807ns","idle_timeout":"1ns"}})",
    R"({"heartbeat":{"reconnect":{"initial_delay":"1ns","max_delay":"1ns","jitter_ratio":0}}})",
    R"({"heartbeat":{"reconnect":{"multiplier":1.7976931348623157e308,"max_attempts":9223372036854775807}}})",
    R"({"heartbeat":{"seed":18446744073709551615}})",
    R"({"retry_budget":{"ratio":0,"min_retries_per_second":1000000000,"window":"1ms"}})",
    R"({"retry_budget":{"ratio":1000.0000001}})",
    R"({"failback":{"registry_retry":{"max_delay":"4s"},"max_pending_retries":1}})",
    R"({"loop":{"max_partial_bytes":0}})",
    R"({"loop":{"max_partial_bytes":18446744073709551615}})",
    R"({"registry":{"address":"[::1]:1","group":"x","session":"1s"}})",
    R"({"registry":{"group":"a\tb"}})",
    R"({"server":{"listen":"h:0","max_body":2147483647,"max_send_queue":2147483663}})",
    R"({"server":{"max_connections":0}})",
    R"({"server":{"max_connections":18446744073709551615}})",
    R"({"server":{"max_body":2147483647,"max_send_queue":2147483662}})",
    R"({"client":{"server":"h:65535","connect_timeout":"1ns","max_body":1,"max_send_queue":17}})",
    R"({"client":{"max_body":1,"max_send_queue":16}})",
    R"({"service":{"interface":"i","application":"a","version":"","group":"","methods":[],"timeout":"1ms","protocol":"p"}})",
    R"({"service":{"interface":"*","version":"*","group":"a,b","methods":["m"],"timeout":"2562047h"}})",
    R"({"service":{}})",
    R"({"service":{"interface":"","application":"","methods":[""],"timeout":"0s","protocol":""}})",
    R"({"service":{"interface":"a/b","version":"1 0","group":"\t","methods":["a,b"],"protocol":"a:b"}})",
    R"({"service":{"interface":"i","timeout":"999us"}})",
    R"({"metrics":{"listen":"[::1]:0","max_header_bytes":256,"request_timeout":"1ms","max_connections":1}})",
    R"({"metrics":{"listen":"h:65535","max_header_bytes":18446744073709551615,"max_connections":18446744073709551615}})",
    R"({"metrics":{"listen":"h:1","max_header_bytes":255,"request_timeout":"999us","max_connections":0}})",
    R"({"metrics":{}})",
    R"({"cluster":{"mode":"broadcast","retries":100,"forks":100,"deadline":"1ns","seed":18446744073709551615}})",
    R"({"cluster":{"outlier":{"consecutive_failures":1000,"failure_percent":100,"minimum_volume":1,"interval":"1ms","base_ejection_time":"1ms","max_ejection_time":"1ms","max_ejection_percent":100,"suspect_factor":1000000,"suspect_floor":"0s"}}})",
    R"({"cluster":{"hedging":{"enabled":true,"percentile":50,"floor":"0s","window":"10ms","min_samples":1,"max_extra_percent":100},"budget":{"ratio":0,"min_retries_per_second":1}}})",
    R"({"cluster":{"directory":{"leave_drain":"0s","protection_window":"0s","min_heartbeat":"1ns","max_heartbeat":"1ns"}}})",
    R"({"cluster":{"mode":"failback","retries":101,"forks":0,"deadline":"0s","attempt_timeout":"1ns"}})",
    R"({"cluster":{"outlier":{"consecutive_failures":1001,"suspect_factor":0.999,"base_ejection_time":"1ms","max_ejection_time":"999us"}}})",
    R"({"cluster":{"mode":"failsafe","hedging":{"enabled":true,"percentile":99.9999,"max_extra_percent":100.0001}}})",
    R"({"cluster":{"hedging":{"enabled":true},"budget":{"ratio":0,"min_retries_per_second":0}}})",
    R"({"cluster":{"directory":{"min_heartbeat":"2ns","max_heartbeat":"1ns"}}})",
};

}  // namespace

TEST_SUITE("config") {

TEST_CASE(
    "backstop: metrics is checked by MetricsEndpoint::start()'s rules and no metrics not at all") {
  Config c;
  CHECK(backstopErrors(c).empty());  // nullopt: no endpoint
  c.metrics = wheelbeat::net::MetricsEndpointOptions{};
  CHECK(backstopErrors(c).empty());  // the defaults start
  c.metrics->listen = "9464";
  CHECK(
      backstopErrors(c) ==
      std::vector<ConfigError>{
          {"",
           R"x("MetricsEndpointOptions.listen = \"9464\" (expected: \"host:port\", IPv6 as \"[::1]:9464\", port 0..65535 (0 = any free port))")x",
           kExpected}});
  c.metrics = wheelbeat::net::MetricsEndpointOptions{.requestTimeout = 0ms};
  CHECK(backstopErrors(c) ==
        std::vector<ConfigError>{
            {"", R"x("MetricsEndpointOptions.requestTimeout = 0ms (expected: > 0)")x", kExpected}});
  c.metrics = wheelbeat::net::MetricsEndpointOptions{.maxConnections = 0};
  CHECK(backstopErrors(c) ==
        std::vector<ConfigError>{
            {"", R"x("MetricsEndpointOptions.maxConnections = 0 (expected: >= 1)")x", kExpected}});
}

TEST_CASE("backstop: a rule the loader missed becomes an error with pointer empty") {
  Config c;
  c.heartbeat.interval = 0s;
  c.server.codec.maxBody = 0;
  const auto before = backstopHits();
  CHECK(backstopErrors(c) ==
        std::vector<ConfigError>{
            {"", R"x("HeartbeatOptions.interval = 0s (expected: > 0)")x", kExpected},
            {"", R"x("ServerOptions.codec.maxBody = 0 (expected: 1 .. 2147483647)")x", kExpected}});
  CHECK(backstopHits() == before + 1);
}

TEST_CASE("backstop: a service is checked as a consumer's and no service not at all") {
  Config c;
  CHECK(backstopErrors(c).empty());  // interface "": no service
  c.service.interface = "org.example.Greeter";
  CHECK(backstopErrors(c).empty());  // no methods: fine for a consumer
  c.service.timeout = 0ms;
  CHECK(backstopErrors(c) ==
        std::vector<ConfigError>{
            {"", R"x("ServiceOptions.timeout = \"0ms\" (expected: > 0)")x", kExpected}});
  c.service = {};
  c.service.protocol = "";  // not the defaults any more, so checked: the interface first
  CHECK(backstopErrors(c).size() == 1);
}

TEST_CASE("backstop: the cluster's rules are cluster::validate()'s") {
  Config c;
  c.cluster.hedge = true;
  c.cluster.mode = wheelbeat::tasks::cluster::Mode::Forking;
  CHECK(backstopErrors(c) ==
        std::vector<ConfigError>{{"",
                                  R"x("CallPolicy.hedge = true with mode forking (expected: )x"
                                  R"x(hedging with failover or failfast only)")x",
                                  kExpected}});
  c.cluster.mode = wheelbeat::tasks::cluster::Mode::Failover;
  CHECK(backstopErrors(c).empty());
}

TEST_CASE("backstop: the wheel's rules are the timer's") {
  Config c;
  c.wheel.ticksPerWheel = 0;
  CHECK(backstopErrors(c).size() == 1);
  // 2 ticks, in every copy of the heartbeat section (the loader copies it into server and client).
  c.heartbeat.interval = std::chrono::nanoseconds(std::int64_t{1} << 53);
  c.server.heartbeat = c.heartbeat;
  c.client.heartbeat = c.heartbeat;
  c.wheel = {std::chrono::nanoseconds(4503599627370496), 2048, 0};  // 2^52 ns × 2^11 = 2^63
  CHECK(backstopErrors(c).size() == 1);
  c.wheel.ticksPerWheel = 1025;  // rounded up to 2048 as well
  CHECK(backstopErrors(c).size() == 1);
  c.wheel.ticksPerWheel = 1024;
  CHECK(backstopErrors(c).empty());
  CHECK(backstopErrors(Config{}).empty());
}

TEST_CASE("backstop: the heartbeat's periods are checked against the tick as TcpClient does") {
  Config c;
  c.server.heartbeat.interval = 150ms;  // the tick is 100ms; the loader copies "heartbeat" here
  c.client.heartbeat.interval = 150ms;
  const std::string expected =
      "heartbeat.interval = 150ms (expected: at least 2 wheel ticks = 200ms; the wheel's tick is "
      "100ms)";
  CHECK(backstopErrors(c) ==
        std::vector<ConfigError>{{"", "\"ServerOptions." + expected + "\"", kExpected},
                                 {"", "\"ClientOptions." + expected + "\"", kExpected}});
  c.wheel.tickDuration = 1ns;  // runs as 1ms
  CHECK(backstopErrors(c).empty());
}

TEST_CASE("backstop: no edge or sample document ever reaches it") {
  const auto before = backstopHits();
  int loaded = 0;
  for (const auto& json : kEdgeDocuments) {
    CAPTURE(json);
    const auto result = wheelbeat::config::tryLoadString(json);
    for (const auto& e : result.errors()) CHECK(!e.pointer.empty());
    loaded += result.ok() ? 1 : 0;
  }
  CHECK(loaded == 24);
  for (const auto& entry : std::filesystem::directory_iterator(wbtest::samplesDir())) {
    CHECK(wheelbeat::config::tryLoad(entry.path()).ok());
  }
  CHECK(backstopHits() == before);
}

}  // TEST_SUITE("config")
