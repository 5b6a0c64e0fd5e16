// The "cluster" section: cluster::ClusterOptions from the document — defaults, the round trip,
// equality, the provider clients taken from "client", and the exact message of each bad value
// (the rules are cluster::validate()'s and its nested structs').
#include "helpers.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using wheelbeat::cluster::ClusterOptions;
using wheelbeat::config::Config;
using wheelbeat::config::loadString;
using wheelbeat::config::toJson;
using wheelbeat::tasks::cluster::BalancerKind;
using wheelbeat::tasks::cluster::Mode;

namespace {

struct Bad {
  std::string json;
  std::vector<std::string> messages;
};

const std::string kModes =
    R"(one of "failover", "failfast", "failsafe", "failback", "forking", "broadcast")";
const std::string kBalancers =
    R"(one of "p2c", "round_robin", "random", "least_active", "consistent_hash")";
const std::string kNoToken =
    "a budget that can give a token (a ratio or a per-second reserve "
    "above 0)";

std::string e(const std::string& pointerAndValue, const std::string& expected) {
  return pointerAndValue + " (expected: " + expected + ")";
}

const std::vector<Bad> kBad = {
    {R"({"cluster":[]})", {e("/cluster: []", "an object")}},
    // names: the JSON path, the value and the accepted names
    {R"({"cluster":{"mode":"Failover"}})", {e(R"(/cluster/mode: "Failover")", kModes)}},
    {R"({"cluster":{"mode":"failovr","balancer":"roundrobin"}})",
     {e(R"(/cluster/mode: "failovr")", kModes),
      e(R"(/cluster/balancer: "roundrobin")", kBalancers)}},
    {R"({"cluster":{"balancer":"weighted_random"}})",
     {e(R"(/cluster/balancer: "weighted_random")", kBalancers)}},
    // durations: negative ones are no durations; zero where > 0 is the rule
    {R"({"cluster":{"deadline":"-1s","attempt_timeout":"-5ms"}})",
     {e(R"(/cluster/deadline: "-1s")", "a non-negative duration"),
      e(R"(/cluster/attempt_timeout: "-5ms")", "a non-negative duration")}},
    {R"({"cluster":{"deadline":0}})",
     {e("/cluster/deadline: 0", R"(a duration with a unit, e.g. "30s")")}},
    {R"({"cluster":{"deadline":"0s","retries":101,"forks":0}})",
     {e("/cluster/retries: 101", "0..100"), e("/cluster/forks: 0", "1..100"),
      e(R"(/cluster/deadline: "0s")", "> 0")}},
    {R"({"cluster":{"retries":-1,"forks":4294967296,"seed":-1}})",
     {e("/cluster/retries: -1", "an integer in 0..4294967295"),
      e("/cluster/forks: 4294967296", "an integer in 0..4294967295"),
      e("/cluster/seed: -1", "an integer in 0..18446744073709551615")}},
    // hedging: its own keys, then the rules across the section
    {R"({"cluster":{"hedging":{"delay":"-1ms","floor":"-1ns"}}})",
     {e(R"(/cluster/hedging/delay: "-1ms")", "a non-negative duration"),
      e(R"(/cluster/hedging/floor: "-1ns")", "a non-negative duration")}},
    {R"({"cluster":{"hedging":{"percentile":100,"window":"9ms","min_samples":0,
        "max_extra_percent":100.5}}})",
     {e("/cluster/hedging/percentile: 100", "50 <= percentile < 100"),
      e(R"(/cluster/hedging/window: "9ms")", ">= 10ms"),
      e("/cluster/hedging/min_samples: 0", ">= 1"),
      e("/cluster/hedging/max_extra_percent: 100.5", "0..100")}},
    {R"({"cluster":{"hedging":{"percentile":49.9}}})",
     {e("/cluster/hedging/percentile: 49.9", "50 <= percentile < 100")}},
    {R"({"cluster":{"hedging":{"enabled":true},"budget":{"ratio":0,"min_retries_per_second":0}}})",
     {e("/cluster/hedging/enabled: true", kNoToken)}},
    {R"({"cluster":{"budget":{"ratio":0,"min_retries_per_second":0},"hedging":{"enabled":true}}})",
     {e("/cluster/hedging/enabled: true", kNoToken)}},
    // a hedge the load cap would never let through
    {R"({"cluster":{"hedging":{"enabled":true,"max_extra_percent":0}}})",
     {e("/cluster/hedging/enabled: true", "max_extra_percent > 0")}},
    {R"({"cluster":{"mode":"forking","hedging":{"enabled":true,"delay":"5ms"}}})",
     {e("/cluster/hedging/enabled: true", "hedging with failover or failfast only")}},
    {R"({"cluster":{"hedging":{"enabled":1}}})",
     {e("/cluster/hedging/enabled: 1", "true or false")}},
    // outlier: each rule, and the one between two keys blamed on the key written
    {R"({"cluster":{"outlier":{"consecutive_failures":1001,"failure_percent":101,
        "minimum_volume":0,"interval":"0s","base_ejection_time":"999us","max_ejection_percent":101,
        "suspect_factor":0.5,"suspect_floor":"-1ms"}}})",
     {e(R"(/cluster/outlier/suspect_floor: "-1ms")", "a non-negative duration"),
      e("/cluster/outlier/consecutive_failures: 1001", "0 (off) or 1..1000"),
      e("/cluster/outlier/failure_percent: 101", "0 (off) or 1..100"),
      e("/cluster/outlier/minimum_volume: 0", ">= 1"),
      e(R"(/cluster/outlier/interval: "0s")", ">= 1ms"),
      e(R"(/cluster/outlier/base_ejection_time: "999us")", ">= 1ms"),
      e("/cluster/outlier/max_ejection_percent: 101", "0..100"),
      e("/cluster/outlier/suspect_factor: 0.5", "0 (off) or 1..1000000")}},
    {R"({"cluster":{"outlier":{"base_ejection_time":"10m"}}})",
     {e(R"(/cluster/outlier/base_ejection_time: "10m")", "<= max_ejection_time = 5m")}},
    {R"({"cluster":{"outlier":{"max_ejection_time":"1s"}}})",
     {e(R"(/cluster/outlier/max_ejection_time: "1s")", ">= base_ejection_time = 30s")}},
    {R"({"cluster":{"outlier":{"base_ejection_time":"2m","max_ejection_time":"1m"}}})",
     {e(R"(/cluster/outlier/max_ejection_time: "1m")", ">= base_ejection_time = 2m")}},
    // budget: the retry_budget keys and rules
    {R"({"cluster":{"budget":{"ratio":-0.5,"window":"0s"}}})",
     {e("/cluster/budget/ratio: -0.5", "0 <= ratio <= 1000"),
      e(R"(/cluster/budget/window: "0s")", ">= 1ms")}},
    // directory
    {R"({"cluster":{"directory":{"min_heartbeat":"0s","leave_drain":"-1s"}}})",
     {e(R"(/cluster/directory/leave_drain: "-1s")", "a non-negative duration"),
      e(R"(/cluster/directory/min_heartbeat: "0s")", "> 0")}},
    {R"({"cluster":{"directory":{"min_heartbeat":"10m"}}})",
     {e(R"(/cluster/directory/min_heartbeat: "10m")", "<= max_heartbeat = 300s")}},
    {R"({"cluster":{"directory":{"min_heartbeat":"2s","max_heartbeat":"1s"}}})",
     {e(R"(/cluster/directory/max_heartbeat: "1s")", ">= min_heartbeat = 2s")}},
    {R"({"cluster":{"directory":{"client":{}}}})",
     {e("/cluster/directory/client: {}",
        "a known key: empty_protection, leave_drain, protection_window, min_heartbeat, "
        "max_heartbeat")}},
};

}  // namespace

