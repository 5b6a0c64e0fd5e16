// Readers of single values (private to config/). Each reads `value` into `out` and returns true,
// or reports one error at `pointer` and returns false, leaving `out` unchanged.
#pragma once

#include "reader.h"

#include <wheelbeat/net/options.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wheelbeat::config::detail {

using std::chrono::nanoseconds;

// The expectation of a value that is not a duration at all.
inline constexpr std::string_view kDurationExpected =
    "a duration: a non-negative number with a unit h, m, s, ms, us or ns, or several in that "
    "order (e.g. \"60s\", \"1.5s\", \"1m30s\", \"250us\")";
// The expectation of a bare JSON number where a duration goes: its unit is missing.
inline constexpr std::string_view kDurationNoUnit = "a duration with a unit, e.g. \"30s\"";

// Why parseDuration() found no duration.
enum class DurationError { None, Malformed, NoUnit, Negative, Overflow, Inexact };

// A duration: a string of one or more terms "<number><unit>" — number = digits with an optional
// fraction ("1.5"), unit = h, m, s, ms, us or ns, each unit at most once and in that order
// ("1h30m", "1m0.5s"). nullopt otherwise, with *why set: NoUnit for any JSON number (30 says
// neither seconds nor milliseconds), Negative for a string that would be one with its "-"
// removed, Overflow beyond int64 nanoseconds (~292 years), Inexact for a fraction finer than a
// nanosecond ("0.5ns"), Malformed for anything else (unknown units, spaces, exponents, "30").
[[nodiscard]] std::optional<nanoseconds> parseDuration(const Json& value,
                                                       DurationError* why = nullptr);
// The largest unit that shows `d` exactly ("1m", "500ms", "1500us"); 0 is "0s". Never negative
// for what the loader accepts; a negative value is written in nanoseconds ("-5ns").
[[nodiscard]] std::string formatDuration(nanoseconds d);
// What toJson() writes: formatDuration(d) as a string ("0s" for zero), which parseDuration() reads
// back.
[[nodiscard]] Json durationJson(nanoseconds d);

// A duration >= `min`; readPositiveDuration: > 0.
bool readDuration(Errors& errors, const Json& value, const std::string& pointer, nanoseconds& out,
                  nanoseconds min = nanoseconds(0));
bool readPositiveDuration(Errors& errors, const Json& value, const std::string& pointer,
                          nanoseconds& out);

// An integer in [lo, hi]; `expected` describes the range ("an integer in 1..65535").
bool readInt(Errors& errors, const Json& value, const std::string& pointer, std::int64_t& out,
             std::int64_t lo, std::int64_t hi, std::string_view expected);
bool readUnsigned(Errors& errors, const Json& value, const std::string& pointer, std::uint64_t& out,
                  std::uint64_t lo, std::uint64_t hi, std::string_view expected);
// readUnsigned() into a std::size_t.
bool readSize(Errors& errors, const Json& value, const std::string& pointer, std::size_t& out,
              std::uint64_t lo, std::uint64_t hi, std::string_view expected);
// A finite number (integer or not) in [lo, hi].
bool readNumber(Errors& errors, const Json& value, const std::string& pointer, double& out,
                double lo, double hi, std::string_view expected);
bool readBool(Errors& errors, const Json& value, const std::string& pointer, bool& out);

// One of `names` (exact, lower case); `out` is the index of the match.
bool readEnum(Errors& errors, const Json& value, const std::string& pointer, std::size_t& out,
              std::span<const std::string_view> names);
// "one of \"a\", \"b\"".
[[nodiscard]] std::string enumExpected(std::span<const std::string_view> names);

// "host:port", "[v6]:port"; the port in [minPort, 65535]. Host: non-empty, no whitespace.
bool readEndpoint(Errors& errors, const Json& value, const std::string& pointer, net::Endpoint& out,
                  std::uint16_t minPort);
// What readEndpoint() expects.
[[nodiscard]] std::string endpointExpected(std::uint16_t minPort);
[[nodiscard]] std::string formatEndpoint(const net::Endpoint& e);

}  // namespace wheelbeat::config::detail
