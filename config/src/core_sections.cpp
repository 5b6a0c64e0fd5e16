// Sections owned by core/ and the retry budget: "wheel", "log_level", "retry_budget".
#include "sections.h"

#include <fmt/format.h>

#include <array>
#include <bit>

namespace wheelbeat::config::detail {
namespace {

using W = core::WheelOptions;
using B = tasks::RetryBudgetOptions;

// HashedWheelTimer's own limits (core/src/hashed_wheel_timer.cpp): 2^30 slots at most.
constexpr std::int64_t kMaxTicksPerWheel = std::int64_t{1} << 30;

constexpr IntCodec<std::int64_t> kTicks{
    1, kMaxTicksPerWheel, "an integer in 1..1073741824 (rounded up to a power of two)"};
constexpr IntCodec<std::int64_t> kMaxPending{0, kMaxInt, "an integer >= 0 (0: unlimited)"};

constexpr std::array<Field<W>, 3> kWheelFields{{
    field<W, &W::tickDuration, kPositiveDuration>(
        "tick", "Length of one tick, > 0 (below 1ms the timer uses 1ms and warns)."),
    field<W, &W::ticksPerWheel, kTicks>(
        "ticks_per_wheel", "Slots of the finest wheel level, rounded up to a power of two."),
    field<W, &W::maxPendingTimeouts, kMaxPending>(
        "max_pending", "Timeouts pending at most before newTimeout() is rejected; 0 = unlimited."),
}};

// The largest power of two of slots whose span at `tickNs` fits (0 if not even one does).
std::int64_t maxSlotsFor(std::int64_t tickNs) {
  std::int64_t slots = kMaxTicksPerWheel;
  while (slots > 0 && tickNs >= kMaxInt / slots) slots /= 2;
  return slots;
}

// The wheel spans tick × slots (ticks_per_wheel rounded up to a power of two) in int64
// nanoseconds; the timer refuses a span that overflows. Ticks below 1 ms count as 1 ms there.
void checkWheelSpan(Errors& errors, const std::string& pointer, const Seen& seen, const W& o) {
  if (!seen.usable("tick") || !seen.usable("ticks_per_wheel")) return;
  const auto slots =
      static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(o.ticksPerWheel)));
  const std::int64_t tickNs = std::max<std::int64_t>(o.tickDuration.count(), 1'000'000);
  const std::int64_t limit = kMaxInt / slots;
  if (tickNs < limit) return;
  blame(errors, pointer, seen,
        {"tick",
         fmt::format("< {} for {} ticks per wheel", formatDuration(nanoseconds(limit)), slots)},
        {"ticks_per_wheel", fmt::format("<= {} for a tick of {}", maxSlotsFor(tickNs),
                                        formatDuration(o.tickDuration))});
}

constexpr NumberCodec kRatio{0.0, 1000.0, false, "a number in 0..1000"};
constexpr IntCodec<std::int64_t> kMinRetries{0, 1'000'000'000, "an integer in 0..1000000000"};
constexpr DurationCodec kBudgetWindow{std::chrono::milliseconds(1)};

constexpr std::array<Field<B>, 3> kBudgetFields{{
    field<B, &B::ratio, kRatio>("ratio", "Tokens (retries) earned per original request."),
    field<B, &B::minRetriesPerSecond, kMinRetries>(
        "min_retries_per_second", "Retries always allowed per second (the reserve)."),
    field<B, &B::window, kBudgetWindow>("window", "How long an earned token can be spent, >= 1ms."),
}};

}  // namespace

constexpr Section<W> kWheelSection{
    kWheelFields, &checkWheelSpan,
    "tick * ticks_per_wheel (rounded up to a power of two) fits in int64 nanoseconds"};
constexpr Section<B> kRetryBudgetSection{kBudgetFields};
// The enumerators are 0..4 in this order.
constexpr EnumCodec<core::LogLevel, 5> kLogLevel{
    {"debug", "info", "warn", "error", "off"},
    {core::LogLevel::Debug, core::LogLevel::Info, core::LogLevel::Warn, core::LogLevel::Error,
     core::LogLevel::Off}};

}  // namespace wheelbeat::config::detail
