// Runtime from defaults, from a JSON string and from a file: what it owns, the endpoint it
// serves, and the errors of a bad document.
#include "support.h"

#include <wheelbeat/runtime/runtime.h>

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

using namespace std::chrono_literals;
using runtime_test::sample;
using runtime_test::scrape;
using wheelbeat::Runtime;

namespace {

constexpr const char* kDocument = R"({
  "log_level": "warn",
  "wheel": { "tick": "10ms", "ticks_per_wheel": 64 },
  "loop": { "io_threads": 2 },
  "server": { "listen": "127.0.0.1:0" },
  "metrics": { "listen": "127.0.0.1:0" }
})";

}  // namespace

TEST_SUITE("runtime") {
TEST_CASE("defaults: the loops of every core - a 100 ms wheel - no endpoint") {
  Runtime rt;
  CHECK(rt.config() == wheelbeat::config::Config{});
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  CHECK(rt.loops().size() == cores);
  CHECK(rt.timer().tickDuration() == 100ms);
  CHECK(rt.timer().ticksPerWheel() == 512);
  CHECK(rt.metricsPort() == 0);
  CHECK_FALSE(rt.isStopped());
  // The wheel's, the channels' and the tasks' metrics are collected from the start.
  const std::string text = rt.metrics().prometheusText();
  CHECK(sample(text, "wheelbeat_wheel_pending_timeouts").has_value());
  CHECK(sample(text, "wheelbeat_channel_frames_in_total") == 0.0);
  CHECK(sample(text, "wheelbeat_tasks_runs_total") == 0.0);
}

TEST_CASE("from JSON: loop - wheel - log level and the endpoint listening at construction") {
  Runtime rt = Runtime::fromJson(kDocument);
  CHECK(rt.loops().size() == 2);
  CHECK(rt.timer().tickDuration() == 10ms);
  CHECK(rt.timer().ticksPerWheel() == 64);
  CHECK(wheelbeat::core::logLevel() == wheelbeat::core::LogLevel::Warn);
  REQUIRE(rt.metricsPort() != 0);
  rt.metrics().counter("runtime_test_orders_total", "Orders taken.").inc(3);
  const std::string text = scrape(rt.metricsPort());
  CHECK(sample(text, "wheelbeat_wheel_pending_timeouts").has_value());
  CHECK(sample(text, "runtime_test_orders_total") == 3.0);
  rt.stop();
  CHECK(scrape(rt.metricsPort()).empty());  // the endpoint closed with the runtime
  wheelbeat::core::setLogLevel(wheelbeat::core::LogLevel::Info);
}

TEST_CASE("from a file: the same runtime as from the string") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wheelbeat-runtime-test-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << kDocument;
  Runtime rt = Runtime::fromFile(path);
  std::filesystem::remove(path);
  CHECK(rt.config() == wheelbeat::config::loadString(kDocument));
  CHECK(rt.loops().size() == 2);
  wheelbeat::core::setLogLevel(wheelbeat::core::LogLevel::Info);
}

TEST_CASE("a bad document: every error with its JSON pointer - no runtime") {
  try {
    (void)Runtime::fromJson(R"({ "wheel": { "tick": "-1s" }, "loop": { "io_threads": 5000 } })");
    FAIL("no ConfigErrors");
  } catch (const wheelbeat::config::ConfigErrors& e) {
    REQUIRE(e.errors().size() == 2);
    CHECK(e.errors()[0].pointer == "/wheel/tick");
    CHECK(e.errors()[1].pointer == "/loop/io_threads");
  }
}

TEST_CASE("an endpoint that cannot listen: the constructor throws - nothing is left running") {
  Runtime first = Runtime::fromJson(R"({ "loop": { "io_threads": 1 },
                                           "metrics": { "listen": "127.0.0.1:0" } })");
  const std::string taken = "127.0.0.1:" + std::to_string(first.metricsPort());
  wheelbeat::config::Config cfg;
  cfg.loop.ioThreads = 1;
  cfg.metrics = wheelbeat::net::MetricsEndpointOptions{};
  cfg.metrics->listen = taken;
  const auto timers = wheelbeat::core::HashedWheelTimer::instanceCount();
  CHECK_THROWS_WITH_AS(Runtime{cfg}, doctest::Contains("EADDRINUSE"), wheelbeat::net::NetException);
  CHECK(wheelbeat::core::HashedWheelTimer::instanceCount() == timers);
}
}  // TEST_SUITE("runtime")
