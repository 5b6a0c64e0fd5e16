// Sections owned by core/ and the retry budget: "wheel", "log_level", "retry_budget".
#include "sections.h"

#include <array>

namespace wheelbeat::config::detail {
namespace {

using W = core::WheelOptions;
using B = tasks::RetryBudgetOptions;

constexpr IntCodec<std::int64_t> kMaxPending{0, kMaxInt, "an integer >= 0 (0: unlimited)"};

constexpr Field<W> kWheelFields[] = {
    field<W, &W::tickDuration, kDuration>(
        "tick", "tickDuration",
        "Length of one tick, > 0 (below 1ms the timer uses 1ms and warns)."),
    field<W, &W::ticksPerWheel, kInt64>(
        "ticks_per_wheel", "ticksPerWheel",
        "Slots of the finest wheel level, 1..1073741824, rounded up to a power of two."),
    field<W, &W::maxPendingTimeouts, kMaxPending>(
        "max_pending", "maxPendingTimeouts",
        "Timeouts pending at most before newTimeout() is rejected; 0 = unlimited."),
};

constexpr Field<B> kBudgetFields[] = {
    field<B, &B::ratio, kNumber>("ratio", "ratio",
                                 "Tokens (retries) earned per original request, 0..1000."),
    field<B, &B::minRetriesPerSecond, kInt64>(
        "min_retries_per_second", "minRetriesPerSecond",
        "Retries always allowed per second (the reserve), 0..1000000000."),
    field<B, &B::window, kDuration>("window", "window",
                                    "How long an earned token can be spent, >= 1ms."),
};

}  // namespace

// core::validate(WheelOptions): tick > 0, ticks_per_wheel in range, and the span that fits.
constexpr Section<W> kWheelSection{
    kWheelFields, [](const W& o) { core::validate(o); },
    "tick * ticks_per_wheel (rounded up to a power of two) fits in int64 nanoseconds"};
constexpr Section<B> kRetryBudgetSection{kBudgetFields, [](const B& o) { tasks::validate(o); }};
// The enumerators are 0..4 in this order.
constexpr EnumCodec<core::LogLevel, 5> kLogLevel{
    {"debug", "info", "warn", "error", "off"},
    {core::LogLevel::Debug, core::LogLevel::Info, core::LogLevel::Warn, core::LogLevel::Error,
     core::LogLevel::Off}};

}  // namespace wheelbeat::config::detail
