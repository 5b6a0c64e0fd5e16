// Sections owned by core/ and the retry budget: "wheel", "log_level", "retry_budget".
#include "sections.h"
#include "values.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <limits>

namespace wheelbeat::config::detail {
namespace {

constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();
// HashedWheelTimer's own limits (core/src/hashed_wheel_timer.cpp): 2^30 slots at most.
constexpr std::int64_t kMaxTicksPerWheel = std::int64_t{1} << 30;

using WheelField = Field<core::WheelOptions>;
constexpr std::array<WheelField, 3> kWheelFields{{
    {"tick", [](Errors& e, const Json& v, const std::string& p,
                core::WheelOptions& o) { return readPositiveDuration(e, v, p, o.tickDuration); }},
    {"ticks_per_wheel",
     [](Errors& e, const Json& v, const std::string& p, core::WheelOptions& o) {
       return readInt(e, v, p, o.ticksPerWheel, 1, kMaxTicksPerWheel,
                      "an integer in 1..1073741824 (rounded up to a power of two)");
     }},
    {"max_pending",
     [](Errors& e, const Json& v, const std::string& p, core::WheelOptions& o) {
       return readInt(e, v, p, o.maxPendingTimeouts, 0, kMaxInt, "an integer >= 0 (0: unlimited)");
     }},
}};

// The largest power of two of slots whose span at `tickNs` fits (0 if not even one does).
std::int64_t maxSlotsFor(std::int64_t tickNs) {
  std::int64_t slots = kMaxTicksPerWheel;
  while (slots > 0 && tickNs >= kMaxInt / slots) slots /= 2;
  return slots;
}

// The wheel spans tick × slots (ticks_per_wheel rounded up to a power of two) in int64
// nanoseconds; the timer refuses a span that overflows. Ticks below 1 ms count as 1 ms there.
void checkWheelSpan(Errors& errors, const std::string& pointer, const Seen& seen,
                    const core::WheelOptions& o) {
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

using BudgetField = Field<tasks::RetryBudgetOptions>;
constexpr std::array<BudgetField, 3> kBudgetFields{{
    {"ratio",
     [](Errors& e, const Json& v, const std::string& p, tasks::RetryBudgetOptions& o) {
       return readNumber(e, v, p, o.ratio, 0.0, 1000.0, "a number in 0..1000");
     }},
    {"min_retries_per_second",
     [](Errors& e, const Json& v, const std::string& p, tasks::RetryBudgetOptions& o) {
       return readInt(e, v, p, o.minRetriesPerSecond, 0, 1'000'000'000,
                      "an integer in 0..1000000000");
     }},
    {"window",
     [](Errors& e, const Json& v, const std::string& p, tasks::RetryBudgetOptions& o) {
       return readDuration(e, v, p, o.window, std::chrono::milliseconds(1));
     }},
}};

}  // namespace

bool readWheel(Errors& errors, const Json& value, const std::string& pointer,
               core::WheelOptions& out) {
  const std::size_t before = errors.size();
  Seen seen;
  if (!readObject<core::WheelOptions>(errors, value, pointer, kWheelFields, out, seen)) {
    return false;
  }
  if (seen.usable("tick") && seen.usable("ticks_per_wheel")) {
    checkWheelSpan(errors, pointer, seen, out);
  }
  return errors.size() == before;
}

bool readLogLevel(Errors& errors, const Json& value, const std::string& pointer,
                  core::LogLevel& out) {
  std::size_t i = 0;
  if (!readEnum(errors, value, pointer, i, {"debug", "info", "warn", "error", "off"})) {
    return false;
  }
  out = static_cast<core::LogLevel>(i);  // the enumerators are 0..4 in this order
  return true;
}

bool readRetryBudget(Errors& errors, const Json& value, const std::string& pointer,
                     tasks::RetryBudgetOptions& out) {
  const std::size_t before = errors.size();
  Seen seen;
  readObject<tasks::RetryBudgetOptions>(errors, value, pointer, kBudgetFields, out, seen);
  return errors.size() == before;
}

std::vector<KeyInfo> wheelKeys() { return keyInfos<core::WheelOptions>(kWheelFields); }
std::vector<KeyInfo> retryBudgetKeys() {
  return keyInfos<tasks::RetryBudgetOptions>(kBudgetFields);
}

}  // namespace wheelbeat::config::detail
