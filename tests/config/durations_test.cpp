// Durations: the accepted forms, the rejected ones, and how toJson() writes them.
#include "helpers.h"
#include "values.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

namespace {

// The deadline of a policy takes any duration >= 0, so it shows the parser alone.
std::string withDeadline(const std::string& value) {
  return R"({"retry":{"p":{"deadline":)" + value + "}}}";
}

const std::string kDuration =
    "a duration: a non-negative integer with a unit h, m, s, ms, us or ns (e.g. \"60s\", "
    "\"500ms\") or a non-negative integer of milliseconds";

}  // namespace

TEST_SUITE("config") {

TEST_CASE("durations: every unit and plain milliseconds are accepted") {
  const std::vector<std::pair<std::string, nanoseconds>> accepted = {
      {R"("60s")", 60s},
      {R"("500ms")", 500ms},
      {R"("2m")", 2min},
      {R"("1h")", 1h},
      {R"("100us")", 100us},
      {R"("5ns")", 5ns},
      {R"("0s")", 0s},
      {R"("007s")", 7s},
      {"0", 0ms},
      {"1500", 1500ms},
      {R"("90m")", 90min},
      {"9223372036854", 9223372036854ms},
      {R"("2562047h")", 2562047h},
      {R"("9223372036854775807ns")", nanoseconds::max()},
  };
  for (const auto& [json, expected] : accepted) {
    CAPTURE(json);
    const auto result = wheelbeat::config::tryLoadString(withDeadline(json));
    REQUIRE(result.ok());
    CHECK(result.config().retry.at("p").deadline == expected);
  }
}

TEST_CASE("durations: fractions negatives unknown units and unitless strings are rejected") {
  const std::vector<std::string> rejected = {
      R"("1.5s")",  "1.5",       "-1",        R"("-1s")", R"("+1s")",   R"("60")",   R"("")",
      R"("s")",     R"("60 s")", R"(" 60s")", R"("60S")", R"("60sec")", R"("1d")",   R"("1h30m")",
      R"("0x10s")", "true",      "null",      "[]",       "{}",         R"("60s ")",
  };
  for (const auto& json : rejected) {
    CAPTURE(json);
    CHECK(
        wbtest::messagesOf(withDeadline(json)) ==
        std::vector<std::string>{"/retry/p/deadline: " + json + " (expected: " + kDuration + ")"});
  }
}

TEST_CASE("durations: a number in exponent form is a fraction and shown as nlohmann writes it") {
  CHECK(wbtest::messagesOf(withDeadline("1e3")) ==
        std::vector<std::string>{"/retry/p/deadline: 1000.0 (expected: " + kDuration + ")"});
}

TEST_CASE("durations: beyond int64 nanoseconds is an overflow error") {
  const std::string expected =
      " (expected: a duration of at most 9223372036854775807ns (about 292 years))";
  for (const std::string json : {R"("9223372036854775808ns")", R"("2562048h")", "9223372036855",
                                 R"("99999999999999999999999s")", "18446744073709551615"}) {
    CAPTURE(json);
    CHECK(wbtest::messagesOf(withDeadline(json)) ==
          std::vector<std::string>{"/retry/p/deadline: " + json + expected});
  }
}

TEST_CASE("durations: written in the largest exact unit and zero as 0") {
  using wheelbeat::config::detail::durationJson;
  using wheelbeat::config::detail::formatDuration;
  CHECK(formatDuration(60s) == "1m");
  CHECK(formatDuration(90s) == "90s");
  CHECK(formatDuration(2h) == "2h");
  CHECK(formatDuration(1500ms) == "1500ms");
  CHECK(formatDuration(1500us) == "1500us");
  CHECK(formatDuration(7ns) == "7ns");
  CHECK(formatDuration(0s) == "0s");
  CHECK(durationJson(0s).dump() == "0");
  CHECK(durationJson(500ms).dump() == R"("500ms")");
  CHECK(durationJson(nanoseconds::max()).dump() == R"("9223372036854775807ns")");
}

}  // TEST_SUITE("config")
