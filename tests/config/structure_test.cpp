// Structure: unknown keys at every level, wrong types, and many errors reported at once.
#include "helpers.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

const std::string kDuration =
    "a duration: a non-negative number with a unit h, m, s, ms, us or ns, or several in that "
    "order (e.g. \"60s\", \"1.5s\", \"1m30s\", \"250us\")";
const std::string kPolicyKeys =
    "a known key: backoff, initial_delay, multiplier, max_delay, jitter, jitter_ratio, "
    "max_attempts, deadline, retry_on, ignore";

struct Level {
  std::string json;     // the document, with the unknown key "x": 1 at that level
  std::string pointer;  // where the unknown key is
  std::string known;    // the known keys listed in the message
};

// "a known key: a, b" for the keys right under `parent` in the loader's table, in table order.
std::string knownUnder(const std::string& parent) {
  std::string out = "a known key: ";
  bool first = true;
  for (const auto& path : wheelbeat::config::knownKeyPaths()) {
    if (!path.starts_with(parent + "/") || path.find('/', parent.size() + 1) != std::string::npos) {
      continue;
    }
    out += (first ? "" : ", ") + path.substr(parent.size() + 1);
    first = false;
  }
  return out;
}

}  // namespace

TEST_SUITE("config") {

TEST_CASE("unknown keys: rejected at every level with the known keys listed") {
  // Below the top level, the keys listed are the loader's table's (a new key needs no edit here).
  const std::vector<Level> levels = {
      {R"({"x":1})", "/x",
       "a known key: log_level, wheel, heartbeat, retry, retry_budget, failback, loop, registry, "
       "server, client, service, metrics, cluster"},
      {R"({"wheel":{"x":1}})", "/wheel/x", knownUnder("/wheel")},
      {R"({"heartbeat":{"x":1}})", "/heartbeat/x", knownUnder("/heartbeat")},
      {R"({"heartbeat":{"reconnect":{"x":1}}})", "/heartbeat/reconnect/x", knownUnder("/retry/*")},
      {R"({"heartbeat":{"phi":{"x":1}}})", "/heartbeat/phi/x", knownUnder("/heartbeat/phi")},
      {R"({"retry":{"p":{"x":1}}})", "/retry/p/x", kPolicyKeys},
      {R"({"retry_budget":{"x":1}})", "/retry_budget/x", knownUnder("/retry_budget")},
      {R"({"failback":{"x":1}})", "/failback/x", knownUnder("/failback")},
      {R"({"failback":{"registry_retry":{"x":1}}})", "/failback/registry_retry/x", kPolicyKeys},
      {R"({"failback":{"invocation_retry":{"x":1}}})", "/failback/invocation_retry/x", kPolicyKeys},
      {R"({"loop":{"x":1}})", "/loop/x", knownUnder("/loop")},
      {R"({"registry":{"x":1}})", "/registry/x", knownUnder("/registry")},
      {R"({"server":{"x":1}})", "/server/x", knownUnder("/server")},
      {R"({"client":{"x":1}})", "/client/x", knownUnder("/client")},
      {R"({"service":{"interface":"i","x":1}})", "/service/x", knownUnder("/service")},
      {R"({"metrics":{"listen":"127.0.0.1:9464","x":1}})", "/metrics/x", knownUnder("/metrics")},
      {R"({"cluster":{"x":1}})", "/cluster/x", knownUnder("/cluster")},
      {R"({"cluster":{"outlier":{"x":1}}})", "/cluster/outlier/x", knownUnder("/cluster/outlier")},
      {R"({"cluster":{"hedging":{"x":1}}})", "/cluster/hedging/x", knownUnder("/cluster/hedging")},
      {R"({"cluster":{"budget":{"x":1}}})", "/cluster/budget/x", knownUnder("/retry_budget")},
      {R"({"cluster":{"directory":{"x":1}}})", "/cluster/directory/x",
       knownUnder("/cluster/directory")},
  };
  CHECK(knownUnder("/wheel") == "a known key: tick, ticks_per_wheel, max_pending");
  for (const Level& level : levels) {
    CAPTURE(level.json);
    CHECK(wbtest::messagesOf(level.json) ==
          std::vector<std::string>{level.pointer + ": 1 (expected: " + level.known + ")"});
  }
}

TEST_CASE("unknown keys: near misses in case or spelling are not accepted") {
  CHECK(
      wbtest::messagesOf(R"({"Wheel":{},"heartbeat":{"Interval":"1s","idleTimeout":0}})").size() ==
      3);
}

TEST_CASE("type errors: each kind of value rejects the other JSON types") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // pointer → expectation, for values of the wrong type: null, true, "s", [], {}
      // A value that is no value of the key's type says the type; the key's rules come from its
      // layer's validate() once the type is right.
      {"/wheel/ticks_per_wheel", "an integer"},
      {"/retry_budget/ratio", "a number"},
      {"/heartbeat/detector", R"(one of "fixed", "phi")"},
      {"/failback/check", "true or false"},
      {"/registry/kind", R"(one of "embedded", "redis", "zookeeper")"},
      {"/registry/group", "a string"},
      {"/loop/max_partial_bytes", "an integer >= 0 (bytes; 0 = unlimited)"},
      {"/loop/io_threads", "an integer in 0..1024 (0 = one per core)"},
      {"/server/max_connections", "an integer >= 0 (0 = unlimited)"},
      {"/server/shutdown_grace", kDuration},
      {"/server/max_body", "an integer >= 0"},
      {"/service/interface", "a non-empty name without whitespace, '/' or '?'"},
      {"/service/application", "a non-empty name without whitespace"},
      {"/service/version", R"(a string without whitespace ("" = unversioned))"},
      {"/service/group", R"(a string without whitespace ("" = none))"},
      {"/service/timeout", kDuration},
      {"/service/protocol", "a non-empty url scheme without whitespace, ':', '/' or '?'"},
      {"/cluster/mode",
       R"(one of "failover", "failfast", "failsafe", "failback", "forking", "broadcast")"},
      {"/cluster/retries", "an integer in 0..4294967295"},
      {"/cluster/deadline", kDuration},
      {"/cluster/balancer",
       R"(one of "p2c", "round_robin", "random", "least_active", "consistent_hash")"},
      {"/cluster/seed", "an integer in 0..18446744073709551615"},
  };
  for (const auto& [pointer, expected] : cases) {
    const auto slash = pointer.rfind('/');
    const std::string section = pointer.substr(1, slash - 1);
    const std::string key = pointer.substr(slash + 1);
    // "service" requires its interface: given when another key is tested.
    const std::string required =
        section == "service" && key != "interface" ? R"("interface":"i",)" : "";
    for (const std::string value : {"null", "[]", "{}", "[1]"}) {
      const std::string json =
          R"({")" + section + R"(":{)" + required + R"(")" + key + R"(":)" + value + "}}";
      CAPTURE(json);
      CHECK(wbtest::messagesOf(json) ==
            std::vector<std::string>{pointer + ": " + value + " (expected: " + expected + ")"});
    }
  }
}

