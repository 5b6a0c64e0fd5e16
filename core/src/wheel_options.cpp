// validate(WheelOptions): the wheel's rules, named as the option error says them.
#include "wheel_options.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/option_error.h>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

namespace wheelbeat::core {
namespace {

using detail::kMaxTicksPerWheel;
using detail::kMinTickNs;
using detail::wheelBits;

[[noreturn]] void reject(std::string field, std::string value, std::string expected,
                         std::string other = {}, std::string otherExpected = {}) {
  throw OptionError("WheelOptions", std::move(field), std::move(value), std::move(expected),
                    std::move(other), std::move(otherExpected));
}

// The largest power of two of slots whose span at `tickNs` fits (0 if not even one does).
std::int64_t maxSlotsFor(std::int64_t tickNs) {
  std::int64_t slots = kMaxTicksPerWheel;
  while (slots > 0 && tickNs >= std::numeric_limits<std::int64_t>::max() / slots) slots /= 2;
  return slots;
}

}  // namespace

void validate(const WheelOptions& o) {
  if (o.tickDuration.count() <= 0)
    reject("tickDuration", formatDurationExact(o.tickDuration), "> 0");
  if (o.ticksPerWheel <= 0 || o.ticksPerWheel > kMaxTicksPerWheel) {
    reject("ticksPerWheel", std::to_string(o.ticksPerWheel),
           fmt::format("1..{} (rounded up to a power of two)", kMaxTicksPerWheel));
  }
  // The wheel spans tick × slots in int64 nanoseconds; ticks below 1 ms count as 1 ms.
  const std::int64_t slots = std::int64_t{1} << wheelBits(o.ticksPerWheel);
  const std::int64_t tickNs = std::max(o.tickDuration.count(), kMinTickNs);
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / slots;
  if (tickNs >= limit) {
    reject("tickDuration", formatDurationExact(o.tickDuration),
           fmt::format("< {} for {} ticks per wheel",
                       formatDurationExact(std::chrono::nanoseconds(limit)), slots),
           "ticksPerWheel",
           fmt::format("<= {} for a tick of {}", maxSlotsFor(tickNs),
                       formatDurationExact(o.tickDuration)));
  }
}

}  // namespace wheelbeat::core
