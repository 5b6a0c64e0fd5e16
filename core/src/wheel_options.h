// The wheel's option limits, shared by validate(WheelOptions) (wheel_options.cpp) and the timer's
// construction (hashed_wheel_timer.cpp). Private to core/.
#pragma once

#include <bit>
#include <cstdint>

namespace wheelbeat::core::detail {

inline constexpr std::int64_t kMinTickNs = 1'000'000;  // shorter ticks count as 1 ms
inline constexpr std::int64_t kMaxTicksPerWheel = std::int64_t{1} << 30;

// The slots of the finest level: ticksPerWheel (in range) rounded up to a power of two.
inline int wheelBits(std::int64_t ticksPerWheel) {
  return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(ticksPerWheel - 1)));
}

}  // namespace wheelbeat::core::detail
