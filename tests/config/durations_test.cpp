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
    "a duration: a non-negative number with a unit h, m, s, ms, us or ns, or several in that "
    "order (e.g. \"60s\", \"1.5s\", \"1m30s\", \"250us\")";
const std::string kNoUnit = "a duration with a unit, e.g. \"30s\"";

std::vector<std::string> deadlineError(const std::string& json, const std::string& expected) {
  return {"/retry/p/deadline: " + json + " (expected: " + expected + ")"};
}

}  // namespace

TEST_SUITE("config") {

TEST_CASE("durations: every unit is accepted") {
  const std::vector<std::pair<std::string, nanoseconds>> accepted = {
      {R"("60s")", 60s},
      {R"("500ms")", 500ms},
      {R"("2m")", 2min},
      {R"("1h")", 1h},
      {R"("100us")", 100us},
      {R"("5ns")", 5ns},
      {R"("0s")", 0s},
      {R"("007s")", 7s},
      {R"("90m")", 90min},
      {R"("9223372036854ms")", 9223372036854ms},
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

TEST_CASE("durations: decimal and compound strings are accepted") {
  const std::vector<std::pair<std::string, nanoseconds>> accepted = {
      {R"("1.5s")", 1500ms},
      {R"("0.1s")", 100ms},  // what gRPC's JSON (protobuf Duration) writes
      {R"("1m30s")", 90s},
      {R"("250us")", 250us},
      {R"("1h30m")", 90min},
      {R"("1h2m3s4ms5us6ns")", 1h + 2min + 3s + 4ms + 5us + 6ns},
      {R"("1.25h")", 75min},
      {R"("0.000000001s")", 1ns},
      {R"("1.500000000000000000000s")", 1500ms},  // trailing zeros are exact
      {R"("2m0.5s")", 120500ms},
      {R"("1.5ms")", 1500us},
      {R"("0.5us")", 500ns},
      {R"("9223372036.854775807s")", nanoseconds::max()},
  };
  for (const auto& [json, expected] : accepted) {
    CAPTURE(json);
    const auto result = wheelbeat::config::tryLoadString(withDeadline(json));
    REQUIRE(result.ok());
    CHECK(result.config().retry.at("p").deadline == expected);
  }
}

TEST_CASE("durations: negative values are named as negative") {
  for (const std::string json :
       {R"("-1s")", R"("-1.5s")", R"("-1m30s")", R"("-0.5ns")", R"("-9999999999999999999999h")"}) {
    CAPTURE(json);
    CHECK(wbtest::messagesOf(withDeadline(json)) == deadlineError(json, "a non-negative duration"));
  }
}

TEST_CASE("durations: a fraction finer than a nanosecond is refused as such") {
  for (const std::string json :
       {R"("0.5ns")", R"("1.0000000001s")", R"("0.0000000000000000001h")"}) {
    CAPTURE(json);
    CHECK(wbtest::messagesOf(withDeadline(json)) ==
          deadlineError(json, "a whole number of nanoseconds"));
  }
}

TEST_CASE("durations: a bare number is refused for its missing unit") {
  // Integers (once read as milliseconds), fractions, negatives, zero, beyond int64: the unit is
  // what is wrong with each.
  for (const std::string json : {"0", "30", "1500", "1.5", "-1", "-1.5", "18446744073709551615"}) {
    CAPTURE(json);
    CHECK(wbtest::messagesOf(withDeadline(json)) == deadlineError(json, kNoUnit));
  }
  CHECK(wbtest::messagesOf(R"({"heartbeat":{"interval":30}})") ==
        std::vector<std::string>{
            R"(/heartbeat/interval: 30 (expected: a duration with a unit, e.g. "30s"))"});
}

TEST_CASE("durations: malformed strings and other types are rejected") {
  const std::vector<std::string> rejected = {
      R"("+1s")",   R"("60")",    R"("")",      R"("s")",      R"("60 s")", R"(" 60s")",
      R"("60S")",   R"("60sec")", R"("1d")",    R"("0x10s")",  "true",      "null",
      "[]",         "{}",         R"("60s ")",  R"(".5s")",    R"("1.s")",  R"("1..5s")",
      R"("30s1m")", R"("1s1s")",  R"("1ms1s")", R"("1m 30s")", R"("-")",    R"("--1s")",
      R"("1s-1s")", R"("1e3s")",  R"("-x")",
  };
  for (const auto& json : rejected) {
    CAPTURE(json);
    CHECK(wbtest::messagesOf(withDeadline(json)) == deadlineError(json, kDuration));
  }
}

TEST_CASE("durations: a number in exponent form has no unit and is shown as nlohmann writes it") {
  CHECK(wbtest::messagesOf(withDeadline("1e3")) ==
        std::vector<std::string>{"/retry/p/deadline: 1000.0 (expected: " + kNoUnit + ")"});
}

TEST_CASE("durations: beyond int64 nanoseconds is an overflow error") {
  const std::string expected =
      " (expected: a duration of at most 9223372036854775807ns (about 292 years))";
  for (const std::string json :
       {R"("9223372036854775808ns")", R"("2562048h")", R"("9223372036855ms")",
        R"("99999999999999999999999s")", R"("2562047h47m16.854775808s")",
        R"("9223372036.854775808s")", R"("2562047h60m")"}) {
    CAPTURE(json);
    CHECK(wbtest::messagesOf(withDeadline(json)) ==
          std::vector<std::string>{"/retry/p/deadline: " + json + expected});
  }
}

TEST_CASE("durations: written in the largest exact unit and zero as \"0s\"") {
  using wheelbeat::config::detail::durationJson;
  using wheelbeat::config::detail::formatDuration;
  CHECK(formatDuration(60s) == "1m");
  CHECK(formatDuration(90s) == "90s");
  CHECK(formatDuration(2h) == "2h");
  CHECK(formatDuration(1500ms) == "1500ms");
  CHECK(formatDuration(1500us) == "1500us");
  CHECK(formatDuration(7ns) == "7ns");
  CHECK(formatDuration(0s) == "0s");
  CHECK(durationJson(0s).dump() == R"("0s")");
  CHECK(durationJson(500ms).dump() == R"("500ms")");
  CHECK(durationJson(nanoseconds::max()).dump() == R"("9223372036854775807ns")");
}

}  // TEST_SUITE("config")

TEST_SUITE("config") {

TEST_CASE("durations: every duration toJson() writes is read back as the same value") {
  using wheelbeat::config::detail::durationJson;
  for (const nanoseconds d :
       {nanoseconds(0), nanoseconds(1), nanoseconds(1500000), nanoseconds(60'000'000'000),
        nanoseconds(90'000'000'000), nanoseconds::max()}) {
    CAPTURE(d.count());
    const auto result = wheelbeat::config::tryLoadString(withDeadline(durationJson(d).dump()));
    REQUIRE(result.ok());
    CHECK(result.config().retry.at("p").deadline == d);
  }
}

}  // TEST_SUITE("config")