TEST_CASE("type errors: methods is an array of strings") {
  for (const std::string value : {"null", R"("sayHello")", "{}", "1"}) {
    CAPTURE(value);
    CHECK(wbtest::messagesOf(R"({"service":{"interface":"i","methods":)" + value + "}}") ==
          std::vector<std::string>{"/service/methods: " + value +
                                   " (expected: an array of method names)"});
  }
  CHECK(wbtest::messagesOf(R"({"service":{"interface":"i","methods":[null,["a"],{},1,true]}})")
            .size() == 5);
}

TEST_CASE("type errors: a section that is not an object") {
  for (const std::string section : {"wheel", "heartbeat", "retry_budget", "failback", "loop",
                                    "registry", "server", "client", "service", "metrics"}) {
    CAPTURE(section);
    CHECK(wbtest::messagesOf(R"({")" + section + R"(":"on"})") ==
          std::vector<std::string>{"/" + section + R"(: "on" (expected: an object))"});
  }
}

TEST_CASE("several errors: all reported at once in document order") {
  const auto messages = wbtest::messagesOf(R"({
    "client":{"server":"nohost","connect_timeout":"0s","max_body":0},
    "log_level":"loud",
    "wheel":{"tick":"-1.5ms","max_pending":-3,"y":0},
    "retry":{"a":{"initial_delay":"2m","max_delay":"1m"},"b":{"jitter":"x"}},
    "heartbeat":{"interval":"10s","idle_timeout":"15s","reconnect":"c"}})");
  const std::vector<std::string> pointers = {"/client/server",
                                             "/client/connect_timeout",
                                             "/client/max_body",
                                             "/log_level",
                                             "/wheel/tick",
                                             "/wheel/max_pending",
                                             "/wheel/y",
                                             "/retry/a/max_delay",
                                             "/retry/b/jitter",
                                             "/heartbeat/reconnect",
                                             "/heartbeat/idle_timeout"};
  REQUIRE(messages.size() == pointers.size());
  for (std::size_t i = 0; i < pointers.size(); ++i) {
    CAPTURE(messages[i]);
    CHECK(messages[i].starts_with(pointers[i] + ": "));
  }
}

TEST_CASE("several errors: a bad document yields no Config at all") {
  const auto result = wheelbeat::config::tryLoadString(R"({"wheel":{"tick":"1s"},"log_level":1})");
  CHECK_FALSE(result.ok());
  CHECK(result.errors().size() == 1);
  CHECK_THROWS_AS((void)result.config(), std::logic_error);
}

}  // TEST_SUITE("config")
