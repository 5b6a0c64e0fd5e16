// The log seam: the default sink's line format (exact, at a fixed time), its one write per line
// to stderr, the level check before formatting, and the sink being replaced and restored.
#include "../log_capture.h"
#include "support.h"

#include <wheelbeat/core/duration_format.h>

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <string>

using namespace wbtest;
using wheelbeat::core::formatLogLine;
using wheelbeat::core::logEnabled;
using wheelbeat::core::setLogLevel;
namespace chrono = std::chrono;

namespace {

// 2026-11-25T14:03:07.412Z as a system_clock time point (+ `extra`).
chrono::system_clock::time_point at(chrono::nanoseconds extra = {}) {
  const auto day = chrono::sys_days{chrono::year{2026} / 11 / 25};
  return chrono::time_point_cast<chrono::system_clock::duration>(day + 14h + 3min + 7s + 412ms +
                                                                 extra);
}

// Restores the level on scope exit (the level is process-wide).
struct LevelGuard {
  LogLevel saved = wheelbeat::core::logLevel();
  ~LevelGuard() { setLogLevel(saved); }
};

// An argument whose formatting is counted: shows whether log() formatted anything.
struct Counted {
  int* formats;
};

}  // namespace

template <>
struct fmt::formatter<Counted> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const Counted& c, Ctx& ctx) const {
    ++*c.formats;
    return fmt::formatter<std::string_view>::format("counted", ctx);
  }
};

TEST_SUITE("core") {

TEST_CASE("log: the default line is ISO-8601 UTC with ms then the level then one prefix") {
  CHECK(formatLogLine(at(), LogLevel::Warn, "the message") ==
        "2026-11-25T14:03:07.412Z WARN  wheelbeat: the message");
  CHECK(formatLogLine(at(), LogLevel::Info, "x") == "2026-11-25T14:03:07.412Z INFO  wheelbeat: x");
  CHECK(formatLogLine(at(), LogLevel::Debug, "x") == "2026-11-25T14:03:07.412Z DEBUG wheelbeat: x");
  CHECK(formatLogLine(at(), LogLevel::Error, "") == "2026-11-25T14:03:07.412Z ERROR wheelbeat: ");
  // Truncated to the millisecond, never rounded up into the next one.
  CHECK(formatLogLine(at(999'999ns), LogLevel::Info, "x").starts_with("2026-11-25T14:03:07.412Z"));
  CHECK(formatLogLine(chrono::system_clock::time_point{}, LogLevel::Info, "x") ==
        "1970-01-01T00:00:00.000Z INFO  wheelbeat: x");
  // Midnight of a leap day and the end of a year.
  const auto leap = chrono::sys_days{chrono::year{2028} / 2 / 29};
  CHECK(formatLogLine(chrono::time_point_cast<chrono::system_clock::duration>(leap + 5ms),
                      LogLevel::Info, "x")
            .starts_with("2028-02-29T00:00:00.005Z "));
  const auto newYear = chrono::sys_days{chrono::year{2027} / 1 / 1};
  CHECK(formatLogLine(chrono::time_point_cast<chrono::system_clock::duration>(newYear - 1ms),
                      LogLevel::Info, "x")
            .starts_with("2026-12-31T23:59:59.999Z "));
}

TEST_CASE("log: the default sink writes one whole line to stderr") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const int savedErr = ::dup(STDERR_FILENO);
  REQUIRE(savedErr >= 0);
  REQUIRE(::dup2(fds[1], STDERR_FILENO) == STDERR_FILENO);
  const auto previous = wheelbeat::core::setLogSink(nullptr);  // the default sink
  wheelbeat::core::log(LogLevel::Warn, "disk {} is {}", "sda", "slow");
  wheelbeat::core::setLogSink(previous);
  ::dup2(savedErr, STDERR_FILENO);
  ::close(savedErr);
  ::close(fds[1]);
  std::string text;
  char buf[512];
  for (int i = 0; i < 100; ++i) {  // bounded: the writer is closed, so EOF comes
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  const std::string_view rest = " WARN  wheelbeat: disk sda is slow\n";
  REQUIRE_MESSAGE(text.size() == 24 + rest.size(), text);
  CHECK_MESSAGE(wbtest::isLogTimestamp(std::string_view(text).substr(0, 24)), text);
  CHECK(std::string_view(text).substr(24) == rest);
}

TEST_CASE("log: below the level nothing is formatted nor sent") {
  LevelGuard guard;
  LogCapture capture;
  int formats = 0;
  setLogLevel(LogLevel::Info);
  CHECK_FALSE(logEnabled(LogLevel::Debug));
  CHECK(logEnabled(LogLevel::Info));
  CHECK_FALSE(logEnabled(LogLevel::Off));  // Off is a threshold, never a message level
  wheelbeat::core::log(LogLevel::Debug, "{}", Counted{&formats});
  CHECK(formats == 0);
  CHECK(capture.lines().empty());
  wheelbeat::core::log(LogLevel::Info, "{} {}", Counted{&formats}, wheelbeat::core::human(1500us));
  CHECK(formats == 1);
  REQUIRE(capture.lines().size() == 1);
  CHECK(capture.lines()[0].text == "counted 1.5ms");  // a sink gets the bare message
  setLogLevel(LogLevel::Off);
  wheelbeat::core::log(LogLevel::Error, "{}", Counted{&formats});
  CHECK(formats == 1);
  CHECK(capture.lines().size() == 1);
}

TEST_CASE("log: setLogSink returns the previous sink and nullptr restores the default") {
  LogCapture outer;
  int inner = 0;
  auto previous = wheelbeat::core::setLogSink([&](LogLevel, std::string_view) { ++inner; });
  REQUIRE(previous);  // outer's sink
  wheelbeat::core::log(LogLevel::Error, "to inner");
  CHECK(inner == 1);
  CHECK(outer.lines().empty());
  auto mine = wheelbeat::core::setLogSink(std::move(previous));
  REQUIRE(mine);
  wheelbeat::core::log(LogLevel::Error, "to outer");
  CHECK(inner == 1);
  CHECK(outer.lines().size() == 1);
}

}  // TEST_SUITE("core")

TEST_SUITE("core") {

TEST_CASE("log: formatTimestamp is the line's first field") {
  CHECK(wheelbeat::core::formatTimestamp(at()) == "2026-11-25T14:03:07.412Z");
  CHECK(wheelbeat::core::formatTimestamp(at(588ms)) == "2026-11-25T14:03:08.000Z");
}

}  // TEST_SUITE("core")
