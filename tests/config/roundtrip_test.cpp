// toJson(): every key written, and loadString(toJson(c)) == c.
#include "helpers.h"

#include <wheelbeat/net/channel_metrics.h>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <set>

using namespace std::chrono_literals;
using wheelbeat::config::Config;
using wheelbeat::config::loadString;
using wheelbeat::config::toJson;

namespace {

wheelbeat::tasks::RetryOptions oddPolicy(std::int64_t salt) {
  wheelbeat::tasks::RetryOptions o;
  o.backoff = wheelbeat::tasks::Backoff::Fixed;
  o.initialDelay = 250ms + std::chrono::milliseconds(salt);
  o.multiplier = 1.0 / 3.0 + 1.0;  // not a short decimal: doubles must survive exactly
  o.maxDelay = 90s;
  o.jitter = wheelbeat::tasks::Jitter::Decorrelated;
  o.jitterRatio = 0.1;
  o.maxAttempts = 4 + salt;
  o.deadline = 1h + 1ns;
  o.retryOn = {"timeout", "read-idle"};
  o.ignore = {"bad-request"};
  return o;
}

// Every field differs from its default.
Config everythingChanged() {
  Config c;
  c.wheel = {7ms, 1000, 42};
  c.logLevel = wheelbeat::core::LogLevel::Debug;
  c.heartbeat = {20s, 50s, 70s, oddPolicy(0), 12345678901234567890ULL};
  c.heartbeat.detector = wheelbeat::tasks::DetectorKind::Phi;
  c.heartbeat.spreadFirst = true;
  c.heartbeat.phi = {1.0 / 3.0 + 7.0, 250us, 3s + 1ns, 77};  // a threshold that is no short decimal
  c.retry = {{"payments", oddPolicy(1)}, {"odd name ~/", oddPolicy(2)}};
  c.retryBudget = {0.75, 3, 1500us};
  c.failback = {oddPolicy(3), false, oddPolicy(4), 9};
  c.loop.maxPartialBytes = 0;  // unlimited
  c.loop.ioThreads = 7;
  c.registry = {wheelbeat::registry::RegistryKind::Redis, {"fe80::1", 6379}, "g1", 90s};
  c.server.listen = {"::", 0};
  c.server.backlog = 128;
  c.server.maxConnections = 1000;
  c.server.codec.maxBody = 1000;
  c.server.maxSendQueue = 1016;
  c.client.server = {"example.org", 1};
  c.client.connectTimeout = 1500ms;
  c.client.codec.maxBody = 2000;
  c.client.maxSendQueue = 5000;
  c.server.heartbeat = c.heartbeat;
  c.client.heartbeat = c.heartbeat;
  c.service = {.interface = "org.example.Greeter",
               .application = "shop",
               .version = "1.0.0",
               .group = "g1",
               .methods = {"sayHello", "sayGoodbye"},
               .timeout = 1500ms,
               .protocol = "tri"};
  c.metrics = wheelbeat::net::MetricsEndpointOptions{.listen = "0.0.0.0:9464",
                                                     .maxHeaderBytes = 1024,
                                                     .requestTimeout = 2500ms,
                                                     .maxConnections = 2};
  c.cluster = wbtest::everyClusterKeyChanged();
  c.cluster.directory.client = c.client;
  c.cluster.failback = c.failback;
  return c;
}

// The key paths of a document, names of "retry" as "*".
void collectPaths(const nlohmann::json& j, const std::string& at, std::set<std::string>& out) {
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    const std::string path = at + "/" + (at == "/retry" ? "*" : key);
    out.insert(path);
    collectPaths(value, path, out);
  }
}

}  // namespace

