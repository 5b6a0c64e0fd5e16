// Formatting shared by the option validators of tasks/ (not installed).
#pragma once

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <string>

namespace wheelbeat::tasks::detail {

// A duration in the largest unit that shows it exactly: 500ms, 1s, 2min, 1500us, -5ms; 0 is "0s".
// The unit suffixes are fmt's chrono ones (µs for microseconds).
inline std::string formatDuration(std::chrono::nanoseconds d) {
  using namespace std::chrono;
  const auto n = d.count();
  if (n == 0) return fmt::format("{}", seconds(0));
  if (n % duration_cast<nanoseconds>(hours(1)).count() == 0) {
    return fmt::format("{}", duration_cast<hours>(d));
  }
  if (n % duration_cast<nanoseconds>(minutes(1)).count() == 0) {
    return fmt::format("{}", duration_cast<minutes>(d));
  }
  if (n % 1'000'000'000 == 0) return fmt::format("{}", duration_cast<seconds>(d));
  if (n % 1'000'000 == 0) return fmt::format("{}", duration_cast<milliseconds>(d));
  if (n % 1'000 == 0) return fmt::format("{}", duration_cast<microseconds>(d));
  return fmt::format("{}", d);
}

}  // namespace wheelbeat::tasks::detail
