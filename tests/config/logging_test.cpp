// applyLogging(): one call applies a configuration's log level and sink, and hands back the sink
// it replaced.
#include <wheelbeat/config/config.h>
#include <wheelbeat/core/log.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using wheelbeat::config::applyLogging;
using wheelbeat::config::Config;
using wheelbeat::config::loadString;
using wheelbeat::core::LogLevel;

TEST_SUITE("config") {

TEST_CASE("applyLogging: the document's log_level and the given sink take effect") {
  const LogLevel savedLevel = wheelbeat::core::logLevel();
  std::vector<std::string> seen;
  const Config c = loadString(R"({"log_level": "debug"})");
  REQUIRE(c.logLevel == LogLevel::Debug);
  auto previous = applyLogging(c, [&](LogLevel level, std::string_view text) {
    seen.push_back(fmt::format("{} {}", wheelbeat::core::logLevelName(level), text));
  });
  CHECK(wheelbeat::core::logLevel() == LogLevel::Debug);
  wheelbeat::core::log(LogLevel::Debug, "a {} line", "debug");
  CHECK(seen == std::vector<std::string>{"DEBUG a debug line"});

  // Applying "error" with the previous sink: Info is dropped, the capture sees nothing more.
  const Config quiet = loadString(R"({"log_level": "error"})");
  auto mine = applyLogging(quiet, std::move(previous));
  CHECK(mine);  // the capture sink is handed back
  CHECK(wheelbeat::core::logLevel() == LogLevel::Error);
  wheelbeat::core::log(LogLevel::Info, "dropped");
  CHECK(seen.size() == 1);
  wheelbeat::core::setLogLevel(savedLevel);
}

TEST_CASE("applyLogging: a default Config means Info and the default sink") {
  const LogLevel savedLevel = wheelbeat::core::logLevel();
  wheelbeat::core::setLogLevel(LogLevel::Off);
  auto previous = applyLogging(Config{});
  CHECK(wheelbeat::core::logLevel() == LogLevel::Info);
  // What applyLogging() installed is the default sink (nullptr).
  CHECK(wheelbeat::core::setLogSink(std::move(previous)) == nullptr);
  wheelbeat::core::setLogLevel(savedLevel);
}

}  // TEST_SUITE("config")