TEST_SUITE("config") {

TEST_CASE("cluster: every bad value gives exactly its messages and no Config") {
  for (const Bad& bad : kBad) {
    CAPTURE(bad.json);
    const auto result = wheelbeat::config::tryLoadString(bad.json);
    CHECK_FALSE(result.ok());
    CHECK(wbtest::messagesOf(bad.json) == bad.messages);
  }
}

TEST_CASE("cluster: the defaults are ClusterOptions' own and {} equals no section") {
  CHECK(loadString(R"({"cluster":{}})") == Config{});
  CHECK(loadString(R"({"cluster":{"outlier":{},"hedging":{},"budget":{},"directory":{}}})") ==
        Config{});
  const ClusterOptions& o = loadString("{}").cluster;
  CHECK(o.mode == Mode::Failover);
  CHECK(o.retries == 2);
  CHECK(o.deadline == 1s);
  CHECK(o.balancer == BalancerKind::P2C);
  CHECK(o.outlier.consecutiveFailures == 5);
  CHECK_FALSE(o.hedge);
  CHECK(o.hedgeDelay.percentile == 95);
  CHECK(o.maxExtraPercent == 5);
  CHECK(o.budget.ratio == 0.2);
  CHECK(o.directory.maxHeartbeat == 5min);
}

TEST_CASE("cluster: the provider clients are the document's client, with its heartbeat") {
  const Config c = loadString(
      R"({"heartbeat":{"interval":"20s"},"client":{"connect_timeout":"1500ms","max_body":4096}})");
  const auto& client = c.cluster.directory.client;
  CHECK(client.connectTimeout == 1500ms);
  CHECK(client.codec.maxBody == 4096);
  CHECK(client.heartbeat.interval == 20s);
  CHECK(wheelbeat::config::resolved(c).cluster.directory.client.heartbeat.idleTimeout == 60s);
  CHECK_FALSE(nlohmann::json::parse(toJson(c))["cluster"]["directory"].contains("client"));
  Config apart = c;
  apart.cluster.directory.client.connectTimeout = 1s;  // code may set it apart
  CHECK_FALSE(apart == c);
}

TEST_CASE("cluster: failback mode retries as the document's failback section says") {
  const Config c = loadString(
      R"({"cluster":{"mode":"failback"},"failback":{"max_pending_retries":7,)"
      R"("invocation_retry":{"backoff":"fixed","initial_delay":"2s","max_attempts":5}}})");
  CHECK(c.cluster.mode == wheelbeat::tasks::cluster::Mode::Failback);
  CHECK(c.cluster.failback.maxPendingRetries == 7);
  CHECK(c.cluster.failback.invocationRetry.initialDelay == 2s);
  CHECK(c.cluster.failback.invocationRetry.maxAttempts == 5);
  CHECK_FALSE(nlohmann::json::parse(toJson(c))["cluster"].contains("failback"));
  Config apart = c;
  apart.cluster.failback.maxPendingRetries = 8;  // code may set it apart
  CHECK_FALSE(apart == c);
}

TEST_CASE("cluster: every key changed comes back equal through toJson") {
  Config c;
  c.cluster = wbtest::everyClusterKeyChanged();
  const Config back = loadString(toJson(c));
  CHECK(back == c);
  CHECK(back.cluster.outlier.suspectFactor == 1.0 / 3.0 + 2.0);  // exact
  const auto j = nlohmann::json::parse(toJson(c))["cluster"];
  CHECK(j["mode"] == "failfast");
  CHECK(j["balancer"] == "consistent_hash");
  CHECK(j["attempt_timeout"] == "700ms");
  CHECK(j["hedging"] == nlohmann::json{{"enabled", true},
                                       {"delay", "25ms"},
                                       {"percentile", 99.5},
                                       {"floor", "3ms"},
                                       {"window", "20s"},
                                       {"min_samples", 50},
                                       {"max_extra_percent", 12.5}});
  CHECK(j["directory"]["leave_drain"] == "0s");
}

TEST_CASE("cluster: every mode and balancer comes back by its name") {
  const std::vector<std::pair<Mode, std::string>> modes = {{Mode::Failover, "failover"},
                                                           {Mode::Failfast, "failfast"},
                                                           {Mode::Failsafe, "failsafe"},
                                                           {Mode::Forking, "forking"},
                                                           {Mode::Broadcast, "broadcast"}};
  for (const auto& [mode, name] : modes) {
    CAPTURE(name);
    Config c;
    c.cluster.mode = mode;
    CHECK(nlohmann::json::parse(toJson(c))["cluster"]["mode"] == name);
    CHECK(loadString(toJson(c)) == c);
  }
  const std::vector<std::pair<BalancerKind, std::string>> balancers = {
      {BalancerKind::P2C, "p2c"},
      {BalancerKind::RoundRobin, "round_robin"},
      {BalancerKind::WeightedRandom, "random"},
      {BalancerKind::LeastActive, "least_active"},
      {BalancerKind::ConsistentHash, "consistent_hash"}};
  for (const auto& [kind, name] : balancers) {
    CAPTURE(name);
    CHECK(wheelbeat::tasks::cluster::balancerKindName(kind) == name);
    Config c;
    c.cluster.balancer = kind;
    CHECK(loadString(toJson(c)) == c);
  }
}

TEST_CASE("cluster: equality sees a change in any single key") {
  const std::vector<std::function<void(ClusterOptions&)>> changes = {
      [](ClusterOptions& o) { o.mode = Mode::Failsafe; },
      [](ClusterOptions& o) { o.retries = 0; },
      [](ClusterOptions& o) { o.forks = 1; },
      [](ClusterOptions& o) { o.deadline = 2s; },
      [](ClusterOptions& o) { o.attemptTimeout = 1ms; },
      [](ClusterOptions& o) { o.balancer = BalancerKind::RoundRobin; },
      [](ClusterOptions& o) { o.seed = 1; },
      [](ClusterOptions& o) { o.outlier.consecutiveFailures = 0; },
      [](ClusterOptions& o) { o.outlier.failurePercent = 1; },
      [](ClusterOptions& o) { o.outlier.minimumVolume = 1; },
      [](ClusterOptions& o) { o.outlier.interval = 1s; },
      [](ClusterOptions& o) { o.outlier.baseEjectionTime = 1s; },
      [](ClusterOptions& o) { o.outlier.maxEjectionTime = 1h; },
      [](ClusterOptions& o) { o.outlier.maxEjectionPercent = 1; },
      [](ClusterOptions& o) { o.outlier.allowEjectAll = true; },
      [](ClusterOptions& o) { o.outlier.suspectFactor = 0; },
      [](ClusterOptions& o) { o.outlier.suspectFloor = 0ms; },
      [](ClusterOptions& o) { o.hedge = true; },
      [](ClusterOptions& o) { o.hedgeDelay.fixed = 1ms; },
      [](ClusterOptions& o) { o.hedgeDelay.percentile = 50; },
      [](ClusterOptions& o) { o.hedgeDelay.floor = 0ms; },
      [](ClusterOptions& o) { o.hedgeDelay.window = 1s; },
      [](ClusterOptions& o) { o.hedgeDelay.minSamples = 1; },
      [](ClusterOptions& o) { o.maxExtraPercent = 0; },
      [](ClusterOptions& o) { o.budget.ratio = 0; },
      [](ClusterOptions& o) { o.budget.minRetriesPerSecond = 0; },
      [](ClusterOptions& o) { o.budget.window = 1s; },
      [](ClusterOptions& o) { o.directory.emptyProtection = false; },
      [](ClusterOptions& o) { o.directory.leaveDrain = 0ms; },
      [](ClusterOptions& o) { o.directory.protectionWindow = 0ms; },
      [](ClusterOptions& o) { o.directory.minHeartbeat = 2s; },
      [](ClusterOptions& o) { o.directory.maxHeartbeat = 1h; },
      [](ClusterOptions& o) { o.directory.client.connectTimeout = 1s; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    CAPTURE(i);
    Config c;
    changes[i](c.cluster);
    CHECK_FALSE(c == Config{});
  }
}

TEST_CASE("cluster: the options loaded are the ones cluster::validate() accepts") {
  for (const char* name : {"client.json", "full.json"}) {
    CAPTURE(name);
    const Config c = wheelbeat::config::load(wbtest::samplesDir() / name);
    CHECK(c.cluster.hedge);
    CHECK_NOTHROW(wheelbeat::cluster::validate(c.cluster));
  }
  CHECK_NOTHROW(wheelbeat::cluster::validate(loadString("{}").cluster));
}

}  // TEST_SUITE("config")