TEST_SUITE("config") {

TEST_CASE("round trip: a config with every field changed comes back equal") {
  const Config c = everythingChanged();
  CHECK_FALSE(c == Config{});
  const Config back = loadString(toJson(c));
  CHECK(back == c);
  CHECK(toJson(back) == toJson(c));
}

TEST_CASE("round trip: defaults and every sample come back equal") {
  CHECK(loadString(toJson(Config{})) == Config{});
  for (const char* name : {"minimal.json", "client.json", "server.json", "full.json"}) {
    CAPTURE(name);
    const Config c = wheelbeat::config::load(wbtest::samplesDir() / name);
    CHECK(loadString(toJson(c)) == c);
  }
}

TEST_CASE("round trip: every registry kind comes back by its name") {
  using wheelbeat::registry::RegistryKind;
  for (const auto& [kind, name] :
       std::vector<std::pair<RegistryKind, std::string>>{{RegistryKind::Embedded, "embedded"},
                                                         {RegistryKind::Redis, "redis"},
                                                         {RegistryKind::ZooKeeper, "zookeeper"}}) {
    CAPTURE(name);
    Config c;
    c.registry.kind = kind;
    CHECK(nlohmann::json::parse(toJson(c))["registry"]["kind"] == name);
    CHECK(loadString(toJson(c)) == c);
    CHECK(loadString(fmt::format(R"({{"registry":{{"kind":"{}"}}}})", name)).registry.kind == kind);
  }
}

TEST_CASE("round trip: a service comes back and no service is not written") {
  Config c;
  c.service.interface = "org.example.Greeter";
  CHECK(loadString(toJson(c)) == c);
  c.service.timeout = 1h;
  CHECK(loadString(toJson(c)) == c);
  CHECK_FALSE(nlohmann::json::parse(toJson(Config{})).contains("service"));
  CHECK(loadString(toJson(Config{})).service.interface.empty());
}

TEST_CASE("round trip: toJson writes every known key and nothing else") {
  std::set<std::string> written;
  collectPaths(nlohmann::json::parse(toJson(everythingChanged())), "", written);
  const auto known = wheelbeat::config::knownKeyPaths();
  CHECK(written == std::set<std::string>(known.begin(), known.end()));
}

TEST_CASE("round trip: toJson writes the documented forms") {
  const auto j = nlohmann::json::parse(toJson(everythingChanged()));
  CHECK(j["wheel"]["tick"] == "7ms");
  CHECK(j["heartbeat"]["interval"] == "20s");
  CHECK(j["heartbeat"]["reconnect"]["deadline"] == "3600000000001ns");
  CHECK(j["heartbeat"]["detector"] == "phi");
  CHECK(j["heartbeat"]["phi"] == nlohmann::json{{"threshold", 1.0 / 3.0 + 7.0},
                                                {"min_std_deviation", "250us"},
                                                {"acceptable_pause", "3000000001ns"},
                                                {"window", 77}});
  CHECK(nlohmann::json::parse(toJson(Config{}))["heartbeat"]["detector"] == "fixed");
  CHECK(nlohmann::json::parse(toJson(Config{}))["heartbeat"]["phi"] ==
        nlohmann::json{{"threshold", 8.0},
                       {"min_std_deviation", "100ms"},
                       {"acceptable_pause", "1s"},
                       {"window", 1000}});
  CHECK(j["retry_budget"]["window"] == "1500us");
  CHECK(j["registry"]["address"] == "[fe80::1]:6379");
  CHECK(j["server"]["listen"] == "[::]:0");
  CHECK(j["server"]["max_connections"] == 1000);
  CHECK(j["loop"]["max_partial_bytes"] == 0);
  CHECK(j["loop"]["io_threads"] == 7);
  CHECK(nlohmann::json::parse(toJson(Config{}))["loop"]["io_threads"] == 0);
  CHECK(nlohmann::json::parse(toJson(Config{}))["loop"]["max_partial_bytes"] == 33554432);
  CHECK(nlohmann::json::parse(toJson(Config{}))["server"]["max_connections"] == 0);
  CHECK(nlohmann::json::parse(toJson(Config{}))["server"]["shutdown_grace"] == "10s");
  CHECK(loadString(R"({"server":{"shutdown_grace":"250ms"}})").server.shutdownGrace == 250ms);
  CHECK(loadString(R"({"server":{"shutdown_grace":"0s"}})").server.shutdownGrace == 0ms);
  CHECK(j["log_level"] == "debug");
  CHECK(j["service"] == nlohmann::json{{"interface", "org.example.Greeter"},
                                       {"application", "shop"},
                                       {"version", "1.0.0"},
                                       {"group", "g1"},
                                       {"methods", {"sayHello", "sayGoodbye"}},
                                       {"timeout", "1500ms"},
                                       {"protocol", "tri"}});
  CHECK(nlohmann::json::parse(toJson(Config{}))["retry"]["payments"].is_null());
  CHECK(nlohmann::json::parse(toJson(Config{}))["heartbeat"]["idle_timeout"] == "0s");
}

TEST_CASE("round trip: equality sees a change in any single field") {
  const std::vector<std::function<void(Config&)>> changes = {
      [](Config& c) { c.wheel.tickDuration = 1ms; },
      [](Config& c) { c.wheel.ticksPerWheel = 8; },
      [](Config& c) { c.wheel.maxPendingTimeouts = 1; },
      [](Config& c) { c.logLevel = wheelbeat::core::LogLevel::Off; },
      [](Config& c) { c.heartbeat.interval = 1s; },
      [](Config& c) { c.heartbeat.idleTimeout = 1s; },
      [](Config& c) { c.heartbeat.closeTimeout = 1s; },
      [](Config& c) { c.heartbeat.seed = 1; },
      [](Config& c) { c.heartbeat.reconnect.multiplier = 2; },
      [](Config& c) { c.heartbeat.detector = wheelbeat::tasks::DetectorKind::Phi; },
      [](Config& c) { c.heartbeat.phi.threshold = 9; },
      [](Config& c) { c.heartbeat.phi.minStdDeviation = 1s; },
      [](Config& c) { c.heartbeat.phi.acceptablePause = 2s; },
      [](Config& c) { c.heartbeat.phi.window = 1; },
      [](Config& c) { c.retry["x"] = {}; },
      [](Config& c) { c.retryBudget.ratio = 0.5; },
      [](Config& c) { c.retryBudget.minRetriesPerSecond = 1; },
      [](Config& c) { c.retryBudget.window = 1s; },
      [](Config& c) { c.failback.check = false; },
      [](Config& c) { c.failback.registryRetry.ignore = {"rejected"}; },
      [](Config& c) { c.failback.invocationRetry.retryOn = {"overloaded"}; },
      [](Config& c) { c.failback.maxPendingRetries = 1; },
      [](Config& c) { c.loop.maxPartialBytes = 0; },
      [](Config& c) { c.loop.ioThreads = 1; },
      [](Config& c) { c.registry.kind = wheelbeat::registry::RegistryKind::Redis; },
      [](Config& c) { c.registry.kind = wheelbeat::registry::RegistryKind::ZooKeeper; },
      [](Config& c) { c.registry.address.port = 1; },
      [](Config& c) { c.registry.group = "x"; },
      [](Config& c) { c.registry.session = 2s; },
      [](Config& c) { c.server.listen.host = "x"; },
      [](Config& c) { c.server.backlog = 1; },
      [](Config& c) { c.server.maxConnections = 1; },
      [](Config& c) { c.server.codec.maxBody = 1; },
      [](Config& c) { c.server.maxSendQueue = 1; },
      [](Config& c) { c.server.heartbeat.seed = 1; },
      [](Config& c) { c.server.heartbeat.phi.window = 1; },
      [](Config& c) { c.client.server.port = 1; },
      [](Config& c) { c.client.connectTimeout = 1s; },
      [](Config& c) { c.client.codec.maxBody = 1; },
      [](Config& c) { c.client.maxSendQueue = 1; },
      [](Config& c) { c.client.heartbeat.seed = 1; },
      [](Config& c) { c.client.heartbeat.detector = wheelbeat::tasks::DetectorKind::Phi; },
      [](Config& c) { c.service.interface = "x"; },
      [](Config& c) { c.service.application = "x"; },
      [](Config& c) { c.service.version = "x"; },
      [](Config& c) { c.service.group = "x"; },
      [](Config& c) { c.service.methods = {"x"}; },
      [](Config& c) { c.service.timeout = 1ms; },
      [](Config& c) { c.service.protocol = "x"; },
      [](Config& c) { c.metrics = wheelbeat::net::MetricsEndpointOptions{}; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    CAPTURE(i);
    Config c;
    changes[i](c);
    CHECK_FALSE(c == Config{});
  }
}

TEST_CASE("round trip: the observers set by code are neither compared nor written") {
  Config c;
  c.server.metrics = std::make_shared<wheelbeat::net::ChannelMetrics>();
  c.server.taskListener = std::make_shared<wheelbeat::tasks::TaskListener>();
  c.server.taskMetrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  c.client.metrics = std::make_shared<wheelbeat::net::ChannelMetrics>();
  c.client.taskListener = std::make_shared<wheelbeat::tasks::TaskListener>();
  c.client.taskMetrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  CHECK(c == Config{});
  CHECK(toJson(c) == toJson(Config{}));
}

}  // TEST_SUITE("config")
