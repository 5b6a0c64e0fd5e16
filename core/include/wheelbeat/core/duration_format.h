// Durations as people read them, for log lines and printed output: "3.89s", "310ms", "1.5ms",
// "250us", "12ns", "2m5s", "1h30m". The one human-readable duration format of the library and
// the samples. One exception: a message that rejects a value (an option validator) shows it
// exactly, with formatDurationExact(), so "2999ms" is not shown as "3s" next to "expected >= 3s"
// (config/'s toJson() keeps its own exact format too, which loadString() reads back).
//
// Rules
//   - Below one minute: three significant digits (rounded half up), in the largest of ns, us, ms
//     and s that gives a value >= 1; trailing zeros are dropped: 0 -> "0s", 999ns -> "999ns",
//     1000ns -> "1us", 1'500'000ns -> "1.5ms", 3'893'305'114ns -> "3.89s", 999'600ns -> "1ms".
//   - From one minute (after that rounding): whole minutes and seconds, the seconds rounded
//     half up: 60s -> "1m", 125.4s -> "2m5s", 59.99s -> "1m" (59.99s rounds to 60.0s).
//   - From one hour: whole hours and minutes, the minutes rounded half up: 90m -> "1h30m",
//     2h -> "2h", 7199.9s -> "2h".
//   - Negative: "-" and the magnitude's text ("-5ms"); the most negative value is handled.
// Suffixes are ASCII ("us", not "µs"), so the text greps and pipes well.
// Thread: any (pure functions). Never throw except std::bad_alloc from std::string.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace wheelbeat::core {

// Longest text formatDuration() produces ("-2562047h47m" is 12 characters).
inline constexpr std::size_t kMaxDurationText = 24;

// Writes the text into `out` (at least kMaxDurationText characters) and returns its length.
std::size_t formatDurationTo(std::chrono::nanoseconds d, char* out) noexcept;

[[nodiscard]] std::string formatDuration(std::chrono::nanoseconds d);

// The exact value in the largest unit (h, m, s, ms, us, ns) that divides it: "90s", "2999ms",
// "1500us", "3m", "2h", "-5ms", "0s". For messages that echo a rejected value.
[[nodiscard]] std::string formatDurationExact(std::chrono::nanoseconds d);

// A duration argument for core::log() and fmt: `core::log(LogLevel::Debug, "in {}",
// core::human(delay))` formats it only if the line is logged (no std::string is built before the
// level check, as a formatDuration() argument would be).
struct HumanDuration {
  std::chrono::nanoseconds value;
};
[[nodiscard]] constexpr HumanDuration human(std::chrono::nanoseconds d) noexcept {
  return HumanDuration{d};
}

}  // namespace wheelbeat::core

template <>
struct fmt::formatter<wheelbeat::core::HumanDuration> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const wheelbeat::core::HumanDuration& d, FormatContext& ctx) const {
    char text[wheelbeat::core::kMaxDurationText];
    const std::size_t n = wheelbeat::core::formatDurationTo(d.value, text);
    return fmt::formatter<std::string_view>::format(std::string_view(text, n), ctx);
  }
};
