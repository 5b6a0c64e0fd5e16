// core::formatDuration: three significant digits below a minute, "XmYs" below an hour, "XhYm"
// above; each edge of the rules in the header, exactly.
#include <wheelbeat/core/duration_format.h>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

using namespace std::chrono_literals;
using std::chrono::nanoseconds;
using wheelbeat::core::formatDuration;

TEST_SUITE("core") {

TEST_CASE("formatDuration: zero and the nanosecond range") {
  CHECK(formatDuration(0ns) == "0s");
  CHECK(formatDuration(1ns) == "1ns");
  CHECK(formatDuration(12ns) == "12ns");
  CHECK(formatDuration(999ns) == "999ns");
}

TEST_CASE("formatDuration: microseconds and milliseconds with three significant digits") {
  CHECK(formatDuration(1us) == "1us");
  CHECK(formatDuration(1001ns) == "1us");     // 1.001us: a 4th digit is rounded away
  CHECK(formatDuration(1005ns) == "1.01us");  // half up
  CHECK(formatDuration(250us) == "250us");
  CHECK(formatDuration(999'499ns) == "999us");
  CHECK(formatDuration(999'500ns) == "1ms");  // rounds up into the next unit
  CHECK(formatDuration(1500us) == "1.5ms");
  CHECK(formatDuration(1050us) == "1.05ms");  // an inner zero stays
  CHECK(formatDuration(12'345'678ns) == "12.3ms");
  CHECK(formatDuration(310ms) == "310ms");
}

TEST_CASE("formatDuration: seconds up to the minute") {
  CHECK(formatDuration(1s) == "1s");
  CHECK(formatDuration(3'893'305'114ns) == "3.89s");  // the "read idle 3893305114ns"
  CHECK(formatDuration(1500ms) == "1.5s");
  CHECK(formatDuration(59'900ms) == "59.9s");
  CHECK(formatDuration(59'949ms) == "59.9s");
  CHECK(formatDuration(59'990ms) == "1m");  // 60.0s after rounding: shown as a minute
}

TEST_CASE("formatDuration: minutes and seconds below an hour") {
  CHECK(formatDuration(60s) == "1m");
  CHECK(formatDuration(90s) == "1m30s");
  CHECK(formatDuration(125s) == "2m5s");
  CHECK(formatDuration(125'400ms) == "2m5s");  // seconds rounded half up
  CHECK(formatDuration(125'500ms) == "2m6s");
  CHECK(formatDuration(3599s) == "59m59s");
  CHECK(formatDuration(3'599'500ms) == "1h");  // 3600s after rounding
}

TEST_CASE("formatDuration: hours and minutes") {
  CHECK(formatDuration(1h) == "1h");
  CHECK(formatDuration(90min) == "1h30m");
  CHECK(formatDuration(2h) == "2h");
  CHECK(formatDuration(7199s) == "2h");  // 119.98 minutes, rounded half up
  CHECK(formatDuration(49h + 1min) == "49h1m");
  CHECK(formatDuration(nanoseconds::max()) == "2562047h47m");  // 2562047h47m16.85s: minutes rounded
}

TEST_CASE("formatDuration: negative durations") {
  CHECK(formatDuration(-5ms) == "-5ms");
  CHECK(formatDuration(-1ns) == "-1ns");
  CHECK(formatDuration(-1500us) == "-1.5ms");
  CHECK(formatDuration(-90s) == "-1m30s");
  // The magnitude of the most negative value does not fit in int64_t.
  CHECK(formatDuration(nanoseconds::min()) == "-2562047h47m");
}

TEST_CASE("formatDuration: human() formats lazily the same text through fmt") {
  using wheelbeat::core::human;
  CHECK(fmt::format("{}", human(1500us)) == "1.5ms");
  CHECK(fmt::format("[{:>7}]", human(310ms)) == "[  310ms]");  // string_view's format spec
  CHECK(fmt::format("{}", human(nanoseconds::min())).size() <= wheelbeat::core::kMaxDurationText);
}

}  // TEST_SUITE("core")

TEST_SUITE("core") {

TEST_CASE("formatDurationExact: the largest unit that divides exactly") {
  using wheelbeat::core::formatDurationExact;
  CHECK(formatDurationExact(0ns) == "0s");
  CHECK(formatDurationExact(2999ms) == "2999ms");
  CHECK(formatDurationExact(1500us) == "1500us");
  CHECK(formatDurationExact(1999ns) == "1999ns");
  CHECK(formatDurationExact(90s) == "90s");
  CHECK(formatDurationExact(3min) == "3m");
  CHECK(formatDurationExact(2h) == "2h");
  CHECK(formatDurationExact(-5ms) == "-5ms");
  CHECK(formatDurationExact(nanoseconds::min()) == "-9223372036854775808ns");
}

}  // TEST_SUITE("core")
